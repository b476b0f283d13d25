// ctest-label: cli
// The work model: CountingReal's rules on expressions counted by hand, its values against double (bit for bit,
// through every lane routine, on the Fortran vectors), the counted work of every variant and the relations that
// must hold between them, the bytes model of each strategy, the floor, and `fluxjac list` / `list --json` (the work
// and the tunings).
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ad/counting_real.hpp"
#include "ad/dual.hpp"
#include "ad/expr_dual.hpp"
#include "assembly/lane_work.hpp"
#include "physics/roe_jacobian_hd.hpp"
#include "registry/registry.hpp"
#include "registry/variant_work.hpp"
#include "test_support.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using C = CountingReal;

const std::vector<std::string> kGpuVariants = {"dn_10", "dn_5", "dn_2", "dn5_2", "edn_5", "edn5_2", "hd"};

const VariantInfo& info_of(const std::string& name) {
  static const std::vector<VariantInfo> infos = Registry::instance().list();
  for (const VariantInfo& info : infos)
    if (info.name == name) return info;
  throw std::runtime_error("no variant " + name);
}

const VariantWork& work_of(const std::string& name) { return info_of(name).work; }
const LaneCounts& lanes_of(const std::string& name, const std::string& strategy) {
  return work_of(name).strategy(strategy).lanes;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

/// Readable failures (gtest finds it by argument-dependent lookup).
void PrintTo(const OpCounts& ops, std::ostream* out) {
  *out << "{add " << ops.add << ", mul " << ops.mul << ", div " << ops.div << ", reciprocal " << ops.reciprocal
       << ", sqrt " << ops.sqrt << ", compare " << ops.compare << ", fused " << ops.fused << "}";
}

namespace {

// ---- CountingReal: each rule on an expression counted by hand ---------------------------------------------

TEST(CountingReal, ArithmeticOnInputsCountsEachOperationByKind) {
  const C x = C::input(3.0), y = C::input(-2.0);
  C r;
  const OpCounts ops = count_operations([&] { r = sqrt(x * x + y * y) / (x - y) + 1.0 / x; });
  EXPECT_EQ(ops.mul, 2u);
  EXPECT_EQ(ops.add, 3u);  // x x + y y, x - y, the final +
  EXPECT_EQ(ops.sqrt, 1u);
  EXPECT_EQ(ops.div, 1u);
  EXPECT_EQ(ops.reciprocal, 1u);
  EXPECT_EQ(ops.fused, 1u);  // x x into the first add (y y is that add's second product: computed on its own)
  EXPECT_EQ(r.value(), std::sqrt(3.0 * 3.0 + -2.0 * -2.0) / (3.0 - -2.0) + 1.0 / 3.0);
}

TEST(CountingReal, LiteralsFoldAndNegationIsFree) {
  const C x = C::input(0.25);
  C folded, negated;
  const OpCounts literal_ops = count_operations([&] { folded = C(2.0) * 3.0 + C(1.0) / 4.0; });
  EXPECT_EQ(literal_ops, OpCounts{});
  EXPECT_TRUE(folded.is_literal());
  EXPECT_EQ(folded.value(), 6.25);
  const OpCounts ops = count_operations([&] { negated = -(x * 0.5) + -x; });
  EXPECT_EQ(ops.mul, 1u);
  EXPECT_EQ(ops.add, 1u);
  EXPECT_EQ(ops.fused, 1u);  // -(x 0.5) + (-x) is one FMA
  EXPECT_FALSE(negated.is_literal());
}

TEST(CountingReal, ComparisonsCountUnlessBothAreLiterals) {
  const C x = C::input(1.5);
  bool less = false, literal_less = false;
  C magnitude;
  const OpCounts ops = count_operations([&] {
    less = x < 2.0;
    literal_less = C(1.0) < C(2.0);
    magnitude = abs(-x);
  });
  EXPECT_TRUE(less);
  EXPECT_TRUE(literal_less);
  EXPECT_EQ(magnitude.value(), 1.5);
  EXPECT_EQ(ops.compare, 2u);  // x < 2 and the sign test of |-x|
  EXPECT_EQ(ops.add + ops.mul, 0u);
}

TEST(CountingReal, ReuseWithinOneCountMatchesOperandsByIdentityNotBits) {
  const C x = C::input(2.0), y = C::input(5.0), y_twin = C::input(5.0);
  auto work = [&] {
    const C a = x * y, b = y * x;  // the same product (multiplication commutes)
    const C c = x * y_twin;        // equal bits, another value
    const C d = x - y, e = y - x;  // subtraction does not commute
    return (a + b) + (c + (d + e));
  };
  const OpCounts every = count_operations(work, Reuse::kEvery);
  const OpCounts once = count_operations(work, Reuse::kOncePerCall);
  EXPECT_EQ(every.mul, 3u);
  EXPECT_EQ(once.mul, 2u);
  EXPECT_EQ(every.add, 6u);
  EXPECT_EQ(once.add, 6u);
  // Reused product a = b feeds one add twice: one use absorbed, one not, so it stays a multiply.
  EXPECT_EQ(once.fused, 1u);  // c into c + (...)
}

TEST(CountingReal, AnUnhoistedPassCountsWhatItRepeats) {
  const C x = C::input(2.0), y = C::input(5.0);
  const auto passes = [&](bool unhoisted) {
    return count_operations(
        [&] {
          for (int pass = 0; pass < 3; ++pass) {
            if (unhoisted) begin_unhoisted_pass(x);
            const C repeated = x * y;  // the same operands in every pass
            (void)(repeated + x);
          }
        },
        Reuse::kOncePerCall);
  };
  EXPECT_EQ(passes(false).mul, 1u);  // hoisted: done once for the three passes
  EXPECT_EQ(passes(false).add, 1u);
  EXPECT_EQ(passes(true).mul, 3u);  // each pass in full
  EXPECT_EQ(passes(true).add, 3u);
  // A real type that computes has nothing to forget: for double the marker is the empty template, and changes no
  // count of a counting real around it.
  const OpCounts around_double = count_operations(
      [&] {
        begin_unhoisted_pass(1.0);
        (void)(x * y);
        begin_unhoisted_pass(2.0);
        (void)(x * y);
      },
      Reuse::kOncePerCall);
  EXPECT_EQ(around_double.mul, 1u);
}

TEST(CountingReal, DualProductAndQuotientCostWhatTheirDerivativeRulesSay) {
  using D = Dual<3, C>;
  D a, b;
  for (int i = 0; i < 3; ++i) {
    a.d[i] = C::input(0.5 + i);
    b.d[i] = C::input(-1.0 + i);
  }
  a.v = C::input(2.0);
  b.v = C::input(4.0);
  // a b: v = a b; d_i = a'_i b + a b'_i (an FMA and a multiply each).
  const OpCounts product = count_operations([&] { return a * b; });
  EXPECT_EQ(product.mul, 1u + 2 * 3);
  EXPECT_EQ(product.add, 3u);
  EXPECT_EQ(product.fused, 3u);
  EXPECT_EQ(fp64_instructions(product), 1.0 + 2 * 3);
  // a / b as the GPU does it (ad/device_math.hpp): inv = 1 / b, v = a inv, d_i = (a'_i - v b'_i) inv.
  const OpCounts quotient = count_operations([&] { return a / b; });
  EXPECT_EQ(quotient.div, 0u);
  EXPECT_EQ(quotient.reciprocal, 1u);
  EXPECT_EQ(quotient.mul, 1u + 2 * 3);
  EXPECT_EQ(quotient.add, 3u);
  EXPECT_EQ(quotient.fused, 3u);
  EXPECT_EQ(fp64_flops(quotient), 1.0 + 2 * 3 + 3 + kReciprocalSequence.flops());
}

TEST(CountingReal, FlopsCountAnFmaAsTwoAndDivisionsAsTheirSequences) {
  OpCounts ops;
  ops.add = 10;
  ops.mul = 7;
  ops.fused = 4;
  ops.div = 1;
  ops.reciprocal = 2;
  ops.sqrt = 3;
  EXPECT_EQ(fp64_flops(ops), 17.0 + 15 + 2 * 10 + 3 * 13);
  EXPECT_EQ(fp64_instructions(ops), 13.0 + 8 + 2 * 5 + 3 * 8);
}

TEST(CountingReal, NestedCountsDoNotLeakIntoEachOther) {
  const C x = C::input(1.0);
  OpCounts inner;
  const OpCounts outer = count_operations([&] {
    C y = x + x;
    inner = count_operations([&] { y = y * y; }, Reuse::kOncePerCall);
    y = y - x;
  });
  EXPECT_EQ(inner.mul, 1u);
  EXPECT_EQ(inner.add, 0u);
  EXPECT_EQ(outer.add, 2u);
  EXPECT_EQ(outer.mul, 1u);  // the outer count includes its inner counts
}

// ---- the same values as double, through every lane routine --------------------------------------------------

BasicEdgeInput<C> counting_input(const EdgeInput& edge) {
  BasicEdgeInput<C> out;
  for (int k = 0; k < kBlock; ++k) out.left[k] = C::input(edge.left[k]), out.right[k] = C::input(edge.right[k]);
  out.normal = {C::input(edge.normal.x), C::input(edge.normal.y), C::input(edge.normal.z)};
  out.area = C::input(edge.area);
  return out;
}

EdgeInput edge_of(const test::FluxCase& c) {
  EdgeInput edge;
  for (int k = 0; k < kBlock; ++k) edge.left[k] = c.left[k], edge.right[k] = c.right[k];
  edge.normal = {c.normal[0], c.normal[1], c.normal[2]};
  edge.area = 0.75;
  return edge;
}

/// Runs `lanes` on double and on CountingReal and expects the same bits in both local Jacobians and fluxes.
template <class RunDouble, class RunCounting>
void expect_same_values(const std::string& what, RunDouble&& run_double, RunCounting&& run_counting) {
  const auto cases = test::load_flux_cases();
  ASSERT_FALSE(cases.empty());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EdgeInput edge = edge_of(cases[i]);
    double expected[kLocalJacobianEntries] = {}, expected_flux[kBlock] = {};
    C counted[kLocalJacobianEntries], counted_flux[kBlock];
    run_double(edge, expected, expected_flux);
    run_counting(counting_input(edge), counted, counted_flux);
    for (int e = 0; e < kLocalJacobianEntries; ++e)
      EXPECT_TRUE(same_bits(counted[e].value(), expected[e]))
          << what << ", case " << i << ", entry " << e << ": " << counted[e].value() << " against " << expected[e];
    for (int m = 0; m < kBlock; ++m)
      EXPECT_TRUE(same_bits(counted_flux[m].value(), expected_flux[m]))
          << what << ", case " << i << ", flux " << m << ": " << counted_flux[m].value() << " against "
          << expected_flux[m];
  }
}

template <class Policy>
void expect_policy_same_values(const std::string& what) {
  expect_same_values(
      what + " (edge lanes)", [](const EdgeInput& e, double* l, double* f) { emulate_edge_lanes<Policy>(e, l, f); },
      [](const BasicEdgeInput<C>& e, C* l, C* f) { emulate_edge_lanes<Policy>(e, l, f); });
  expect_same_values(
      what + " (node lanes)", [](const EdgeInput& e, double* l, double* f) { emulate_node_lanes<Policy>(e, l, f); },
      [](const BasicEdgeInput<C>& e, C* l, C* f) { emulate_node_lanes<Policy>(e, l, f); });
}

/// The hand-differentiated side of the hd variant, on either real type.
struct HandSide {
  template <class Real>
  static void run(const BasicEdgeInput<Real>& edge, int side, Real scale, Real* block, Real* scaled_flux) {
    Real own[kBlock], other[kBlock], flux[kBlock], derivative[kBlock][kBlock];
    BasicFaceNormal<Real> normal;
    oriented_states(edge, side, own, other, normal);
    roe_flux_jacobian_hd(own, other, normal, flux, derivative);
    for (int m = 0; m < kBlock; ++m)
      for (int k = 0; k < kBlock; ++k) block[block_entry(m, k)] = scale * derivative[m][k];
    if (scaled_flux)
      for (int m = 0; m < kBlock; ++m) scaled_flux[m] = scale * flux[m];
  }
};

TEST(CountingRealValues, EveryLaneRoutineGivesTheBitsOfDoubleOnTheFortranVectors) {
  expect_policy_same_values<SeededColumnLanes<DualNum, 1>>("seeded columns, Dual<1>, one side per lane");
  expect_policy_same_values<SeededColumnLanes<DualNum, 2>>("seeded columns, Dual<1>, two sides per lane");
  expect_policy_same_values<SeededColumnLanes<ExprDualNum, 2>>("seeded columns, ExprDual<1>");
  expect_policy_same_values<OneLanePerSide<SeededPasses<DualNum>>>("seeded passes, Dual<1>");
  expect_policy_same_values<OneLanePerSide<DirectPass<DualNum5>>>("direct, Dual<5>");
  expect_policy_same_values<OneLanePerSide<DirectPass<ExprDualNum5>>>("direct, ExprDual<5>");
  expect_policy_same_values<OneLanePerSide<HandSide>>("hand Jacobian");
}

TEST(CountingRealValues, TheReferenceDualTenFluxGivesTheBitsOfDouble) {
  for (const test::FluxCase& c : test::load_flux_cases()) {
    double flux[kBlock], jacobian[kBlock][2 * kBlock];
    const FaceNormal face{c.normal[0], c.normal[1], c.normal[2]};
    roe_flux_conservative(c.left.data(), c.right.data(), face, flux);
    test::reference_face_jacobian(c.left.data(), c.right.data(), face, jacobian);
    using D = Dual<10, C>;
    D left[kBlock], right[kBlock], counted[kBlock];
    for (int k = 0; k < kBlock; ++k) {
      left[k] = D(C::input(c.left[k]));
      right[k] = D(C::input(c.right[k]));
      left[k].d[k] = 1.0;
      right[k].d[kBlock + k] = 1.0;
    }
    const BasicFaceNormal<C> normal{C::input(c.normal[0]), C::input(c.normal[1]), C::input(c.normal[2])};
    roe_flux_conservative(left, right, normal, counted);
    for (int m = 0; m < kBlock; ++m) {
      EXPECT_TRUE(same_bits(counted[m].v.value(), flux[m])) << "F" << m;
      for (int k = 0; k < 2 * kBlock; ++k)
        EXPECT_TRUE(same_bits(counted[m].d[k].value(), jacobian[m][k])) << "dF" << m << "/dU" << k;
    }
  }
}

// ---- the counted work of the variants ---------------------------------------------------------------------------

TEST(VariantWork, EveryVariantDeclaresPositiveDeterministicWork) {
  for (const VariantInfo& info : Registry::instance().list()) {
    SCOPED_TRACE(info.name);
    const VariantWork& work = info.work;
    EXPECT_GT(work.fp64_per_edge, 0.0);
    EXPECT_GT(work.ops.per_thread.mul, 0u);
    EXPECT_GT(work.ops.per_thread.add, 0u);
    EXPECT_GT(work.ops.per_thread.sqrt, 0u);
    EXPECT_LE(work.ops.per_thread.mul, work.ops.written.mul);  // reuse only removes operations
    EXPECT_LE(work.ops.per_thread.add, work.ops.written.add);
    EXPECT_FALSE(work.strategies.empty());
  }
  // Counting again gives the same figures: the registry's dn_10 and hd are their lane work on the canonical edge.
  using Dn10Lanes = SeededColumnLanes<DualNum, 1>;
  using HdLanes = OneLanePerSide<HandSide>;
  EXPECT_EQ(count_edge_lanes<Dn10Lanes>().written, lanes_of("dn_10", "edge").written);
  EXPECT_EQ(count_edge_lanes<Dn10Lanes>().per_thread, lanes_of("dn_10", "edge").per_thread);
  EXPECT_EQ(count_node_lanes<HdLanes>().per_thread, lanes_of("hd", "node").per_thread);
}

TEST(VariantWork, TheSameTenSeededColumnsCostTheSameAsWritten) {
  // dn_10, dn_5 and dn_2 all evaluate the seeded primitive flux once per column and side, whatever the lanes.
  for (const std::string strategy : {"edge", "node"}) {
    const OpCounts dn_10 = lanes_of("dn_10", strategy).written;
    EXPECT_EQ(lanes_of("dn_5", strategy).written, dn_10) << strategy;
    EXPECT_EQ(lanes_of("dn_2", strategy).written, dn_10) << strategy;
  }
  // One column per thread: nothing to share between threads, so node and edge lanes do the same.
  EXPECT_EQ(lanes_of("dn_10", "edge").per_thread, lanes_of("dn_10", "node").per_thread);
  // One thread of dn_2 runs five unrolled passes over the same flux value: the value work is done once and only each
  // pass's derivatives are its own, so the thread does less than dn_5's five column lanes of one side, which each
  // compute the value; its derivatives still cost more than the hand Jacobian's.
  const double dn_2_thread = fp64_flops(lanes_of("dn_2", "node").per_thread);
  EXPECT_LT(dn_2_thread, 0.8 * fp64_flops(lanes_of("dn_5", "node").per_thread));
  EXPECT_GT(dn_2_thread, fp64_flops(lanes_of("hd", "node").per_thread));
  // dn_5's edge lanes do both sides of a column in one thread and share the two sides' primitive states.
  EXPECT_LT(fp64_flops(lanes_of("dn_5", "edge").per_thread), fp64_flops(lanes_of("dn_5", "node").per_thread));
  EXPECT_EQ(lanes_of("dn_5", "node").per_thread, lanes_of("dn_10", "node").per_thread);
}

TEST(VariantWork, ExpressionTemplatesDoTheArithmeticOfDual) {
  for (const std::string strategy : {"edge", "node"}) {
    // Five derivatives: the same generic flux, operation for operation.
    {
      SCOPED_TRACE("edn5_2 " + strategy);
      const LaneCounts& e = lanes_of("edn5_2", strategy);
      const LaneCounts& d = lanes_of("dn5_2", strategy);
      EXPECT_EQ(e.per_thread, d.per_thread);
      // As written, ExprAbs tests the sign twice (once for the value, once for the derivative's sign); the
      // arithmetic is that of Dual, operation for operation.
      EXPECT_GT(e.written.compare, d.written.compare);
      OpCounts e_arithmetic = e.written, d_arithmetic = d.written;
      e_arithmetic.compare = d_arithmetic.compare = 0;
      EXPECT_EQ(e_arithmetic, d_arithmetic);
    }
    // One derivative: Dual<1>'s entropy fix computes the fixed speed's value on both paths and selects it
    // (kernels/physics/roe_flux.hpp, harten_entropy_fix), so dn_5 does the fix's value work (a square, a reciprocal,
    // a quotient, a half sum) also where the fix does not fire; everything else is edn_5's arithmetic.
    {
      SCOPED_TRACE("edn_5 " + strategy);
      const OpCounts& e = lanes_of("edn_5", strategy).per_thread;
      const OpCounts& d = lanes_of("dn_5", strategy).per_thread;
      EXPECT_EQ(e.div, d.div);
      EXPECT_EQ(e.sqrt, d.sqrt);
      EXPECT_EQ(e.compare, d.compare);
      EXPECT_LT(e.reciprocal, d.reciprocal);
      EXPECT_LE(e.add, d.add);
      EXPECT_LE(e.mul, d.mul);
      EXPECT_LE(e.fused, d.fused);
      // The extra work is a small part of a lane's: at most one fix's value work per fix and lane.
      EXPECT_LT(fp64_flops(d), 1.05 * fp64_flops(e));
    }
  }
}

TEST(VariantWork, OneLanePerSideDoesTheSameWorkInBothStrategies) {
  for (const std::string name : {"dn_2", "dn5_2", "edn5_2", "hd"}) {
    EXPECT_EQ(lanes_of(name, "edge").written, lanes_of(name, "node").written) << name;
    EXPECT_EQ(lanes_of(name, "edge").per_thread, lanes_of(name, "node").per_thread) << name;
  }
}

TEST(VariantWork, HandDerivativesCostLeastThenFiveDerivativesThenFivePasses) {
  const auto written = [](const std::string& name) { return fp64_flops(work_of(name).ops.written); };
  EXPECT_LT(written("hd"), written("dn5_2"));
  EXPECT_LT(written("dn5_2"), written("dn_2"));
  for (const std::string& name : kGpuVariants) {
    if (name == "hd") continue;
    EXPECT_LT(work_of("hd").fp64_per_edge, work_of(name).fp64_per_edge) << name;
  }
  // Alg. 3 runs the value of the flux once per column: ten times per edge against dn5_2's two (1.99x the work with
  // the GPU's division; 2.28x with IEEE divisions).
  EXPECT_GT(work_of("dn_10").fp64_per_edge, 1.8 * work_of("dn5_2").fp64_per_edge);
  // The hand Jacobian inverts each divisor once: no division left, only reciprocals.
  EXPECT_EQ(work_of("hd").ops.per_thread.div, 0u);
  EXPECT_GT(work_of("hd").ops.per_thread.reciprocal, 0u);
}

TEST(VariantWork, TheCanonicalEdgeTakesNoEntropyFixAndAFixCostsMore) {
  // Roe-averaged wave speeds of both orientations: |qn - a|, |qn| and |qn + a| above delta = 0.2 a.
  const BasicEdgeInput<C> counting = counting_edge();
  EdgeInput edge;
  for (int k = 0; k < kBlock; ++k) edge.left[k] = counting.left[k].value(), edge.right[k] = counting.right[k].value();
  edge.normal = {counting.normal.x.value(), counting.normal.y.value(), counting.normal.z.value()};
  edge.area = counting.area.value();
  for (int side = 0; side < 2; ++side) {
    double own[kBlock], other[kBlock], flux[kBlock];
    FaceNormal normal;
    oriented_states(edge, side, own, other, normal);
    roe_hd_detail::RoeLinearization lin;
    lin.evaluate(own, other, normal, flux);
    const double delta = 0.2 * lin.a;
    EXPECT_GT(std::abs(lin.qn - lin.a), delta) << "side " << side;
    EXPECT_GT(std::abs(lin.qn), delta) << "side " << side;
    EXPECT_GT(std::abs(lin.qn + lin.a), delta) << "side " << side;
  }
  // The same edge with a normal almost perpendicular to the velocity: |qn| < delta, the fix fires on two waves.
  BasicEdgeInput<C> slow = counting;
  slow.normal = {C::input(0.0), C::input(0.0), C::input(1.0)};
  C local[kLocalJacobianEntries], flux[kBlock];
  using Lanes = OneLanePerSide<DirectPass<DualNum5>>;
  const OpCounts common = count_operations([&] { emulate_edge_lanes<Lanes>(counting, local, flux); });
  const OpCounts fixed = count_operations([&] { emulate_edge_lanes<Lanes>(slow, local, flux); });
  EXPECT_GT(fp64_flops(fixed), fp64_flops(common));
}

// ---- bytes and the floor --------------------------------------------------------------------------------------

TEST(BytesModel, TheStrategiesMoveWhatTheirKernelsReadAndWrite) {
  const BytesModel edge = edge_strategy_bytes(), node = node_strategy_bytes();
  // Edge: ids, normal, area, slots per edge; an Aoff block per block; state and the Adiag atomics per node.
  EXPECT_EQ(edge.bytes(0, 1, 2), 2 * 4 + 3 * 8 + 8 + 2 * 4 + 2 * 25 * 4);
  EXPECT_EQ(edge.bytes(1, 0, 0), 5 * 8 + 2 * 25 * 8);
  EXPECT_EQ(edge.zeroing_per_node, 25 * 8);
  // Node: per entry its column, transposed slot, face record and Aoff block; per node row pointer, state, Adiag.
  EXPECT_EQ(node.bytes(0, 1, 2), 2 * (4 + 4 + 32 + 25 * 4));
  EXPECT_EQ(node.bytes(1, 0, 0), 4 + 5 * 8 + 25 * 8);
  EXPECT_EQ(node.zeroing_per_node, 0.0) << "the node strategy stores Adiag once: nothing to zero";
  EXPECT_GT(edge.per_node, node.per_node) << "the atomics read and write Adiag; the node strategy only writes it";
  // Linear in the mesh sizes, and the per-edge figure folds nodes in at the paper-size ratio.
  EXPECT_DOUBLE_EQ(edge.bytes(1030301, 5580300, 11160600), 5580300 * edge.bytes_per_edge(1030301.0 / 5580300.0));
  for (const std::string& name : kGpuVariants) {
    EXPECT_EQ(work_of(name).strategy("edge").bytes.bytes(3, 5, 10), edge.bytes(3, 5, 10)) << name;
    EXPECT_EQ(work_of(name).strategy("node").bytes.bytes(3, 5, 10), node.bytes(3, 5, 10)) << name;
  }
  EXPECT_EQ(work_of("reference").strategies.count("cpu"), 1u);
  EXPECT_THROW(work_of("hd").strategy("cpu"), Error);
}

TEST(Floor, IsTheSlowerOfMovingTheBytesAndIssuingTheFp64Instructions) {
  const VariantWork hd = work_of("hd");  // a copy: GCC 13 warns on a reference bound through a temporary name
  const StrategyWork& node = hd.strategy("node");
  const double nodes = 1030301, edges = 5580300, blocks = 2 * edges;
  const double memory = node.bytes.bytes(nodes, edges, blocks) / 3000e9;
  // 33 TFLOP/s of FMAs is 16.5 T instructions/s: a DADD or DMUL holds the pipe as long as a DFMA.
  const double arithmetic = node.fp64_instructions_per_edge() * edges / 16500e9;
  EXPECT_DOUBLE_EQ(fp64_instruction_rate(33000), 16500);
  EXPECT_DOUBLE_EQ(node.floor_seconds(nodes, edges, blocks, 3000, 33000), std::max(memory, arithmetic));
  // A device a thousand times slower at FP64 turns the floor arithmetic-bound.
  EXPECT_DOUBLE_EQ(node.floor_seconds(nodes, edges, blocks, 3000, 33), arithmetic * 1000);
  // Instructions, not flops: the floor is above flops / flop rate unless every instruction is an FMA.
  EXPECT_GT(node.floor_seconds(nodes, edges, blocks, 3000, 33), node.fp64_flops_per_edge() * edges / 33e9);
  for (const std::string& name : kGpuVariants) {
    const StrategyWork& strategy = work_of(name).strategy("node");
    EXPECT_DOUBLE_EQ(strategy.floor_seconds(nodes, edges, blocks, 1e9, 33),
                     strategy.fp64_instructions_per_edge() * edges / 16.5e9)
        << name << ": FP64-bound on a device of unlimited bandwidth";
  }
  EXPECT_EQ(node.floor_seconds(nodes, edges, blocks, 0, 33000), 0.0) << "no ceiling, no floor";
  // The node strategy's flops add its Adiag sums to the lanes'; the edge strategy's its sign multiplies.
  EXPECT_EQ(node.fp64_flops_per_edge(), fp64_flops(node.lanes.per_thread) + 2 * 25);
  EXPECT_EQ(work_of("hd").strategy("edge").fp64_flops_per_edge(),
            fp64_flops(work_of("hd").strategy("edge").lanes.per_thread) + 2 * 2 * 25);
}

// ---- fluxjac list -------------------------------------------------------------------------------------------------

TEST(ListCommand, JsonHasTheWorkOfEveryVariant) {
  const test::CommandResult result = test::run_fluxjac("list --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json list = nlohmann::json::parse(result.output);
  ASSERT_TRUE(list.is_array());
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& variant : list) by_name[variant.at("name").get<std::string>()] = variant;
  ASSERT_EQ(by_name.size(), Registry::instance().list().size());
  for (const auto& [name, variant] : by_name) {
    SCOPED_TRACE(name);
    for (const char* key : {"description", "backend", "threads_per_edge", "seeding", "preferred_assembly", "available",
                            "fp64_per_edge", "fp64_ops", "bytes_per_edge"})
      EXPECT_TRUE(variant.contains(key)) << key;
    EXPECT_TRUE(variant.at("fp64_per_edge").is_number());
    EXPECT_DOUBLE_EQ(variant.at("fp64_per_edge").get<double>(), work_of(name).fp64_per_edge);
    EXPECT_EQ(variant.at("fp64_ops").at("mul").get<std::uint64_t>(), work_of(name).ops.per_thread.mul);
    const nlohmann::json& bytes = variant.at("bytes_per_edge");
    if (name == "reference") {
      EXPECT_TRUE(bytes.at("cpu").is_number());
    } else {
      EXPECT_DOUBLE_EQ(bytes.at("edge").get<double>(), edge_strategy_bytes().bytes_per_edge());
      EXPECT_DOUBLE_EQ(bytes.at("node").get<double>(), node_strategy_bytes().bytes_per_edge());
      EXPECT_EQ(variant.at("backend"), "cuda");
    }
  }
}

TEST(ListCommand, TableShowsFlopsAndBytesPerEdge) {
  const test::CommandResult result = test::run_fluxjac("list");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("flop/edge"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("bytes/edge"), std::string::npos) << result.output;
  for (const std::string& name : kGpuVariants) {
    const std::string flops = std::to_string(static_cast<long long>(std::lround(work_of(name).fp64_per_edge)));
    const std::string bytes = "edge " + std::to_string(std::lround(edge_strategy_bytes().bytes_per_edge()));
    const std::size_t row = result.output.find("\n" + name + " ");
    ASSERT_NE(row, std::string::npos) << name << " not listed:\n" << result.output;
    const std::string line = result.output.substr(row + 1, result.output.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find(" " + flops + " "), std::string::npos) << line;
    EXPECT_NE(line.find(bytes), std::string::npos) << line;
  }
}

TEST(ListCommand, TableAndJsonShowEveryGpuVariantsTuning) {
  const test::CommandResult table = test::run_fluxjac("list");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::size_t section = table.output.find("\nTunings:");
  ASSERT_NE(section, std::string::npos) << table.output;
  const test::CommandResult json = test::run_fluxjac("list --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& variant : nlohmann::json::parse(json.output)) by_name[variant.at("name")] = variant.at("tuning");
  EXPECT_TRUE(by_name.at("reference").is_null());
  for (const std::string& name : kGpuVariants) {
    SCOPED_TRACE(name);
    const GpuTuning row = tuning_of(name);
    const std::string assembly = to_string(row.assembly);
    // Its line of the table: variant, measured on, registers, edges/block, node tile, node threads, node batch,
    // assembly.
    const std::size_t at = table.output.find("\n" + name + " ", section);
    ASSERT_NE(at, std::string::npos) << table.output;
    std::istringstream line(table.output.substr(at + 1, table.output.find('\n', at + 1) - at - 1));
    std::vector<std::string> columns{std::istream_iterator<std::string>(line), {}};
    const std::vector<std::string> expected = {name,
                                               "sm_90",
                                               std::to_string(row.max_registers),
                                               std::to_string(row.edges_per_block),
                                               std::to_string(row.node_tile_entries),
                                               std::to_string(row.node_block_threads),
                                               std::to_string(row.node_batch),
                                               assembly};
    EXPECT_EQ(columns, expected);
    const nlohmann::json& tuning = by_name.at(name);
    EXPECT_EQ(tuning.at("measured_on"), "sm_90");
    EXPECT_EQ(tuning.at("max_registers"), row.max_registers);
    EXPECT_EQ(tuning.at("edges_per_block"), row.edges_per_block);
    EXPECT_EQ(tuning.at("node_tile_entries"), row.node_tile_entries);
    EXPECT_EQ(tuning.at("node_block_threads"), row.node_block_threads);
    EXPECT_EQ(tuning.at("node_batch"), row.node_batch);
    EXPECT_EQ(tuning.at("assembly"), assembly);
  }
}

TEST(ListCommand, RejectsAValueAfterJsonAsAUsageError) {
  const test::CommandResult result = test::run_fluxjac("list --json=maybe");
  EXPECT_EQ(result.exit_code, static_cast<int>(ExitCode::kUsage)) << result.output;
  EXPECT_NE(result.output.find("--json"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("\"name\""), std::string::npos) << "printed a list anyway:\n" << result.output;
}

}  // namespace
}  // namespace fluxjac
