// ctest-label: unit
// The flux template against the original Fortran vectors: double values bit-exact without FMA, and the
// Jacobian from every dual type (direct and seeded) to about 1e-14 relative.
#include <cmath>

#include "ad/dual.hpp"
#include "physics/roe_flux.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

using test::FluxCase;

double relative_error(double value, double expected, double scale) {
  return std::abs(value - expected) / std::max(scale, 1e-300);
}

/// Largest |J| of a case, the scale of Jacobian comparisons.
double jacobian_scale(const FluxCase& c) {
  double scale = 0.0;
  for (const auto& row : c.jacobian)
    for (double x : row) scale = std::max(scale, std::abs(x));
  return scale;
}

TEST(RoeFlux, DoubleMatchesFortranBitForBit) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double flux[5];
    roe_flux_conservative(c.left.data(), c.right.data(), FaceNormal{c.normal[0], c.normal[1], c.normal[2]}, flux);
    for (int m = 0; m < 5; ++m) {
      // The Fortran file prints 18 significant digits, enough to round-trip a double.
      EXPECT_EQ(flux[m], c.flux[m]) << "case " << i << " F" << m;
    }
  }
}

TEST(RoeFlux, MultivariateDualOfTenGivesTheFortranJacobian) {
  const auto cases = test::load_flux_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    Dual<10> left[5], right[5], flux[5];
    for (int k = 0; k < 5; ++k) {
      left[k] = Dual<10>(c.left[k]);
      right[k] = Dual<10>(c.right[k]);
      left[k].d[k] = 1.0;
      right[k].d[5 + k] = 1.0;
    }
    roe_flux_conservative(left, right, FaceNormal{c.normal[0], c.normal[1], c.normal[2]}, flux);
    const double scale = jacobian_scale(c);
    for (int m = 0; m < 5; ++m) {
      EXPECT_EQ(flux[m].v, flux[m].v);
      for (int k = 0; k < 10; ++k)
        EXPECT_LE(relative_error(flux[m].d[k], c.jacobian[m][k], scale), 1e-14)
            << "case " << i << " dF" << m << "/dU" << k << " = " << flux[m].d[k] << " expected " << c.jacobian[m][k];
    }
  }
}

}  // namespace
}  // namespace fluxjac
