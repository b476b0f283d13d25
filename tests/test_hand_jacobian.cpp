// ctest-label: unit
// The hand-differentiated Roe Jacobian (hd variant) against the Fortran vectors and the multivariate dual
// of ten, on random states that hit every branch of the entropy fix; its flux must agree to round-off.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "physics/roe_flux.hpp"
#include "physics/roe_jacobian_hd.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

using test::FluxCase;

FaceNormal normal_of(const FluxCase& c) { return FaceNormal{c.normal[0], c.normal[1], c.normal[2]}; }

double max_abs(const double jacobian[5][10]) {
  double scale = 0.0;
  for (int m = 0; m < 5; ++m)
    for (int k = 0; k < 10; ++k) scale = std::max(scale, std::abs(jacobian[m][k]));
  return scale;
}

std::string describe_state(const double left[5], const double right[5], const FaceNormal& n) {
  std::ostringstream out;
  out.precision(17);
  out << "UL =";
  for (int k = 0; k < 5; ++k) out << ' ' << left[k];
  out << ", UR =";
  for (int k = 0; k < 5; ++k) out << ' ' << right[k];
  out << ", n = " << n.x << ' ' << n.y << ' ' << n.z;
  return out.str();
}

/// Largest |flux - expected| relative to max|expected|.
double flux_error(const double flux[5], const double expected[5]) {
  double error = 0.0, scale = 0.0;
  for (int m = 0; m < 5; ++m) {
    error = std::max(error, std::abs(flux[m] - expected[m]));
    scale = std::max(scale, std::abs(expected[m]));
  }
  return error / scale;
}

/// Largest |hd - expected| over both blocks, relative to max|expected|.
double hd_error(const double left[5], const double right[5], const FaceNormal& n, const double expected[5][10]) {
  double flux[5], dleft[5][5], dright[5][5];
  roe_flux_jacobian_hd_both(left, right, n, flux, dleft, dright);
  double error = 0.0;
  for (int m = 0; m < 5; ++m)
    for (int k = 0; k < 5; ++k) {
      error = std::max(error, std::abs(dleft[m][k] - expected[m][k]));
      error = std::max(error, std::abs(dright[m][k] - expected[m][5 + k]));
    }
  return error / max_abs(expected);
}

// hd inverts each divisor once instead of dividing (about 30 divisions became 4), so its flux may differ
// from the bit-exact template in the last bits.
TEST(HandJacobian, FluxMatchesTheFortranVectorsToRoundOff) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double flux[5], jacobian[5][5];
    roe_flux_jacobian_hd(c.left.data(), c.right.data(), normal_of(c), flux, jacobian);
    EXPECT_LE(flux_error(flux, c.flux.data()), 1e-14) << "case " << i;
  }
}

TEST(HandJacobian, MatchesTheFortranJacobianOnBothSides) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    const double scale = max_abs(c.jacobian);
    double flux[5], dleft[5][5], dright[5][5];
    roe_flux_jacobian_hd_both(c.left.data(), c.right.data(), normal_of(c), flux, dleft, dright);
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 5; ++k) {
        EXPECT_LE(std::abs(dleft[m][k] - c.jacobian[m][k]) / scale, 1e-14)
            << "case " << i << " dF" << m << "/dUL" << k << " = " << dleft[m][k] << " expected " << c.jacobian[m][k];
        EXPECT_LE(std::abs(dright[m][k] - c.jacobian[m][5 + k]) / scale, 1e-14)
            << "case " << i << " dF" << m << "/dUR" << k << " = " << dright[m][k] << " expected "
            << c.jacobian[m][5 + k];
      }
  }
}

/// Branches of the entropy fix and signs of the Roe normal velocity seen by a set of states.
struct BranchHits {
  int acoustic_minus = 0;  // |qn - a| < 0.2 a
  int entropy_shear = 0;   // |qn| < 0.2 a
  int acoustic_plus = 0;   // |qn + a| < 0.2 a
  int no_fix = 0;
  int negative_qn = 0;
  int positive_qn = 0;

  void record(double qn, double a) {
    const double delta = 0.2 * a;
    const bool minus = std::abs(qn - a) < delta, shear = std::abs(qn) < delta, plus = std::abs(qn + a) < delta;
    acoustic_minus += minus;
    entropy_shear += shear;
    acoustic_plus += plus;
    no_fix += !minus && !shear && !plus;
    negative_qn += qn < 0.0;
    positive_qn += qn > 0.0;
  }
};

/// \brief Random face states whose Roe normal Mach number is steered near 0, +1, -1 or anywhere in
/// [-2.5, 2.5], so that every entropy-fix branch is exercised.
class RandomFaces {
 public:
  explicit RandomFaces(unsigned seed) : engine_(seed) {}

  void next(double left[5], double right[5], FaceNormal& n) {
    const double nx = normal_(engine_), ny = normal_(engine_), nz = normal_(engine_);
    const double length = std::sqrt(nx * nx + ny * ny + nz * nz);
    n = FaceNormal{nx / length, ny / length, nz / length};
    static constexpr double kTargets[4] = {0.0, 1.0, -1.0, 0.0};
    const int kind = static_cast<int>(count_++ % 4);
    const double mach = kind == 3 ? uniform(-2.5, 2.5) : kTargets[kind] + uniform(-0.25, 0.25);
    side(mach, n, left);
    side(mach + uniform(-0.1, 0.1), n, right);
  }

 private:
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }

  void side(double normal_mach, const FaceNormal& n, double U[5]) {
    const double rho = uniform(0.3, 3.0);
    const double p = uniform(0.3, 3.0);
    const double a = std::sqrt(1.4 * p / rho);
    const double tangential[3] = {uniform(-0.8, 0.8) * a, uniform(-0.8, 0.8) * a, uniform(-0.8, 0.8) * a};
    const double along = (tangential[0] * n.x + tangential[1] * n.y) + tangential[2] * n.z;
    const double normal[3] = {n.x, n.y, n.z};
    double vel[3];
    for (int j = 0; j < 3; ++j) vel[j] = (tangential[j] - along * normal[j]) + normal_mach * a * normal[j];
    U[0] = rho;
    for (int j = 0; j < 3; ++j) U[1 + j] = rho * vel[j];
    U[4] = p / 0.4 + 0.5 * rho * ((vel[0] * vel[0] + vel[1] * vel[1]) + vel[2] * vel[2]);
  }

  std::mt19937_64 engine_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  unsigned long count_ = 0;
};

TEST(HandJacobian, AgreesWithDualTenOnRandomStatesCoveringEveryEntropyFixBranch) {
  RandomFaces faces(20230917u);
  BranchHits hits;
  double worst = 0.0;
  for (int s = 0; s < 1000; ++s) {
    double left[5], right[5];
    FaceNormal n{};
    faces.next(left, right, n);
    roe_hd_detail::RoeLinearization roe;
    double flux[5];
    roe.evaluate(left, right, n, flux);
    hits.record(roe.qn, roe.a);

    double expected_flux[5], expected[5][10];
    roe_flux_conservative(left, right, n, expected_flux);
    test::reference_face_jacobian(left, right, n, expected);
    const double error = hd_error(left, right, n, expected);
    worst = std::max(worst, error);
    ASSERT_LE(error, 1e-13) << "state " << s << ": " << describe_state(left, right, n);
    ASSERT_LE(flux_error(flux, expected_flux), 1e-14) << "state " << s << ": " << describe_state(left, right, n);
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  EXPECT_GE(hits.acoustic_minus, 50);
  EXPECT_GE(hits.entropy_shear, 50);
  EXPECT_GE(hits.acoustic_plus, 50);
  EXPECT_GE(hits.no_fix, 50);
  EXPECT_GE(hits.negative_qn, 50);
  EXPECT_GE(hits.positive_qn, 50);
}

TEST(HandJacobian, DerivativeAtExactlySonicAndStagnantRoeStates) {
  // Same state on both sides: the entropy fix is active and the dissipation derivative is all fix terms.
  const FaceNormal n{0.6, 0.0, 0.8};
  const double rho = 1.1, p = 0.9, a = std::sqrt(1.4 * p / rho);
  for (double mach : {0.0, 1.0, -1.0, 0.05, 0.97}) {
    const double vel[3] = {mach * a * n.x + 0.1, mach * a * n.y, mach * a * n.z - 0.075};
    double U[5] = {rho, rho * vel[0], rho * vel[1], rho * vel[2], 0.0};
    U[4] = p / 0.4 + 0.5 * rho * ((vel[0] * vel[0] + vel[1] * vel[1]) + vel[2] * vel[2]);
    double expected[5][10];
    test::reference_face_jacobian(U, U, n, expected);
    EXPECT_LE(hd_error(U, U, n, expected), 1e-13) << "Mach " << mach;
  }
}

}  // namespace
}  // namespace fluxjac
