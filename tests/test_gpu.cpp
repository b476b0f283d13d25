// GPU variants on the device against the CPU reference. Skipped, with a visible message, without a GPU.
#include <cmath>

#include "bench/device_probe.hpp"
#include "jacobian/compare.hpp"
#include "mesh/generator.hpp"
#include "reference/reference.hpp"
#include "test_support.hpp"
#include "registry/registry.hpp"

namespace fluxjac {
namespace {

constexpr AssemblyStrategy kStrategies[] = {AssemblyStrategy::kEdge, AssemblyStrategy::kNode};

std::vector<std::string> gpu_variants() {
  std::vector<std::string> names;
  for (const auto& info : Registry::instance().list())
    if (info.backend == Backend::kCuda && info.available) names.push_back(info.name);
  return names;
}

#define FLUXJAC_REQUIRE_GPU()                                                                       \
  do {                                                                                              \
    if (!gpu_available()) GTEST_SKIP() << "GPU test skipped: no CUDA device (or a CPU-only build)"; \
  } while (0)

struct Case {
  std::string kind;
  int n;
  std::string order;
};
void PrintTo(const Case& c, std::ostream* out) { *out << c.kind << ":" << c.n << ":" << c.order; }

class GpuVariants : public ::testing::TestWithParam<Case> {};

/// Every GPU variant validates against the reference; n = 3 and 7 leave partial blocks.
TEST_P(GpuVariants, ValidateAgainstTheReference) {
  FLUXJAC_REQUIRE_GPU();
  const auto [generated, pattern, reference] =
      test::assemble_generated(GetParam().kind, GetParam().n, GetParam().order);
  for (const auto& name : gpu_variants()) {
    auto variant = Registry::instance().create(name);
    variant->setup(generated.mesh, generated.state, pattern);
    for (AssemblyStrategy strategy : kStrategies) {
      variant->run(TimingOptions{1, 2, AssemblyMode::kFull, 0, strategy});
      Jacobian result;
      variant->fetch(result);
      const Comparison comparison = compare_jacobians(pattern, result, pattern, reference);
      EXPECT_TRUE(comparison.passed) << name << " (" << to_string(strategy) << "): Adiag " << comparison.adiag_error
                                     << ", Aoff " << comparison.aoff_error;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, GpuVariants,
                         ::testing::Values(Case{"tet", 3, "natural"}, Case{"prism", 7, "random"},
                                           Case{"mixed", 12, "rcm"}, Case{"mixed", 17, "random"}),
                         [](const auto& info) {
                           return info.param.kind + "_" + std::to_string(info.param.n) + "_" + info.param.order;
                         });

/// The Fortran vectors as 24 disconnected edges: each GPU Adiag block equals the vector's dF/dUL.
TEST(GpuFortranVectors, EveryVariantReproducesTheFortranJacobian) {
  FLUXJAC_REQUIRE_GPU();
  const auto cases = test::load_flux_cases();
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
  for (const auto& name : gpu_variants()) {
    for (AssemblyStrategy strategy : kStrategies) {
      auto variant = Registry::instance().create(name);
      variant->setup(mesh, state, pattern);
      variant->run(TimingOptions{0, 1, AssemblyMode::kFull, 0, strategy});
      Jacobian result;
      variant->fetch(result);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        double scale = 0.0;
        for (const auto& row : cases[i].jacobian)
          for (double x : row) scale = std::max(scale, std::abs(x));
        for (int m = 0; m < kBlock; ++m)
          for (int k = 0; k < kBlock; ++k) {
            EXPECT_NEAR(result.adiag[2 * i * kBlockEntries + block_entry(m, k)], cases[i].jacobian[m][k], 1e-13 * scale)
                << name << " case " << i;
            EXPECT_NEAR(result.adiag[(2 * i + 1) * kBlockEntries + block_entry(m, k)], -cases[i].jacobian[m][5 + k],
                        1e-13 * scale)
                << name << " (" << to_string(strategy) << ") case " << i;
          }
      }
    }
  }
}

/// Repeated runs agree (atomics may reorder sums, nothing more) and the Table IV modes run.
TEST(GpuModes, RepeatedRunsAgreeAndTableFourModesRun) {
  FLUXJAC_REQUIRE_GPU();
  const GeneratedMesh generated = test::generate_mesh("mixed", 10, "random");
  const JacobianPattern pattern = JacobianPattern::build(generated.mesh);
  for (const auto& name : gpu_variants()) {
    for (AssemblyStrategy strategy : kStrategies) {
      auto variant = Registry::instance().create(name);
      variant->setup(generated.mesh, generated.state, pattern);
      variant->run(TimingOptions{0, 1, AssemblyMode::kFull, 0, strategy});
      Jacobian first, second;
      variant->fetch(first);
      for (AssemblyMode mode : {AssemblyMode::kComputeOnly, AssemblyMode::kScatterOnly}) {
        const TimingSamples samples = variant->run(TimingOptions{1, 3, mode, 0, strategy});
        EXPECT_EQ(samples.assembly_ms.size(), 3u) << name;
        for (double ms : samples.assembly_ms) EXPECT_GT(ms, 0.0) << name;
      }
      variant->fetch(second);  // runs a full assembly again: the modes above left partial results
      const Comparison comparison = compare_jacobians(pattern, second, pattern, first);
      EXPECT_LE(comparison.adiag_error, 1e-14) << name;
      EXPECT_EQ(comparison.aoff_error, 0.0) << name;
      // The node strategy sums each Adiag block in a fixed order: bitwise reproducible.
      if (strategy == AssemblyStrategy::kNode) {
        EXPECT_EQ(second.adiag, first.adiag) << name;
      }
    }
  }
}

/// Edges (or nodes) per block is a tuning knob, not a correctness one.
TEST(GpuModes, EdgesPerBlockDoesNotChangeTheResult) {
  FLUXJAC_REQUIRE_GPU();
  const auto [generated, pattern, reference] = test::assemble_generated("mixed", 6);
  for (const auto& name : gpu_variants()) {
    for (AssemblyStrategy strategy : kStrategies)
      for (int units_per_block : {1, 7, 32, 96}) {
        auto variant = Registry::instance().create(name);
        if (strategy == AssemblyStrategy::kEdge &&
            units_per_block * variant->info().threads_per_edge > variant->resources()->max_block_threads)
          continue;
        variant->setup(generated.mesh, generated.state, pattern);
        variant->run(TimingOptions{0, 1, AssemblyMode::kFull, units_per_block, strategy});
        Jacobian result;
        variant->fetch(result);
        EXPECT_TRUE(compare_jacobians(pattern, result, pattern, reference).passed)
            << name << " " << to_string(strategy) << " " << units_per_block;
      }
  }
}

}  // namespace
}  // namespace fluxjac
