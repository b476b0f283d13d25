// fluxjac — a real type that counts its FP64 operations (the work model's instrument, RAJAPerf's habit of a
// kernel declaring its own work).
//
// CountingReal wraps a double and computes exactly what double computes, operation by operation, while it
// counts each arithmetic operation by kind. Running a variant's own lane work on it (Dual<N, CountingReal>,
// ExprDual<N, CountingReal>, the hand Jacobian on CountingReal) counts the FP64 work of that very code, so the
// figure follows the code and CI checks it (tests/test_work_model.cpp). docs/performance.md, "Work model", sets
// the counts beside Nsight Compute's.
//
// What counts:
// - Every add, subtract, multiply, divide, square root and comparison whose operands are not all literals.
//   A literal is a double constant of the source converted to CountingReal (0.5, kGammaMinusOne, the zero
//   derivatives of a constant, the identity seeds of direct seeding); an operation on literals only is folded
//   by the compiler, so it is not counted and its result is again a literal. Negation and copies are free
//   (operand modifiers and register moves on a GPU).
// - A division whose numerator is the literal 1 is a reciprocal: GPUs run a shorter sequence for it.
// - With Reuse::kOncePerCall, an operation repeated on the same operands within one count is done once, as a
//   compiler's common-subexpression elimination and loop-invariant code motion leave it for one thread.
//   Operands are matched by identity (each run-time value gets one when it is made), never by equal bits. The
//   exception is a loop whose passes the GPU runs in full (dn_2's five, measured): begin_unhoisted_pass() starts
//   each pass with nothing done.
// - `fused` counts the multiplies that contraction removes: those whose every use is an add or subtract that
//   can absorb it (nvcc fuses a product into each such add, duplicating it where it has several). Each such add
//   becomes one FMA; the FP64 instruction estimate is add + mul - fused.
// Branches run as in C++: a lane counts the path its data take (the entropy fix only where it fires).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "types.hpp"

namespace fluxjac {

/// \brief FP64 operations by kind.
struct OpCounts {
  std::uint64_t add = 0;         ///< additions and subtractions
  std::uint64_t mul = 0;         ///< multiplications
  std::uint64_t div = 0;         ///< divisions a / b (a not the literal 1)
  std::uint64_t reciprocal = 0;  ///< divisions 1 / b
  std::uint64_t sqrt = 0;        ///< square roots
  std::uint64_t compare = 0;     ///< comparisons (the sign test of |x| included)
  std::uint64_t fused = 0;       ///< multiplies absorbed into FMAs by contraction (all their uses are adds)

  OpCounts& operator+=(const OpCounts& o) {
    add += o.add;
    mul += o.mul;
    div += o.div;
    reciprocal += o.reciprocal;
    sqrt += o.sqrt;
    compare += o.compare;
    fused += o.fused;
    return *this;
  }
  friend OpCounts operator+(OpCounts a, const OpCounts& b) { return a += b; }
  friend bool operator==(const OpCounts& a, const OpCounts& b) {
    return a.add == b.add && a.mul == b.mul && a.div == b.div && a.reciprocal == b.reciprocal && a.sqrt == b.sqrt &&
           a.compare == b.compare && a.fused == b.fused;
  }
  friend bool operator!=(const OpCounts& a, const OpCounts& b) { return !(a == b); }
};

/// \brief What a division or square root costs on a GPU: the FP64 instructions of its fast path and their
/// flops (an FMA counts two). From the SASS of nvcc 13.0 for sm_90 (`a / b`, `1.0 / b`, `sqrt(b)` on
/// doubles): each starts with one MUFU.RCP64H or MUFU.RSQ64H approximation (not an FP64-pipe instruction,
/// not counted) refined by Newton steps; the slow path (denormals, overflow) is a called subroutine that
/// typical data never take.
struct Fp64Sequence {
  int fma;
  int mul;
  constexpr int instructions() const { return fma + mul; }
  constexpr int flops() const { return 2 * fma + mul; }
};
inline constexpr Fp64Sequence kDivisionSequence{7, 1};    // 8 instructions, 15 flops
inline constexpr Fp64Sequence kReciprocalSequence{5, 0};  // 5 instructions, 10 flops
inline constexpr Fp64Sequence kSquareRootSequence{5, 3};  // 8 instructions, 13 flops

/// \brief FP64 flops, in the unit of the device probe's FMA-loop rate: an add or a multiply is one flop (so a
/// multiply-add pair is two, as one FMA is), a division or square root the flops of its GPU sequence.
/// Comparisons are not flops.
constexpr double fp64_flops(const OpCounts& c) {
  return static_cast<double>(c.add + c.mul) + static_cast<double>(c.div) * kDivisionSequence.flops() +
         static_cast<double>(c.reciprocal) * kReciprocalSequence.flops() +
         static_cast<double>(c.sqrt) * kSquareRootSequence.flops();
}

/// \brief Estimated FP64 instructions (DADD, DMUL, DFMA), the unit of Nsight Compute's instruction counts:
/// adds and multiplies less the multiplies contraction absorbs, divisions and square roots as the
/// instructions of their sequences.
constexpr double fp64_instructions(const OpCounts& c) {
  return static_cast<double>(c.add + c.mul - c.fused) + static_cast<double>(c.div) * kDivisionSequence.instructions() +
         static_cast<double>(c.reciprocal) * kReciprocalSequence.instructions() +
         static_cast<double>(c.sqrt) * kSquareRootSequence.instructions();
}

/// \brief Which repeated operations count (see the top of this file). kEvery: every operation as the source
/// writes it. kOncePerCall: once per count_operations call, which stands for one GPU thread's work.
enum class Reuse { kEvery, kOncePerCall };

namespace counting_detail {

enum class Op : int { kAdd, kSub, kMul, kDiv, kSqrt, kNeg, kLess, kLessEqual };

/// An operand as the reuse table sees it: a run-time value by its identity, a literal by its bits.
struct OperandKey {
  bool literal;
  std::uint64_t payload;
  bool operator==(const OperandKey& o) const { return literal == o.literal && payload == o.payload; }
  bool operator<(const OperandKey& o) const { return literal != o.literal ? literal < o.literal : payload < o.payload; }
};

struct OperationKey {
  Op op;
  OperandKey a, b;
  bool operator==(const OperationKey& o) const { return op == o.op && a == o.a && b == o.b; }
};

struct OperationKeyHash {
  std::size_t operator()(const OperationKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.op) * 0x9E3779B97F4A7C15ull;
    for (const OperandKey& operand : {k.a, k.b})
      h = (h ^ (operand.payload + (operand.literal ? 0x632BE59BD9B4E019ull : 0))) * 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

/// What an operation produced: the identity of its result and the multiply it is a product of (0 if none).
struct Produced {
  std::uint64_t id;
  std::uint64_t product;
};

/// How the adds and the other operations of one count use a product (a counted multiply).
struct ProductUses {
  int fused = 0;  ///< adds that absorb it
  int other = 0;  ///< any other use: it must be computed on its own
};

/// Per host thread: the counters, whether to reuse, what was done in the current count and how its products
/// are used, and the source of value identities (never reset, so that values made before a count, such as the
/// lane inputs, keep identities distinct from those made in it).
struct CountingState {
  OpCounts counts;
  Reuse reuse = Reuse::kEvery;
  std::unordered_map<OperationKey, Produced, OperationKeyHash> done;  ///< kOncePerCall: what each operation made
  std::uint64_t first_id = 1;                                         ///< the first identity made in the current count
  std::vector<ProductUses> uses;  ///< by identity - first_id: the uses of each product made in the current count
  std::uint64_t next_id = 1;

  /// The uses of a product of the current count; nullptr for one made before it (no product to this count).
  ProductUses* uses_of(std::uint64_t product) {
    if (product < first_id) return nullptr;
    if (product - first_id >= uses.size()) uses.resize(product - first_id + 1);
    return &uses[product - first_id];
  }
};

inline CountingState& state() {
  static thread_local CountingState counting;
  return counting;
}

}  // namespace counting_detail

class CountingReal;

/// \brief A pass of a loop that the GPU runs in full each time (assembly/lane_work.hpp): the reuse table of
/// Reuse::kOncePerCall forgets what was done before it, so that the pass counts in full.
FLUXJAC_HD inline void begin_unhoisted_pass(const CountingReal&) {
#if !defined(__CUDA_ARCH__)
  counting_detail::state().done.clear();
#endif
}

/// \brief Runs `work` and returns the operations that CountingReal did meanwhile on this thread. Counts nest (an
/// outer count includes its inner ones); contraction is tracked within each count.
template <class Work>
OpCounts count_operations(Work&& work, Reuse reuse = Reuse::kEvery) {
  counting_detail::CountingState& counting = counting_detail::state();
  counting_detail::CountingState outer;
  std::swap(outer, counting);
  counting.first_id = counting.next_id = outer.next_id;
  counting.reuse = reuse;
  work();
  OpCounts inner = counting.counts;
  for (const counting_detail::ProductUses& uses : counting.uses)
    if (uses.fused > 0 && uses.other == 0) ++inner.fused;
  outer.next_id = counting.next_id;
  outer.counts += inner;
  std::swap(outer, counting);
  return inner;
}

/// \brief A double that counts its FP64 operations (see the top of this file for what counts).
class CountingReal {
 public:
  /// A literal zero (the derivatives of a constant).
  CountingReal() = default;
  /// A literal: a constant of the source.
  FLUXJAC_HD constexpr CountingReal(double x) : value_(x) {}  // NOLINT(google-explicit-constructor)
  /// \brief A run-time value (an input of the lane work): operations on it are counted.
  static CountingReal input(double x) { return {x, false, {counting_detail::state().next_id++, 0}}; }

  FLUXJAC_HD double value() const { return value_; }
  FLUXJAC_HD bool is_literal() const { return literal_; }
  FLUXJAC_HD explicit operator double() const { return value_; }

  FLUXJAC_HD friend CountingReal operator+(const CountingReal& a, const CountingReal& b) {
    return operation(counting_detail::Op::kAdd, a, b, a.value_ + b.value_);
  }
  FLUXJAC_HD friend CountingReal operator-(const CountingReal& a, const CountingReal& b) {
    return operation(counting_detail::Op::kSub, a, b, a.value_ - b.value_);
  }
  FLUXJAC_HD friend CountingReal operator*(const CountingReal& a, const CountingReal& b) {
    return operation(counting_detail::Op::kMul, a, b, a.value_ * b.value_);
  }
  FLUXJAC_HD friend CountingReal operator/(const CountingReal& a, const CountingReal& b) {
    return operation(counting_detail::Op::kDiv, a, b, a.value_ / b.value_);
  }
  /// \brief a / b given inverse = reciprocal(b) (ad/device_math.hpp): counted as the one multiply the GPU does
  /// (a * inverse), valued as the host's IEEE quotient, so that values stay those of double on the host.
  FLUXJAC_HD friend CountingReal quotient(const CountingReal& a, const CountingReal& b, const CountingReal& inverse) {
    return operation(counting_detail::Op::kMul, a, inverse, a.value_ / b.value_);
  }
  /// a / b as divide() runs it on the device (ad/device_math.hpp): a reciprocal and a multiply, valued as the host's
  /// IEEE quotient.
  FLUXJAC_HD friend CountingReal divide(const CountingReal& a, const CountingReal& b) {
    return quotient(a, b, CountingReal(1.0) / b);
  }
  FLUXJAC_HD friend CountingReal divide(const CountingReal& a, double b) { return divide(a, CountingReal(b)); }
  /// Free: a sign flip is an operand modifier (and -(a b) + c is still one FMA).
  FLUXJAC_HD friend CountingReal operator-(const CountingReal& a) {
    return operation(counting_detail::Op::kNeg, a, 0.0, -a.value_);
  }
  FLUXJAC_HD friend CountingReal sqrt(const CountingReal& a) {
    return operation(counting_detail::Op::kSqrt, a, 0.0, ::sqrt(a.value_));
  }
  /// The convention of abs(double) in ad/dual.hpp: a sign test, then the value or its negation.
  FLUXJAC_HD friend CountingReal abs(const CountingReal& a) { return a < 0.0 ? -a : a; }
  FLUXJAC_HD friend CountingReal value_of(const CountingReal& a) { return a; }

  FLUXJAC_HD CountingReal& operator+=(const CountingReal& b) { return *this = *this + b; }
  FLUXJAC_HD CountingReal& operator-=(const CountingReal& b) { return *this = *this - b; }
  FLUXJAC_HD CountingReal& operator*=(const CountingReal& b) { return *this = *this * b; }
  FLUXJAC_HD CountingReal& operator/=(const CountingReal& b) { return *this = *this / b; }

  FLUXJAC_HD friend bool operator<(const CountingReal& a, const CountingReal& b) {
    operation(counting_detail::Op::kLess, a, b, 0.0);
    return a.value_ < b.value_;
  }
  FLUXJAC_HD friend bool operator>(const CountingReal& a, const CountingReal& b) { return b < a; }
  FLUXJAC_HD friend bool operator<=(const CountingReal& a, const CountingReal& b) {
    operation(counting_detail::Op::kLessEqual, a, b, 0.0);
    return a.value_ <= b.value_;
  }
  FLUXJAC_HD friend bool operator>=(const CountingReal& a, const CountingReal& b) { return b <= a; }

 private:
  FLUXJAC_HD constexpr CountingReal(double x, bool literal, counting_detail::Produced made)
      : value_(x), literal_(literal), id_(made.id), product_(made.product) {}

  /// \brief The result of one operation: folded if its operands are literals, reused if done before in this
  /// count (Reuse::kOncePerCall), otherwise counted and given a new identity.
  FLUXJAC_HD static CountingReal operation(counting_detail::Op op, const CountingReal& a, const CountingReal& b,
                                           double result) {
    const bool unary = op == counting_detail::Op::kNeg || op == counting_detail::Op::kSqrt;
    if (a.literal_ && (unary || b.literal_)) return result;
#if defined(__CUDA_ARCH__)
    return {result, false, {0, 0}};  // device code never counts (and never runs on CountingReal)
#else
    return {result, false, record(op, a, unary ? CountingReal() : b)};
#endif
  }

  /// \brief Host side of operation(): the reuse table, the counters and the uses of products; returns the
  /// identity of the result and the multiply it is a product of.
  static counting_detail::Produced record(counting_detail::Op op, const CountingReal& a, const CountingReal& b) {
    using counting_detail::Op;
    counting_detail::CountingState& counting = counting_detail::state();
    counting_detail::OperationKey key{op, a.key(), b.key()};
    if ((op == Op::kAdd || op == Op::kMul) && key.b < key.a) std::swap(key.a, key.b);  // commutative
    if (counting.reuse == Reuse::kOncePerCall) {
      const auto done = counting.done.find(key);
      if (done != counting.done.end()) return done->second;
    }
    counting_detail::Produced made{counting.next_id++, 0};

    // An add absorbs one product operand (the first); every other use of a product is one it must exist for.
    counting_detail::ProductUses* uses_a = counting.uses_of(a.product_);
    counting_detail::ProductUses* uses_b = counting.uses_of(b.product_);
    const bool additive = op == Op::kAdd || op == Op::kSub;
    if (uses_a) ++(additive ? uses_a->fused : uses_a->other);
    if (uses_b) ++(additive && !uses_a ? uses_b->fused : uses_b->other);

    OpCounts& counts = counting.counts;
    switch (op) {
      case Op::kAdd:
      case Op::kSub:
        ++counts.add;
        break;
      case Op::kMul:
        ++counts.mul;
        made.product = made.id;
        counting.uses_of(made.id);
        break;
      case Op::kDiv:
        ++(a.literal_ && a.value_ == 1.0 ? counts.reciprocal : counts.div);
        break;
      case Op::kSqrt:
        ++counts.sqrt;
        break;
      case Op::kNeg:  // free; a negated product is still that product to an add
        if (uses_a) {
          --uses_a->other;  // the negation itself is no use
          made.product = a.product_;
        }
        break;
      case Op::kLess:
      case Op::kLessEqual:
        ++counts.compare;
        break;
    }
    if (counting.reuse == Reuse::kOncePerCall) counting.done.emplace(key, made);
    return made;
  }

  counting_detail::OperandKey key() const {
    if (!literal_) return {false, id_};
    std::uint64_t bits;
    std::memcpy(&bits, &value_, sizeof bits);
    return {true, bits};
  }

  double value_ = 0.0;
  bool literal_ = true;        ///< a constant of the source, or computed from constants only
  std::uint64_t id_ = 0;       ///< identity of a run-time value (0 for literals)
  std::uint64_t product_ = 0;  ///< the multiply this value is the product (or negated product) of; 0 if none
};

}  // namespace fluxjac
