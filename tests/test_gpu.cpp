// ctest-label: gpu
// GPU variants on the device against the frozen CPU reference, in both orientations (A and the adjoint's A^T): one
// test per (behaviour, variant, strategy), the variants and strategies taken from the registry, named e.g.
// GpuVariants/ValidateAgainstReference.mixed_12_rcm/hd_node so that a failure names its variant and
// `ctest -R hd_node` runs one. Each skips, with the reason, without a GPU.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "bench/timed_loop.hpp"
#include "jacobian/compare.hpp"
#include "mesh/generator.hpp"
#include "reference/reference.hpp"
#include "registry/registry.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

/// \brief One GPU variant with one strategy (the parameter); skipped where it cannot run.
class GpuVariantTest : public ::testing::TestWithParam<test::VariantStrategy> {
 protected:
  void SetUp() override {
    if (!test::variant_info(GetParam().variant).available)
      GTEST_SKIP() << "GPU test skipped: this build has no CUDA variants (FLUXJAC_CUDA=OFF or no nvcc)";
    if (!gpu_available()) GTEST_SKIP() << "GPU test skipped: no CUDA device";
  }

  AssemblyStrategy strategy() const { return GetParam().strategy; }

  /// \brief The variant, set up on the mesh.
  std::unique_ptr<Variant> setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) const {
    std::unique_ptr<Variant> variant = Registry::instance().create(GetParam().variant);
    variant->setup(mesh, state, pattern);
    return variant;
  }

  /// \brief One assembly as `options` ask (no warm-up).
  static Jacobian assemble(Variant& variant, const AssemblyOptions& options) {
    variant.prepare(options);
    variant.zero();
    variant.assemble();
    Jacobian result;
    variant.fetch(result);
    return result;
  }

  /// \brief One full assembly (no warm-up) with `units_per_block` edges or incident edges per block (0: default).
  Jacobian assemble(Variant& variant, int units_per_block = 0) const {
    return assemble(variant, AssemblyOptions{AssemblyMode::kFull, units_per_block, strategy()});
  }

  /// \brief Expects an assembled Jacobian to pass validation against the reference of the same pattern.
  static void expect_matches(const JacobianPattern& pattern, const Jacobian& result, const Jacobian& reference,
                             const std::string& what) {
    const Comparison comparison = compare_jacobians(pattern, result, pattern, reference);
    EXPECT_TRUE(comparison.passed) << what << ": Adiag " << comparison.adiag_error << ", Aoff "
                                   << comparison.aoff_error;
  }

  /// \brief Assembles a generated mesh and validates it against the reference.
  void expect_matches_the_reference(const std::string& kind, int n, const std::string& order) const {
    const auto [generated, pattern, reference] = test::assemble_generated(kind, n, order);
    auto variant = setup(generated.mesh, generated.state, pattern);
    expect_matches(pattern, assemble(*variant), reference, fmt::format("{} {} {}", kind, n, order));
  }
};

// ---- results against the frozen reference ------------------------------------------------------------------

class ValidateAgainstReference : public GpuVariantTest {};

// Every ordering; n = 3 and 7 leave partial blocks.
TEST_P(ValidateAgainstReference, tet_3_natural) { expect_matches_the_reference("tet", 3, "natural"); }
TEST_P(ValidateAgainstReference, prism_7_random) { expect_matches_the_reference("prism", 7, "random"); }
TEST_P(ValidateAgainstReference, mixed_12_rcm) { expect_matches_the_reference("mixed", 12, "rcm"); }
TEST_P(ValidateAgainstReference, mixed_17_random) { expect_matches_the_reference("mixed", 17, "random"); }

/// The Fortran vectors as 24 disconnected edges: each Adiag block equals the vector's dF/dUL (left node) and
/// -dF/dUR (right node).
TEST_P(ValidateAgainstReference, FortranVectors) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  EdgeMesh mesh;
  FlowState state;
  mesh.n_nodes = 2 * static_cast<std::int64_t>(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    mesh.edges.push_back(static_cast<node_index>(2 * i));
    mesh.edges.push_back(static_cast<node_index>(2 * i + 1));
    for (double x : cases[i].normal) mesh.normals.push_back(x);
    mesh.areas.push_back(1.0);
    for (double x : cases[i].left) state.Q.push_back(x);
    for (double x : cases[i].right) state.Q.push_back(x);
  }
  const JacobianPattern pattern = JacobianPattern::build(mesh);
  auto variant = setup(mesh, state, pattern);
  const Jacobian result = assemble(*variant);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    double scale = 0.0;
    for (const auto& row : cases[i].jacobian)
      for (double x : row) scale = std::max(scale, std::abs(x));
    for (int m = 0; m < kBlock; ++m)
      for (int k = 0; k < kBlock; ++k) {
        EXPECT_NEAR(result.adiag[2 * i * kBlockEntries + block_entry(m, k)], cases[i].jacobian[m][k], 1e-13 * scale)
            << "case " << i << " dF" << m << "/dUL" << k;
        EXPECT_NEAR(result.adiag[(2 * i + 1) * kBlockEntries + block_entry(m, k)], -cases[i].jacobian[m][5 + k],
                    1e-13 * scale)
            << "case " << i << " dF" << m << "/dUR" << k;
      }
  }
}

/// The stored golden Jacobian (tests/data), through `fluxjac run --reference`: exit code 0 means it validated.
TEST_P(ValidateAgainstReference, GoldenJacobian) {
  const std::string data = FLUXJAC_TEST_DATA_DIR;
  const test::CommandResult result = test::run_fluxjac(
      fmt::format("run -q --warmup 0 --reps 1 --variant {} --assembly {} --mesh '{}' --reference '{}'",
                  GetParam().variant, to_string(strategy()), data + "/golden-mesh.h5", data + "/golden-jacobian.h5"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

/// \brief A generated mesh with an isolated node (no incident edge: an empty row of the pattern) after every
/// `every`-th node, so that empty rows fall inside the node strategy's tiles; the isolated nodes get their neighbour's
/// state. Optional per-node arrays are dropped.
GeneratedMesh with_isolated_nodes(GeneratedMesh generated, int every) {
  EdgeMesh& mesh = generated.mesh;
  std::vector<node_index> new_id(static_cast<std::size_t>(mesh.n_nodes));
  std::vector<double> state;
  node_index next = 0;
  for (std::int64_t node = 0; node < mesh.n_nodes; ++node) {
    new_id[node] = next++;
    const double* q = &generated.state.Q[kBlock * node];
    state.insert(state.end(), q, q + kBlock);
    if (node % every == every - 1) {
      ++next;
      state.insert(state.end(), q, q + kBlock);
    }
  }
  for (node_index& end : mesh.edges) end = new_id[end];
  mesh.n_nodes = next;
  mesh.coords.clear();
  mesh.volumes.clear();
  generated.state.Q = std::move(state);
  return generated;
}

/// Isolated nodes (empty rows) inside the tiles, in the mesh's own order and RCM-visited: their Adiag blocks are zero.
TEST_P(ValidateAgainstReference, IsolatedNodes) {
  for (const char* order : {"rcm", "random"}) {
    const GeneratedMesh generated = with_isolated_nodes(test::generate_mesh("mixed", 6, order), 3);
    const JacobianPattern pattern = JacobianPattern::build(generated.mesh);
    Jacobian reference;
    assemble_reference(generated.mesh, generated.state, pattern, reference);
    auto variant = setup(generated.mesh, generated.state, pattern);
    const Jacobian result = assemble(*variant);
    expect_matches(pattern, result, reference, order);
    int isolated = 0;
    for (std::int64_t node = 0; node < pattern.n_nodes; ++node) {
      if (pattern.row_ptr[node + 1] != pattern.row_ptr[node]) continue;
      ++isolated;
      for (int k = 0; k < kBlockEntries; ++k)
        ASSERT_EQ(result.adiag[kBlockEntries * node + k], 0.0) << order << ": isolated node " << node;
    }
    EXPECT_GE(isolated, 50) << order;
  }
}

/// Node assembly visits the rows of a scattered order (random) in RCM order, and keeps a mesh's own good order.
class NodeTraversal : public GpuVariantTest {};

TEST_P(NodeTraversal, RandomOrderIsVisitedInRcmOrderAndAnRcmMeshInItsOwn) {
  if (strategy() != AssemblyStrategy::kNode) GTEST_SKIP() << "the edge strategy has no row traversal";
  for (const auto& [order, expected] : {std::pair{"random", "RCM"}, std::pair{"rcm", "file"}}) {
    const auto [generated, pattern, reference] = test::assemble_generated("mixed", 9, order);
    auto variant = setup(generated.mesh, generated.state, pattern);
    expect_matches(pattern, assemble(*variant), reference, order);
    EXPECT_EQ(variant->resources()->node_traversal, expected) << order;
  }
}

/// Edges (or incident edges) per block is a tuning knob, not a correctness one.
class EdgesPerBlock : public GpuVariantTest {};

TEST_P(EdgesPerBlock, DoesNotChangeTheResult) {
  const auto [generated, pattern, reference] = test::assemble_generated("mixed", 6);
  int tried = 0;
  // 300: node tiles with more lanes than the block has threads, in an uneven share (each thread works several).
  for (int units_per_block : {1, 7, 32, 96, 300}) {
    auto variant = setup(generated.mesh, generated.state, pattern);
    if (strategy() == AssemblyStrategy::kEdge &&
        units_per_block * variant->info().threads_per_edge > variant->resources()->max_block_threads)
      continue;  // more threads per block than the kernel's registers allow
    ++tried;
    expect_matches(pattern, assemble(*variant, units_per_block), reference,
                   fmt::format("{} per block", units_per_block));
  }
  EXPECT_GE(tried, 2);
}

// ---- repeated runs and the Table IV modes -------------------------------------------------------------------

class RepeatedRuns : public GpuVariantTest {};

/// Repeated runs agree (atomics may reorder sums, nothing more) and the Table IV modes time every repetition of the
/// timed loop (one rank: no ghosts to exchange).
TEST_P(RepeatedRuns, AgreeAndTableFourModesRun) {
  const GeneratedMesh generated = test::generate_mesh("mixed", 10, "random");
  const JacobianPattern pattern = JacobianPattern::build(generated.mesh);
  auto variant = setup(generated.mesh, generated.state, pattern);
  const Jacobian first = assemble(*variant);
  const Communicator& one_rank = Communicator::world();
  const HaloPlan no_ghosts;
  GhostExchange exchange(one_rank, no_ghosts);
  for (AssemblyMode mode : {AssemblyMode::kComputeOnly, AssemblyMode::kScatterOnly}) {
    variant->prepare(AssemblyOptions{mode, 0, strategy()});
    const TimingSamples samples = timed_loop(*variant, TimingOptions{1, 3}, exchange);
    EXPECT_EQ(samples.assembly_ms.size(), 3u) << to_string(mode);
    for (double ms : samples.assembly_ms) EXPECT_GT(ms, 0.0) << to_string(mode);
  }
  Jacobian second;
  variant->fetch(second);  // runs a full assembly again: the modes above left partial results
  const Comparison comparison = compare_jacobians(pattern, second, pattern, first);
  EXPECT_LE(comparison.adiag_error, 1e-14);
  EXPECT_EQ(comparison.aoff_error, 0.0);
  // The node strategy sums each Adiag block in a fixed order: bitwise reproducible.
  if (strategy() == AssemblyStrategy::kNode) {
    EXPECT_TRUE(test::bitwise_equal(second.adiag, first.adiag)) << "Adiag differs between two node assemblies";
  }
}

// ---- the adjoint orientation --------------------------------------------------------------------------------

class AdjointOrientation : public GpuVariantTest {};

/// A^T on the GPU equals the transpose of A on the GPU block for block (Aoff bit for bit: the same values stored
/// elsewhere; Adiag too with node assembly, to the atomics' reordering with edge assembly), in file order and in the
/// RCM visit order of a scattered mesh, and validates against the reference's A^T.
TEST_P(AdjointOrientation, IsTheTransposeOfAOnEveryMeshOrder) {
  for (const char* order : {"rcm", "random"}) {
    SCOPED_TRACE(order);
    const auto [generated, pattern, reference] = test::assemble_generated("mixed", 9, order);
    auto variant = setup(generated.mesh, generated.state, pattern);
    const Jacobian a = assemble(*variant);
    variant->prepare(AssemblyOptions{AssemblyMode::kFull, 0, strategy(), Orientation::kTransposed});
    variant->zero();
    variant->assemble();
    Jacobian transpose;
    variant->fetch(transpose);
    const Jacobian expected = test::transposed(pattern, a);
    EXPECT_TRUE(test::bitwise_equal(transpose.aoff, expected.aoff)) << "Aoff";
    if (strategy() == AssemblyStrategy::kNode)
      EXPECT_TRUE(test::bitwise_equal(transpose.adiag, expected.adiag)) << "Adiag";
    else
      EXPECT_LE(compare_jacobians(pattern, transpose, pattern, expected).adiag_error, 1e-14);
    Jacobian reference_transpose;
    assemble_reference(generated.mesh, generated.state, pattern, reference_transpose, Orientation::kTransposed);
    expect_matches(pattern, transpose, reference_transpose, "A^T");
    // And back: A again after A^T (the node map's targets follow the orientation of each run).
    expect_matches(pattern, assemble(*variant), reference, "A after A^T");
  }
}

/// The residual from the same pass (--residual): R of the reference in both orientations, the rows visited in the
/// mesh's order and in RCM order, with the Jacobian unchanged by it; a case without it fetches none.
class ResidualInTheSamePass : public GpuVariantTest {};

TEST_P(ResidualInTheSamePass, MatchesTheReferenceAndLeavesTheJacobianAsItWas) {
  for (const char* order : {"rcm", "random"}) {
    const auto [generated, pattern, reference] = test::assemble_generated("mixed", 9, order);
    ASSERT_FALSE(reference.residual.empty());
    auto variant = setup(generated.mesh, generated.state, pattern);
    for (const Orientation orientation : {Orientation::kA, Orientation::kTransposed}) {
      const std::string what = fmt::format("{} {}", order, to_string(orientation));
      const auto run = [&](bool residual) {
        AssemblyOptions options{AssemblyMode::kFull, 0, strategy(), orientation};
        options.residual = residual;
        return assemble(*variant, options);
      };
      const Jacobian with = run(true), without = run(false);
      EXPECT_TRUE(without.residual.empty()) << what;
      ASSERT_EQ(with.residual.size(), static_cast<std::size_t>(pattern.n_nodes) * kBlock) << what;
      const Comparison comparison = compare_jacobians(pattern, with, pattern, reference);
      EXPECT_LE(comparison.residual_error, 1e-13) << what;  // compare_jacobians gives NaN when one has none
      // The two kernels are compiled apart (the compiler may contract other products into FMAs): the same Jacobian to
      // rounding, float32 Aoff to its last bit.
      const Comparison same = compare_jacobians(pattern, with, pattern, without);
      EXPECT_LE(same.adiag_error, 1e-14) << what;
      EXPECT_LE(same.aoff_error, 1e-7) << what;
      if (strategy() == AssemblyStrategy::kNode) {  // no atomics: R summed in row order, the same bits every time
        EXPECT_TRUE(test::bitwise_equal(with.residual, run(true).residual)) << what;
      }
    }
  }
}

/// Aoff in bfloat16 (--aoff-precision bf16): the kernels store bfloat16, which fetch widens to float32. For A and A^T,
/// with the rows in file order and in RCM visit order, Aoff is round_to_bf16 of the same variant's float32 Aoff bit
/// for bit (the kernels round the float, as round_to_bf16 does), Adiag is unchanged (bit for bit with node assembly,
/// to the atomics' reordering with edge assembly), and it validates with the bf16 tolerance; f32 after bf16 is the
/// float32 Aoff again (prepare holds one array or the other).
class AoffInBf16 : public GpuVariantTest {};

TEST_P(AoffInBf16, IsTheFloat32AoffRoundedAndValidates) {
  for (const char* order : {"rcm", "random"}) {
    const auto [generated, pattern, reference] = test::assemble_generated("mixed", 8, order);
    auto variant = setup(generated.mesh, generated.state, pattern);
    for (const Orientation orientation : {Orientation::kA, Orientation::kTransposed}) {
      const std::string what = fmt::format("{} {}", order, to_string(orientation));
      const auto run = [&](AoffPrecision precision) {
        AssemblyOptions options{AssemblyMode::kFull, 0, strategy(), orientation};
        options.aoff_precision = precision;
        return assemble(*variant, options);
      };
      const Jacobian f32 = run(AoffPrecision::kF32), bf16 = run(AoffPrecision::kBf16);
      std::vector<float> expected = f32.aoff;
      round_to_bf16(expected);
      EXPECT_TRUE(test::bitwise_equal(bf16.aoff, expected)) << what;
      EXPECT_FALSE(test::bitwise_equal(bf16.aoff, f32.aoff)) << what << ": nothing was rounded";
      if (strategy() == AssemblyStrategy::kNode)
        EXPECT_TRUE(test::bitwise_equal(bf16.adiag, f32.adiag)) << what;
      else
        EXPECT_LE(compare_jacobians(pattern, bf16, pattern, f32).adiag_error, 1e-14) << what;
      Jacobian of_orientation = reference;
      if (orientation == Orientation::kTransposed)
        assemble_reference(generated.mesh, generated.state, pattern, of_orientation, orientation);
      const Comparison comparison =
          compare_jacobians(pattern, bf16, pattern, of_orientation, validation_tolerances({}, AoffPrecision::kBf16));
      EXPECT_TRUE(comparison.passed) << what << ": Adiag " << comparison.adiag_error << ", Aoff "
                                     << comparison.aoff_error;
      EXPECT_TRUE(test::bitwise_equal(run(AoffPrecision::kF32).aoff, f32.aoff)) << what << ": f32 after bf16";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuVariants, AoffInBf16, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, AdjointOrientation, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, ValidateAgainstReference, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, NodeTraversal, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, EdgesPerBlock, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, ResidualInTheSamePass, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);
INSTANTIATE_TEST_SUITE_P(GpuVariants, RepeatedRuns, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);

}  // namespace
}  // namespace fluxjac
