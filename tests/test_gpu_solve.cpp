// ctest-label: gpu
// The solve on the GPU (src/solve/device_solve.cu) against the host's on the same system: the same shift, the same
// iterations within one, dQ to what the tolerance allows, the true residual within it; restarts on the device; a
// state whose residual is not finite refused before anything runs.
#include <cmath>

#include <gtest/gtest.h>

#include "bench/device_probe.hpp"
#include "solve/device_solve.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

class DeviceSolve : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "GPU test skipped: " << gpu_unavailable().brief;
  }
};

TEST_F(DeviceSolve, EqualsTheHostSolveWithAndWithoutRestartsForBothPreconditioners) {
  const auto [generated, pattern, reference] = test::assemble_generated("mixed", 8, "random");
  for (const auto& [restart, preconditioner] :
       {std::pair{30, kBlockJacobi}, std::pair{5, kBlockJacobi}, std::pair{30, kMulticolorGaussSeidel}}) {
    SolveOptions options;
    options.cfl = 50.0;
    options.preconditioner = preconditioner;
    options.krylov.restart = restart;
    options.krylov.tolerance = 1e-10;
    const SolveOutcome host = solve_step(generated.mesh, generated.state, pattern, reference, Orientation::kA, options);
    const SolveOutcome device =
        solve_step_on_device(generated.mesh, generated.state, pattern, reference, Orientation::kA, options);
    EXPECT_TRUE(device.krylov.converged) << restart << " " << preconditioner;
    EXPECT_LE(device.relative_residual, 1e-10) << restart << " " << preconditioner;
    EXPECT_LE(std::abs(device.krylov.iterations - host.krylov.iterations), 1)
        << restart << " " << preconditioner << ": " << device.krylov.iterations << " against "
        << host.krylov.iterations;
    EXPECT_TRUE(test::bitwise_equal(device.shift, host.shift)) << restart << " " << preconditioner;
    double difference = 0.0, norm = 0.0;
    for (std::size_t k = 0; k < host.delta.size(); ++k) {
      difference += (device.delta[k] - host.delta[k]) * (device.delta[k] - host.delta[k]);
      norm += host.delta[k] * host.delta[k];
    }
    EXPECT_LE(std::sqrt(difference / norm), 1e-8) << restart << " " << preconditioner;
    EXPECT_GT(device.product_ms, 0.0);
  }
}

TEST_F(DeviceSolve, ANonFiniteResidualIsRefusedBeforeAnythingRuns) {
  auto [generated, pattern, reference] = test::assemble_generated("mixed", 4);
  reference.residual[5 * 9 + 1] = INFINITY;
  test::expect_invalid(
      [&] {
        solve_step_on_device(generated.mesh, generated.state, pattern, reference, Orientation::kA, SolveOptions{});
      },
      {"node 9", "component 1", "finite"});
}

}  // namespace
}  // namespace fluxjac
