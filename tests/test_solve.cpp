// ctest-label: unit
// The implicit step's pieces (src/solve): FGMRES against a system whose solution is known, with and without restarts
// and a preconditioner; block Jacobi's inverted blocks; the shift of the local time step; the system's product
// against a dense one; the refused options and states.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "mesh/generator.hpp"
#include "reference/reference.hpp"
#include "solve/block_jacobi.hpp"
#include "solve/block_system.hpp"
#include "solve/fgmres.hpp"
#include "solve/multicolor_gs.hpp"
#include "solve/solve_step.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// A nonsymmetric tridiagonal matrix (4 on the diagonal, -1 below, -2 above): y = T x.
void tridiagonal(std::size_t n, const double* x, double* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = 4.0 * x[i] - (i > 0 ? x[i - 1] : 0.0) - 2.0 * (i + 1 < n ? x[i + 1] : 0.0);
}

TEST(Fgmres, SolvesANonsymmetricSystemWithAndWithoutRestartsAndPreconditioner) {
  const std::size_t n = 200;
  HostSpace space(n);
  std::vector<double> expected(n), b(n), x(n), check(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = std::sin(0.1 * static_cast<double>(i)) + 1.0;
  tridiagonal(n, expected.data(), b.data());
  const LinearMap product = [&](const double* in, double* out) { tridiagonal(n, in, out); };
  const LinearMap identity = [&](const double* in, double* out) { std::copy(in, in + n, out); };
  const LinearMap jacobi = [&](const double* in, double* out) {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i] / 4.0;
  };
  for (const int restart : {200, 30, 5, 1}) {
    for (const auto& [name, preconditioner] : {std::pair{"none", identity}, std::pair{"jacobi", jacobi}}) {
      KrylovOptions options;
      options.restart = restart;
      options.tolerance = 1e-12;
      const KrylovResult result = fgmres(space, product, preconditioner, b.data(), x.data(), options);
      EXPECT_TRUE(result.converged) << restart << " " << name;
      ASSERT_EQ(result.history.size(), static_cast<std::size_t>(result.iterations));
      double error = 0.0;
      for (std::size_t i = 0; i < n; ++i) error = std::max(error, std::abs(x[i] - expected[i]));
      EXPECT_LE(error, 1e-10) << restart << " " << name;
    }
  }
}

TEST(Fgmres, AZeroRightHandSideGivesZeroAndTheIterationLimitIsKept) {
  const std::size_t n = 50;
  HostSpace space(n);
  std::vector<double> b(n, 0.0), x(n, 7.0);
  const LinearMap product = [&](const double* in, double* out) { tridiagonal(n, in, out); };
  const LinearMap identity = [&](const double* in, double* out) { std::copy(in, in + n, out); };
  KrylovResult result = fgmres(space, product, identity, b.data(), x.data(), KrylovOptions{});
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 0);
  EXPECT_EQ(*std::max_element(x.begin(), x.end()), 0.0);
  b.assign(n, 1.0);
  KrylovOptions few;
  few.max_iterations = 3;
  few.tolerance = 1e-14;
  result = fgmres(space, product, identity, b.data(), x.data(), few);
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.iterations, 3);
}

/// The assembled system of a generated mesh, and M as a dense matrix built entry by entry from its definition.
struct SmallSystem {
  test::AssembledMesh assembled = test::assemble_generated("mixed", 3, "random");
  std::vector<double> shift = local_time_step_shift(assembled.generated.mesh, assembled.generated.state, 20.0);
  BlockSystem system{assembled.pattern, assembled.reference, shift};
  std::vector<double> dense() const {
    const JacobianPattern& pattern = assembled.pattern;
    const auto rows = static_cast<std::size_t>(system.rows());
    std::vector<double> m(rows * rows, 0.0);
    for (std::int64_t i = 0; i < pattern.n_nodes; ++i)
      for (int r = 0; r < kBlock; ++r) {
        const std::size_t row = kBlock * i + r;
        m[row * rows + row] += shift[i];
        for (int c = 0; c < kBlock; ++c) {
          m[row * rows + kBlock * i + c] += assembled.reference.adiag[i * kBlockEntries + kBlock * r + c];
          for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k)
            m[row * rows + kBlock * pattern.col_idx[k] + c] +=
                assembled.reference.aoff[k * kBlockEntries + kBlock * r + c];
        }
      }
    return m;
  }
};

TEST(BlockSystem, TheProductIsTheDenseMatrixsAndBlockJacobiInvertsItsDiagonalBlocks) {
  const SmallSystem small;
  const auto rows = static_cast<std::size_t>(small.system.rows());
  const std::vector<double> m = small.dense();
  std::vector<double> x(rows), y(rows), z(rows);
  for (std::size_t k = 0; k < rows; ++k) x[k] = std::cos(0.37 * static_cast<double>(k));
  small.system.multiply(x.data(), y.data());
  double worst = 0.0, largest = 0.0;
  for (std::size_t row = 0; row < rows; ++row) {
    double sum = 0.0;
    for (std::size_t c = 0; c < rows; ++c) sum += m[row * rows + c] * x[c];
    worst = std::max(worst, std::abs(sum - y[row]));
    largest = std::max(largest, std::abs(sum));
  }
  EXPECT_LE(worst, 1e-13 * largest);
  // D^-1 (D x) = x, D the diagonal blocks of the dense M.
  std::vector<double> dx(rows, 0.0);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t first = row / kBlock * kBlock;
    for (int c = 0; c < kBlock; ++c) dx[row] += m[row * rows + first + c] * x[first + c];
  }
  BlockJacobi(small.system).apply(dx.data(), z.data());
  for (std::size_t k = 0; k < rows; ++k) ASSERT_NEAR(z[k], x[k], 1e-10) << k;
}

TEST(MulticolorGaussSeidel, ColorsSeparateNeighboursAndSweepsApproachTheSolve) {
  const SmallSystem small;
  const JacobianPattern& pattern = small.assembled.pattern;
  const NodeColoring coloring = color_nodes(pattern);
  ASSERT_EQ(coloring.nodes.size(), static_cast<std::size_t>(pattern.n_nodes));
  std::vector<int> color(coloring.nodes.size(), -1);
  for (int c = 0; c < coloring.colors(); ++c)
    for (std::int64_t at = coloring.color_start[c]; at < coloring.color_start[c + 1]; ++at) {
      ASSERT_EQ(color[coloring.nodes[at]], -1) << "node " << coloring.nodes[at] << " twice";
      color[coloring.nodes[at]] = c;
    }
  for (std::int64_t i = 0; i < pattern.n_nodes; ++i)
    for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k)
      ASSERT_NE(color[i], color[pattern.col_idx[k]]) << "edge " << i << "-" << pattern.col_idx[k];
  EXPECT_GE(coloring.colors(), 2);
  EXPECT_LE(coloring.colors(), 30);
  // More sweeps, a smaller |r - M z|: the sweeps converge to M^-1 r on these diagonally dominant systems.
  const auto rows = static_cast<std::size_t>(small.system.rows());
  std::vector<double> r(rows), z(rows), mz(rows);
  for (std::size_t k = 0; k < rows; ++k) r[k] = std::sin(0.11 * static_cast<double>(k)) + 0.5;
  const BlockJacobi jacobi(small.system);
  double previous = INFINITY;
  for (const int sweeps : {1, 2, 4, 8}) {
    MulticolorGaussSeidel(small.system, jacobi.inverse(), sweeps).apply(r.data(), z.data());
    small.system.multiply(z.data(), mz.data());
    double error = 0.0;
    for (std::size_t k = 0; k < rows; ++k) error += (mz[k] - r[k]) * (mz[k] - r[k]);
    EXPECT_LT(std::sqrt(error), previous) << sweeps << " sweeps";
    previous = std::sqrt(error);
  }
}

TEST(SolveStep, GaussSeidelTakesFewerIterationsThanBlockJacobi) {
  const SmallSystem small;
  SolveOptions options;
  options.cfl = 50.0;
  options.krylov.tolerance = 1e-10;
  const auto run = [&](const char* preconditioner) {
    options.preconditioner = preconditioner;
    return solve_step(small.assembled.generated.mesh, small.assembled.generated.state, small.assembled.pattern,
                      small.assembled.reference, Orientation::kA, options);
  };
  const SolveOutcome jacobi = run(kBlockJacobi), gauss_seidel = run(kMulticolorGaussSeidel);
  EXPECT_LE(jacobi.relative_residual, 1e-10);
  EXPECT_LE(gauss_seidel.relative_residual, 1e-10);
  EXPECT_LT(gauss_seidel.krylov.iterations, jacobi.krylov.iterations);
}

TEST(LocalTimeStep, TheShiftFallsAsTheCflRisesAndNeedsAPhysicalState) {
  const GeneratedMesh generated = test::generate_mesh("mixed", 3);
  const std::vector<double> at_10 = local_time_step_shift(generated.mesh, generated.state, 10.0);
  const std::vector<double> at_1000 = local_time_step_shift(generated.mesh, generated.state, 1000.0);
  for (std::size_t i = 0; i < at_10.size(); ++i) {
    EXPECT_GT(at_10[i], 0.0) << i;
    EXPECT_NEAR(at_1000[i] * 100.0, at_10[i], 1e-12 * at_10[i]) << i;
  }
  FlowState bad = generated.state;
  bad.Q[kBlock * 7] = -1.0;  // negative density at node 7
  test::expect_invalid([&] { local_time_step_shift(generated.mesh, bad, 10.0); }, {"node 7", "density"});
}

TEST(SolveStep, RefusesANonFiniteResidualAndTheTransposeBeforeSolving) {
  SmallSystem small;
  const EdgeMesh& mesh = small.assembled.generated.mesh;
  const FlowState& state = small.assembled.generated.state;
  Jacobian jacobian = small.assembled.reference;
  const SolveOptions options;
  EXPECT_THROW(solve_step(mesh, state, small.assembled.pattern, jacobian, Orientation::kTransposed, options), Error);
  jacobian.residual[5 * 4 + 2] = std::nan("");
  test::expect_invalid([&] { solve_step(mesh, state, small.assembled.pattern, jacobian, Orientation::kA, options); },
                       {"node 4", "component 2", "finite"});
}

}  // namespace
}  // namespace fluxjac

namespace fluxjac {
namespace {

/// bfloat16 from float32 bits, rounded to the nearest, ties to even: the conversion of CUDA's __float2bfloat16_rn.
float bf16_of_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

TEST(AoffPrecision, Bf16RoundsToTheNearestWithTiesToEvenFromDouble) {
  EXPECT_EQ(round_to_bf16(1.0), 1.0f);
  EXPECT_EQ(round_to_bf16(1.0 + std::ldexp(1.0, -8)), 1.0f);  // a tie: to the even 1.0
  EXPECT_EQ(round_to_bf16(1.0 + 3 * std::ldexp(1.0, -8)), static_cast<float>(1.0 + std::ldexp(1.0, -6)));
  EXPECT_EQ(round_to_bf16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)),
            static_cast<float>(1.0 + std::ldexp(1.0, -7)))
      << "above the tie by less than float32 resolves: rounded from the double, not twice";
  EXPECT_EQ(round_to_bf16(-0.0), -0.0f);
  EXPECT_EQ(round_to_bf16(1e-40), bf16_of_float(static_cast<float>(1e-40)));  // float32's subnormals
  // Every float32 that is a double exactly: the same bits as the float32 conversion CUDA uses.
  std::mt19937 random(7);
  std::uniform_real_distribution<double> exponent(-60.0, 60.0), sign(-1.0, 1.0);
  for (int k = 0; k < 100000; ++k) {
    const float value = static_cast<float>(std::copysign(std::exp2(exponent(random)), sign(random)));
    ASSERT_EQ(round_to_bf16(value), bf16_of_float(value)) << value;
  }
}

TEST(AoffPrecision, Bf16RoundsTheFloat64AoffAndF64NeedsIt) {
  Jacobian jacobian;
  jacobian.aoff = {1.0f, 3.0f};
  EXPECT_THROW(apply_aoff_precision(jacobian, AoffPrecision::kF64), Error);
  jacobian.aoff_f64 = {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30), 3.0};
  apply_aoff_precision(jacobian, AoffPrecision::kF32);
  EXPECT_EQ(jacobian.aoff[0], 1.0f);
  apply_aoff_precision(jacobian, AoffPrecision::kBf16);
  EXPECT_EQ(jacobian.aoff[0], static_cast<float>(1.0 + std::ldexp(1.0, -7))) << "from the float64 value";
  EXPECT_EQ(jacobian.aoff[1], 3.0f);
}

}  // namespace
}  // namespace fluxjac
