// ctest-label: gpu
// The solve on the GPU (src/solve/device_solve.cu) against the host's on the same system: the same shift, the same
// iterations within one, dQ to what the tolerance allows, the true residual within it; restarts on the device; a
// state whose residual is not finite refused before anything runs. cuSPARSE's products of M (--cusparse,
// src/solve/cusparse_product.cu) equal fluxjac's to what their precision allows, and `fluxjac solve --cusparse`
// reports them.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/device_probe.hpp"
#include "solve/block_system.hpp"
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

double norm(const std::vector<double>& v) {
  double sum = 0.0;
  for (const double value : v) sum += value * value;
  return std::sqrt(sum);
}

/// |(|M| |x|)| / |M x|: how much the terms of M x cancel, the factor by which the rounding of M's entries, of x and of
/// the sums grows relative to |M x| (|M| takes the magnitude of every entry, the shift apart from Adiag's diagonal).
double cancellation(const JacobianPattern& pattern, const Jacobian& jacobian, const std::vector<double>& shift,
                    const std::vector<double>& x) {
  Jacobian magnitude = jacobian;
  for (double& value : magnitude.adiag) value = std::abs(value);
  for (float& value : magnitude.aoff) value = std::abs(value);
  std::vector<double> shift_magnitude(shift.size()), x_magnitude(x.size()), y(x.size()), bound(x.size());
  std::transform(shift.begin(), shift.end(), shift_magnitude.begin(), [](double v) { return std::abs(v); });
  std::transform(x.begin(), x.end(), x_magnitude.begin(), [](double v) { return std::abs(v); });
  BlockSystem{pattern, jacobian, shift}.multiply(x.data(), y.data());
  BlockSystem{pattern, magnitude, shift_magnitude}.multiply(x_magnitude.data(), bound.data());
  return norm(bound) / norm(y);
}

TEST_F(DeviceSolve, CusparseProductsOfMEqualTheFusedProductToTheirPrecision) {
  const auto [generated, pattern, reference] = test::assemble_generated("mixed", 8, "random");
  SolveOptions options;
  options.cfl = 50.0;
  options.krylov.tolerance = 1e-10;
  options.cusparse = true;
  const SolveOutcome outcome =
      solve_step_on_device(generated.mesh, generated.state, pattern, reference, Orientation::kA, options);
  ASSERT_EQ(outcome.cusparse.size(), 3u);
  EXPECT_EQ(outcome.cusparse[0].precision, "f32_matrix_f64_vectors");
  EXPECT_EQ(outcome.cusparse[1].precision, "f64");
  EXPECT_EQ(outcome.cusparse[2].precision, "f32");

  // A product's rounding error: its inputs rounded to the data precision (M's diagonal blocks, x, y: at most three
  // roundings of each term) and sums of up to `terms` products in the compute precision and in fluxjac's float64,
  // all scaled by the cancellation of M x (Higham's componentwise bound, taken in norm).
  block_offset longest_row = 0;
  for (std::int64_t i = 0; i < pattern.n_nodes; ++i)
    longest_row = std::max(longest_row, pattern.row_ptr[i + 1] - pattern.row_ptr[i]);
  const double terms = kBlock * static_cast<double>(longest_row + 1);
  const double kappa = cancellation(pattern, reference, outcome.shift, outcome.delta);
  const double single = 0x1p-24, twice = 0x1p-53;
  for (const CusparseProduct& product : outcome.cusparse) {
    std::string refusals;
    for (const std::string& refusal : product.refused) refusals += "\n  refused: " + refusal;
    if (!refusals.empty()) std::cout << "cuSPARSE " << product.precision << ":" << refusals << "\n";
    if (!product.product_ms) {
      // cusparseSpMV documents uniform float32 and float64 for every format: only the mixed precision may be refused,
      // and then it says why.
      EXPECT_EQ(product.precision, "f32_matrix_f64_vectors") << refusals;
      EXPECT_FALSE(product.refused.empty());
      continue;
    }
    EXPECT_GT(*product.product_ms, 0.0) << product.precision;
    const double data = product.matrix == "f32" || product.vectors == "f32" ? single : twice;
    const double compute = product.compute == "f32" ? single : twice;
    const double tolerance = (3.0 * data + terms * (compute + twice)) * kappa;
    EXPECT_LE(product.relative_difference, tolerance)
        << product.precision << " (matrix " << product.matrix << ", vectors " << product.vectors << ", compute "
        << product.compute << "), cancellation " << kappa << refusals;
  }
}

TEST_F(DeviceSolve, SolveWithCusparsePrintsAndWritesTheThreeProducts) {
  const test::TempDir folder;
  const std::string json = folder.file("solve.json");
  const test::CommandResult result = test::run_fluxjac(fmt::format(
      "solve -q --mesh mixed:4:rcm --cache '{}' --variant hd --cusparse --json '{}'", folder.path().string(), json));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream file(json);
  const nlohmann::json document = nlohmann::json::parse(file);
  for (const char* precision : {"f32_matrix_f64_vectors", "f64", "f32"}) {
    EXPECT_NE(result.output.find(precision), std::string::npos) << precision << " in\n" << result.output;
    for (const char* key : {"cusparse_ms", "cusparse_speedup", "cusparse_relative_difference", "cusparse_types"})
      EXPECT_TRUE(document.at(key).contains(precision)) << key << " " << precision;
  }
  for (const char* precision : {"f64", "f32"}) {
    EXPECT_GT(document["cusparse_ms"][precision].get<double>(), 0.0) << precision;
    EXPECT_NEAR(document["cusparse_speedup"][precision].get<double>(),
                document["cusparse_ms"][precision].get<double>() / document["product_ms"].get<double>(), 1e-12)
        << precision;
  }
  EXPECT_TRUE(document.at("cusparse_refused").is_object());
}

}  // namespace
}  // namespace fluxjac
