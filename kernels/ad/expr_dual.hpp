// fluxjac — expression-template forward-mode dual numbers (the paper's edn_5 / edn5_2 types).
//
// Sacado-style (E. Phipps, Trilinos): an arithmetic expression on ExprDual operands builds a tree of small
// node objects instead of a Dual temporary per operation; assigning the tree to an ExprDual evaluates it.
// Each node computes and caches its value when it is built (so values are exactly the plain double
// arithmetic, operation by operation: bit-identical to the same code on doubles, on the host; on the GPU a
// division and a square root take ad/device_math.hpp's sequences, as Dual's do), while derivative i is
// pulled lazily through the whole tree, one component at a time, into the destination. The per-node
// derivative rules are those of Dual<N> (ad/dual.hpp), so without FMA contraction ExprDual<N> gives
// bit-identical derivatives to Dual<N> too. Real is the type of values and derivatives, as in Dual<N, Real>.
//
// Ownership: leaves (ExprDual variables) are held by const reference, interior nodes by value. A tree must
// therefore be evaluated within the full expression that built it, as `T x = expr;` and `x = expr;` do;
// never keep one in an `auto` variable. Assignment evaluates value and derivatives into locals before it
// stores, so `x = 0.5 * ((x * x) / d + d)` is safe.
#pragma once

#include <cmath>
#include <type_traits>

#include "ad/dual.hpp"
#include "types.hpp"

namespace fluxjac {

template <int N, class Real = double>
struct ExprDual;

namespace expr_detail {

/// True for every expression operand: ExprDual variables and tree nodes (both define kIsExpression).
template <class E, class = void>
struct is_operand : std::false_type {};
template <class E>
struct is_operand<E, std::void_t<decltype(E::kIsExpression)>> : std::true_type {};
template <class E>
inline constexpr bool is_operand_v = is_operand<E>::value;

template <class E>
struct is_leaf : std::false_type {};
template <int N, class Real>
struct is_leaf<ExprDual<N, Real>> : std::true_type {};

/// Interior nodes of a tree (anything that is an operand but not an ExprDual variable).
template <class E>
inline constexpr bool is_node_v = is_operand_v<E> && !is_leaf<E>::value;

/// How a node stores a child: leaves by const reference, interior nodes by value.
template <class E>
struct stored {
  using type = const E;
};
template <int N, class Real>
struct stored<ExprDual<N, Real>> {
  using type = const ExprDual<N, Real>&;
};
template <class E>
using stored_t = typename stored<E>::type;

template <class A>
using if_operand = std::enable_if_t<is_operand_v<A>, int>;
template <class A, class B>
using if_operands = std::enable_if_t<is_operand_v<A> && is_operand_v<B>, int>;

template <class A, class B>
FLUXJAC_HD constexpr int common_derivatives() {
  static_assert(A::kDerivatives == B::kDerivatives, "ExprDual operands must have the same number of derivatives");
  return A::kDerivatives;
}

/// The real type shared by both operands of a binary node.
template <class A, class B>
struct common_real {
  static_assert(std::is_same_v<typename A::real_type, typename B::real_type>,
                "ExprDual operands must have the same real type");
  using type = typename A::real_type;
};
template <class A, class B>
using common_real_t = typename common_real<A, B>::type;

}  // namespace expr_detail

/// \brief Forward-mode dual number with N derivative components, evaluated through expression templates.
/// Same data layout and value semantics as Dual<N>: `v` is the value, `d[i]` derivative i.
template <int N, class Real>
struct ExprDual {
  static_assert(N >= 1, "ExprDual needs at least one derivative component");
  static constexpr int kDerivatives = N;
  static constexpr bool kIsExpression = true;
  using real_type = Real;
  Real v;     ///< value
  Real d[N];  ///< derivative components

  ExprDual() = default;
  /// A constant: value x, all derivatives zero.
  FLUXJAC_HD constexpr ExprDual(Real x) : v(x), d{} {}  // NOLINT(google-explicit-constructor)

  /// \brief Evaluates an expression tree: its cached value, then each derivative through the tree.
  template <class E, std::enable_if_t<expr_detail::is_node_v<E>, int> = 0>
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprDual(const E& e) : v(e.value()) {  // NOLINT(google-explicit-constructor)
    static_assert(E::kDerivatives == N, "assigning an expression with a different number of derivatives");
    FLUXJAC_UNROLL
    for (int i = 0; i < N; ++i) d[i] = e.derivative(i);
  }

  /// \brief Alias-safe evaluation of a tree that may read this variable: everything goes to locals first.
  template <class E, std::enable_if_t<expr_detail::is_node_v<E>, int> = 0>
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprDual& operator=(const E& e) {
    static_assert(E::kDerivatives == N, "assigning an expression with a different number of derivatives");
    const Real value = e.value();
    Real derivative_of_e[N];
    FLUXJAC_UNROLL
    for (int i = 0; i < N; ++i) derivative_of_e[i] = e.derivative(i);
    v = value;
    FLUXJAC_UNROLL
    for (int i = 0; i < N; ++i) d[i] = derivative_of_e[i];
    return *this;
  }

  FLUXJAC_HD FLUXJAC_FORCEINLINE Real value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE Real derivative(int i) const { return d[i]; }
};

using ExprDualNum = ExprDual<1>;
using ExprDualNum5 = ExprDual<5>;

template <int N, class From, class Real>
struct with_real<ExprDual<N, From>, Real> {
  using type = ExprDual<N, Real>;
};

// ---- tree nodes: each caches its value; derivative(i) applies the rule of Dual<N> ----------------

/// a + b: d = a' + b'
template <class A, class B>
struct ExprSum {
  static constexpr int kDerivatives = expr_detail::common_derivatives<A, B>();
  static constexpr bool kIsExpression = true;
  using real_type = expr_detail::common_real_t<A, B>;
  expr_detail::stored_t<A> a;
  expr_detail::stored_t<B> b;
  real_type v;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprSum(const A& a_, const B& b_, real_type value) : a(a_), b(b_), v(value) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const { return a.derivative(i) + b.derivative(i); }
};

/// a - b: d = a' - b'
template <class A, class B>
struct ExprDifference {
  static constexpr int kDerivatives = expr_detail::common_derivatives<A, B>();
  static constexpr bool kIsExpression = true;
  using real_type = expr_detail::common_real_t<A, B>;
  expr_detail::stored_t<A> a;
  expr_detail::stored_t<B> b;
  real_type v;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprDifference(const A& a_, const B& b_, real_type value) : a(a_), b(b_), v(value) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const { return a.derivative(i) - b.derivative(i); }
};

/// a * b: d = a' b + a b'
template <class A, class B>
struct ExprProduct {
  static constexpr int kDerivatives = expr_detail::common_derivatives<A, B>();
  static constexpr bool kIsExpression = true;
  using real_type = expr_detail::common_real_t<A, B>;
  expr_detail::stored_t<A> a;
  expr_detail::stored_t<B> b;
  real_type v;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprProduct(const A& a_, const B& b_, real_type value) : a(a_), b(b_), v(value) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const {
    return a.derivative(i) * b.value() + a.value() * b.derivative(i);
  }
};

/// a / b: d = (a' - (a/b) b') * (1/b)
template <class A, class B>
struct ExprQuotient {
  static constexpr int kDerivatives = expr_detail::common_derivatives<A, B>();
  static constexpr bool kIsExpression = true;
  using real_type = expr_detail::common_real_t<A, B>;
  expr_detail::stored_t<A> a;
  expr_detail::stored_t<B> b;
  real_type v;
  real_type inverse_denominator;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprQuotient(const A& a_, const B& b_, real_type value, real_type inverse)
      : a(a_), b(b_), v(value), inverse_denominator(inverse) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const {
    return (a.derivative(i) - v * b.derivative(i)) * inverse_denominator;
  }
};

/// a + c, c + a, a - c (c constant): d = a'
template <class A>
struct ExprShift {
  static constexpr int kDerivatives = A::kDerivatives;
  static constexpr bool kIsExpression = true;
  using real_type = typename A::real_type;
  expr_detail::stored_t<A> a;
  real_type v;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprShift(const A& a_, real_type value) : a(a_), v(value) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const { return a.derivative(i); }
};

/// -a, c - a (c constant): d = -a'
template <class A>
struct ExprReflect {
  static constexpr int kDerivatives = A::kDerivatives;
  static constexpr bool kIsExpression = true;
  using real_type = typename A::real_type;
  expr_detail::stored_t<A> a;
  real_type v;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprReflect(const A& a_, real_type value) : a(a_), v(value) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const { return -a.derivative(i); }
};

/// a * c, c * a, a / c, c / a, sqrt(a): d = a' * s with a factor s fixed when the node is built
template <class A>
struct ExprScale {
  static constexpr int kDerivatives = A::kDerivatives;
  static constexpr bool kIsExpression = true;
  using real_type = typename A::real_type;
  expr_detail::stored_t<A> a;
  real_type v;
  real_type factor;
  FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale(const A& a_, real_type value, real_type scale)
      : a(a_), v(value), factor(scale) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const { return a.derivative(i) * factor; }
};

/// |a|: takes the sign of the value; at exactly zero the derivative is +a' (docs/design.md, "The Roe flux, exactly")
template <class A>
struct ExprAbs {
  static constexpr int kDerivatives = A::kDerivatives;
  static constexpr bool kIsExpression = true;
  using real_type = typename A::real_type;
  expr_detail::stored_t<A> a;
  real_type v;
  bool negative;
  FLUXJAC_HD FLUXJAC_FORCEINLINE explicit ExprAbs(const A& a_)
      : a(a_), v(a_.value() < 0.0 ? -a_.value() : a_.value()), negative(a_.value() < 0.0) {}
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type value() const { return v; }
  FLUXJAC_HD FLUXJAC_FORCEINLINE real_type derivative(int i) const {
    return negative ? -a.derivative(i) : a.derivative(i);
  }
};

// ---- operators: operand with operand ------------------------------------------------------------
template <class A, class B, expr_detail::if_operands<A, B> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprSum<A, B> operator+(const A& a, const B& b) {
  return ExprSum<A, B>(a, b, a.value() + b.value());
}
template <class A, class B, expr_detail::if_operands<A, B> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprDifference<A, B> operator-(const A& a, const B& b) {
  return ExprDifference<A, B>(a, b, a.value() - b.value());
}
template <class A, class B, expr_detail::if_operands<A, B> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprProduct<A, B> operator*(const A& a, const B& b) {
  return ExprProduct<A, B>(a, b, a.value() * b.value());
}
template <class A, class B, expr_detail::if_operands<A, B> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprQuotient<A, B> operator/(const A& a, const B& b) {
  const auto inverse = reciprocal(b.value());
  return ExprQuotient<A, B>(a, b, quotient(a.value(), b.value(), inverse), inverse);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprReflect<A> operator-(const A& a) {
  return ExprReflect<A>(a, -a.value());
}

// ---- operators: operand with a constant of its real type (either side) ---------------------------
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprShift<A> operator+(const A& a, typename A::real_type c) {
  return ExprShift<A>(a, a.value() + c);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprShift<A> operator+(typename A::real_type c, const A& a) {
  return ExprShift<A>(a, c + a.value());
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprShift<A> operator-(const A& a, typename A::real_type c) {
  return ExprShift<A>(a, a.value() - c);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprReflect<A> operator-(typename A::real_type c, const A& a) {
  return ExprReflect<A>(a, c - a.value());
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale<A> operator*(const A& a, typename A::real_type c) {
  return ExprScale<A>(a, a.value() * c, c);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale<A> operator*(typename A::real_type c, const A& a) {
  return ExprScale<A>(a, c * a.value(), c);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale<A> operator/(const A& a, typename A::real_type c) {
  const typename A::real_type inverse = 1.0 / c;  // folded where c is a constant (kGammaMinusOne)
  return ExprScale<A>(a, quotient(a.value(), c, inverse), inverse);
}
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale<A> operator/(typename A::real_type c, const A& a) {
  using Real = typename A::real_type;
  const Real inverse = reciprocal(a.value());
  const Real value = quotient(c, a.value(), inverse);
  return ExprScale<A>(a, value, quotient(-value, a.value(), inverse));
}

// ---- elementary functions ----------------------------------------------------------------------
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprScale<A> sqrt(const A& a) {
  typename A::real_type root, inverse;
  sqrt_with_reciprocal(a.value(), root, inverse);
  return ExprScale<A>(a, root, 0.5 * inverse);  // 0.5 / root, bit for bit: halving is exact
}
/// \brief |a| takes the sign of the value; at exactly zero the derivative is +a'.
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE ExprAbs<A> abs(const A& a) {
  return ExprAbs<A>(a);
}
/// \brief Value of an ExprDual or of an expression tree; comparisons in the flux use values only.
template <class A, expr_detail::if_operand<A> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE typename A::real_type value_of(const A& a) {
  return a.value();
}

}  // namespace fluxjac
