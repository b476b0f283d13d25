// ctest-label: unit
// Dual-number arithmetic (Dual<1>, Dual<5>, Dual<10>, ExprDual<1>, ExprDual<5>) and every dual type through
// the Roe flux: against hand derivatives and central differences of composite functions, the Fortran
// Jacobians (direct Alg. 4 and seeded Alg. 3, both sides), and a complex-step differentiation of the flux.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "ad/dual.hpp"
#include "ad/expr_dual.hpp"
#include "physics/gas.hpp"
#include "physics/roe_flux.hpp"
#include "test_support.hpp"

namespace fluxjac {

/// A minimal complex-step scalar z = re + i im (Squire & Trapp 1998; Martins et al. 2003): f(x + ih)
/// = f(x) + ih f'(x) + O(h^2), so im/h is the derivative without subtractive cancellation. It lives in its
/// own namespace so that its sqrt/abs/value_of are found by argument-dependent lookup from the flux.
namespace complex_step {

struct ComplexStep {
  double re, im;
  ComplexStep() = default;
  ComplexStep(double x) : re(x), im(0.0) {}  // NOLINT(google-explicit-constructor)
  ComplexStep(double r, double i) : re(r), im(i) {}
};

inline ComplexStep operator+(ComplexStep a, ComplexStep b) { return {a.re + b.re, a.im + b.im}; }
inline ComplexStep operator-(ComplexStep a, ComplexStep b) { return {a.re - b.re, a.im - b.im}; }
inline ComplexStep operator-(ComplexStep a) { return {-a.re, -a.im}; }
inline ComplexStep operator*(ComplexStep a, ComplexStep b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
inline ComplexStep operator/(ComplexStep a, ComplexStep b) {
  const double norm = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / norm, (a.im * b.re - a.re * b.im) / norm};
}
inline ComplexStep operator+(ComplexStep a, double b) { return a + ComplexStep(b); }
inline ComplexStep operator+(double a, ComplexStep b) { return ComplexStep(a) + b; }
inline ComplexStep operator-(ComplexStep a, double b) { return a - ComplexStep(b); }
inline ComplexStep operator-(double a, ComplexStep b) { return ComplexStep(a) - b; }
inline ComplexStep operator*(ComplexStep a, double b) { return {a.re * b, a.im * b}; }
inline ComplexStep operator*(double a, ComplexStep b) { return {a * b.re, a * b.im}; }
inline ComplexStep operator/(ComplexStep a, double b) { return {a.re / b, a.im / b}; }
inline ComplexStep operator/(double a, ComplexStep b) { return ComplexStep(a) / b; }
/// Principal square root for re > 0 to first order in im (the O(im^2) terms vanish below double precision).
inline ComplexStep sqrt(ComplexStep a) {
  const double root = std::sqrt(a.re);
  return {root, a.im / (2.0 * root)};
}
/// The analytic continuation of |x|: the sign of the real part times z (not the modulus).
inline ComplexStep abs(ComplexStep a) { return a.re < 0.0 ? -a : a; }
inline double value_of(ComplexStep a) { return a.re; }

}  // namespace complex_step

namespace {

using complex_step::ComplexStep;
using test::FluxCase;

FaceNormal normal_of(const FluxCase& c) { return FaceNormal{c.normal[0], c.normal[1], c.normal[2]}; }

double max_abs_jacobian(const FluxCase& c) {
  double scale = 0.0;
  for (const auto& row : c.jacobian)
    for (double x : row) scale = std::max(scale, std::abs(x));
  return scale;
}

// ---- composite functions with hand derivatives ---------------------------------------------------
// Each has value(x, y) written once for double and every dual type, and its partials fx, fy by hand.

struct QuotientOfSums {  // (x y + 2) / (y - 0.5 x)
  template <class T>
  static T value(const T& x, const T& y) {
    return (x * y + 2.0) / (y - 0.5 * x);
  }
  static void partials(double x, double y, double& fx, double& fy) {
    const double num = x * y + 2.0, den = y - 0.5 * x;
    fx = (y * den + 0.5 * num) / (den * den);
    fy = (x * den - num) / (den * den);
  }
};

struct RootTimesDifference {  // sqrt(x x + y) (3 - x)
  template <class T>
  static T value(const T& x, const T& y) {
    return sqrt(x * x + y) * (3.0 - x);
  }
  static void partials(double x, double y, double& fx, double& fy) {
    const double root = std::sqrt(x * x + y);
    fx = (x / root) * (3.0 - x) - root;
    fy = (0.5 / root) * (3.0 - x);
  }
};

struct ReciprocalMinusScaled {  // 1 / (x + y y) - y / 4
  template <class T>
  static T value(const T& x, const T& y) {
    return 1.0 / (x + y * y) - y / 4.0;
  }
  static void partials(double x, double y, double& fx, double& fy) {
    const double s = x + y * y;
    fx = -1.0 / (s * s);
    fy = -2.0 * y / (s * s) - 0.25;
  }
};

struct AbsoluteValues {  // |x - y| y - x / 2 + |-y|
  template <class T>
  static T value(const T& x, const T& y) {
    return (abs(x - y) * y - x / 2.0) + abs(-y);
  }
  static void partials(double x, double y, double& fx, double& fy) {
    const double sign_xy = x - y < 0.0 ? -1.0 : 1.0;
    const double sign_minus_y = -y < 0.0 ? -1.0 : 1.0;
    fx = sign_xy * y - 0.5;
    fy = (-sign_xy * y + std::abs(x - y)) - sign_minus_y;
  }
};

struct RationalProduct {  // (x - 1.5)(2.5 + y) / (y x), with a unary minus and constants on both sides
  template <class T>
  static T value(const T& x, const T& y) {
    return -(-(x - 1.5) * (2.5 + y) / (y * x));
  }
  static void partials(double x, double y, double& fx, double& fy) {
    fx = 1.5 * (2.5 + y) / (x * x * y);
    fy = -2.5 * (x - 1.5) / (x * y * y);
  }
};

/// Two inputs with distinct derivative seeds per component.
template <class D>
void seeded_inputs(double x, double y, D& xd, D& yd) {
  xd = D(x);
  yd = D(y);
  for (int i = 0; i < D::kDerivatives; ++i) {
    xd.d[i] = 1.0 + 0.25 * i;
    yd.d[i] = 0.5 - 0.375 * i;
  }
}

/// \brief Value bit-identical to double; derivatives equal to the hand chain rule (1e-14) and to central
/// differences along the seed direction (1e-8).
template <class D, class F>
void check_composite(double x, double y) {
  D xd, yd;
  seeded_inputs(x, y, xd, yd);
  const D result = F::value(xd, yd);
  EXPECT_EQ(result.v, F::template value<double>(x, y)) << "x = " << x << ", y = " << y;
  double fx, fy;
  F::partials(x, y, fx, fy);
  for (int i = 0; i < D::kDerivatives; ++i) {
    const double expected = fx * xd.d[i] + fy * yd.d[i];
    const double scale = std::max(1.0, std::abs(expected));
    EXPECT_LE(std::abs(result.d[i] - expected), 1e-14 * scale) << "x = " << x << ", y = " << y << ", d" << i;
    const double h = 1e-6;
    const double central = (F::template value<double>(x + h * xd.d[i], y + h * yd.d[i]) -
                            F::template value<double>(x - h * xd.d[i], y - h * yd.d[i])) /
                           (2.0 * h);
    EXPECT_LE(std::abs(result.d[i] - central), 1e-8 * scale) << "x = " << x << ", y = " << y << ", d" << i;
  }
}

// ---- Jacobians of the flux from a dual type, per the two seedings of docs/design.md, "Two ways to get dF/dQ: seeded
// and direct" -----------------

/// \brief dF/dUL by the direct seeding (Alg. 4): conservative inputs, identity seeds, ceil(5/N) passes.
/// T = D on the left, TO = double on the right.
template <class D>
void left_jacobian_direct(const double left[5], const double right[5], const FaceNormal& n, double flux[5],
                          double jacobian[5][5]) {
  constexpr int N = D::kDerivatives;
  for (int first = 0; first < 5; first += N) {
    D left_dual[5], flux_dual[5];
    for (int k = 0; k < 5; ++k) {
      left_dual[k] = D(left[k]);
      if (k >= first && k - first < N) left_dual[k].d[k - first] = 1.0;
    }
    roe_flux_conservative(left_dual, right, n, flux_dual);
    for (int m = 0; m < 5; ++m) {
      flux[m] = flux_dual[m].v;
      for (int k = first; k < std::min(first + N, 5); ++k) jacobian[m][k] = flux_dual[m].d[k - first];
    }
  }
}

/// \brief dF/dUR directly with TO = T = D: right inputs seeded, left inputs dual constants.
template <class D>
void right_jacobian_direct(const double left[5], const double right[5], const FaceNormal& n, double flux[5],
                           double jacobian[5][5]) {
  constexpr int N = D::kDerivatives;
  for (int first = 0; first < 5; first += N) {
    D left_dual[5], right_dual[5], flux_dual[5];
    for (int k = 0; k < 5; ++k) {
      left_dual[k] = D(left[k]);
      right_dual[k] = D(right[k]);
      if (k >= first && k - first < N) right_dual[k].d[k - first] = 1.0;
    }
    roe_flux_conservative(left_dual, right_dual, n, flux_dual);
    for (int m = 0; m < 5; ++m) {
      flux[m] = flux_dual[m].v;
      for (int k = first; k < std::min(first + N, 5); ++k) jacobian[m][k] = flux_dual[m].d[k - first];
    }
  }
}

/// \brief dF/dUL by the seeded primitive flux (Alg. 3): q = (rho, u, v, w, p) with seeds = columns of dq/dU.
template <class D>
void left_jacobian_seeded(const double left[5], const double right[5], const FaceNormal& n, double flux[5],
                          double jacobian[5][5]) {
  constexpr int N = D::kDerivatives;
  const Primitive<double> q_left = primitive_from_conservative(left);
  const Primitive<double> q_right = primitive_from_conservative(right);
  double dq_dU[5][5];
  primitive_jacobian(q_left, dq_dU);
  for (int first = 0; first < 5; first += N) {
    Primitive<D> q{D(q_left.rho), D(q_left.u), D(q_left.v), D(q_left.w), D(q_left.p)};
    D* const components[5] = {&q.rho, &q.u, &q.v, &q.w, &q.p};
    for (int k = first; k < std::min(first + N, 5); ++k)
      for (int i = 0; i < 5; ++i) components[i]->d[k - first] = dq_dU[i][k];
    D flux_dual[5];
    roe_flux(q, q_right, n, flux_dual);
    for (int m = 0; m < 5; ++m) {
      flux[m] = flux_dual[m].v;
      for (int k = first; k < std::min(first + N, 5); ++k) jacobian[m][k] = flux_dual[m].d[k - first];
    }
  }
}

/// Asserts |block - J[:, offset..offset+4]| <= tolerance * max|J| for one Fortran case.
void expect_block_near(const double block[5][5], const FluxCase& c, int offset, double tolerance,
                       const std::string& what) {
  const double scale = max_abs_jacobian(c);
  for (int m = 0; m < 5; ++m)
    for (int k = 0; k < 5; ++k)
      EXPECT_LE(std::abs(block[m][k] - c.jacobian[m][offset + k]) / scale, tolerance)
          << what << ": dF" << m << "/dU" << offset + k << " = " << block[m][k] << " expected "
          << c.jacobian[m][offset + k];
}

// ---- the typed suites: every dual type ------------------------------------------------------------

struct DualTypeName {
  template <class T>
  static std::string GetName(int) {
    const std::string kind = expr_detail::is_operand_v<T> ? "ExprDual" : "Dual";
    return kind + std::to_string(T::kDerivatives);
  }
};

template <class D>
class DualNumbers : public ::testing::Test {};
using DualTypes = ::testing::Types<Dual<1>, Dual<5>, Dual<10>, ExprDual<1>, ExprDual<5>>;
TYPED_TEST_SUITE(DualNumbers, DualTypes, DualTypeName);

TYPED_TEST(DualNumbers, BinaryOperatorsFollowTheChainRule) {
  using D = TypeParam;
  D x, y;
  seeded_inputs(1.75, -0.625, x, y);
  const D sum = x + y, difference = x - y, product = x * y, quotient = x / y, negated = -x;
  EXPECT_EQ(sum.v, 1.75 + -0.625);
  EXPECT_EQ(difference.v, 1.75 - -0.625);
  EXPECT_EQ(product.v, 1.75 * -0.625);
  EXPECT_EQ(quotient.v, 1.75 / -0.625);
  EXPECT_EQ(negated.v, -1.75);
  for (int i = 0; i < D::kDerivatives; ++i) {
    EXPECT_EQ(sum.d[i], x.d[i] + y.d[i]);
    EXPECT_EQ(difference.d[i], x.d[i] - y.d[i]);
    EXPECT_DOUBLE_EQ(product.d[i], x.d[i] * y.v + x.v * y.d[i]);
    EXPECT_DOUBLE_EQ(quotient.d[i], (x.d[i] * y.v - x.v * y.d[i]) / (y.v * y.v));
    EXPECT_EQ(negated.d[i], -x.d[i]);
  }
}

TYPED_TEST(DualNumbers, ConstantsOnEitherSide) {
  using D = TypeParam;
  D x, y;
  seeded_inputs(1.75, -0.625, x, y);
  const D results[8] = {x + 3.0, 3.0 + x, x - 3.0, 3.0 - x, x * 3.0, 3.0 * x, x / 4.0, 3.0 / x};
  const double values[8] = {1.75 + 3.0, 3.0 + 1.75, 1.75 - 3.0, 3.0 - 1.75,
                            1.75 * 3.0, 3.0 * 1.75, 1.75 / 4.0, 3.0 / 1.75};
  const double factors[8] = {1.0, 1.0, 1.0, -1.0, 3.0, 3.0, 0.25, -3.0 / (1.75 * 1.75)};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(results[r].v, values[r]) << "case " << r;
    for (int i = 0; i < D::kDerivatives; ++i)
      EXPECT_DOUBLE_EQ(results[r].d[i], factors[r] * x.d[i]) << "case " << r << " d" << i;
  }
  const D constant(2.5);
  EXPECT_EQ(constant.v, 2.5);
  for (int i = 0; i < D::kDerivatives; ++i) EXPECT_EQ(constant.d[i], 0.0);
}

TYPED_TEST(DualNumbers, SqrtAndAbsIncludingTheValueZeroConvention) {
  using D = TypeParam;
  D x, y;
  seeded_inputs(2.25, -0.625, x, y);
  const D root = sqrt(x), magnitude = abs(y), positive = abs(x);
  EXPECT_EQ(root.v, std::sqrt(2.25));
  EXPECT_EQ(magnitude.v, 0.625);
  const D zero_value = abs(x - 2.25);  // value exactly +0: derivative +x'
  const D minus_zero = abs(2.25 - x);  // value +0 as well (2.25 - 2.25): derivative +(-x')
  EXPECT_EQ(zero_value.v, 0.0);
  for (int i = 0; i < D::kDerivatives; ++i) {
    EXPECT_EQ(root.d[i], x.d[i] * (0.5 / 1.5));
    EXPECT_EQ(magnitude.d[i], -y.d[i]);
    EXPECT_EQ(positive.d[i], x.d[i]);
    EXPECT_EQ(zero_value.d[i], x.d[i]);
    EXPECT_EQ(minus_zero.d[i], -x.d[i]);
  }
}

TYPED_TEST(DualNumbers, CompositeFunctionsMatchHandDerivativesAndCentralDifferences) {
  using D = TypeParam;
  const double points[4][2] = {{1.3, 0.7}, {-0.4, 2.1}, {2.6, -1.9}, {0.9, 1.2}};
  for (const auto& p : points) {
    check_composite<D, QuotientOfSums>(p[0], p[1]);
    check_composite<D, ReciprocalMinusScaled>(p[0], p[1]);
    check_composite<D, AbsoluteValues>(p[0], p[1]);
    check_composite<D, RationalProduct>(p[0], p[1]);
    if (p[0] * p[0] + p[1] > 0.0) check_composite<D, RootTimesDifference>(p[0], p[1]);
  }
}

TYPED_TEST(DualNumbers, AliasedAssignmentAsInTheEntropyFix) {
  using D = TypeParam;
  D speed, delta;
  seeded_inputs(0.03, 0.2, speed, delta);
  const D before = speed;
  speed = 0.5 * ((speed * speed) / delta + delta);
  EXPECT_EQ(speed.v, 0.5 * ((0.03 * 0.03) / 0.2 + 0.2));
  const double ratio = before.v / delta.v;
  for (int i = 0; i < D::kDerivatives; ++i) {
    const double expected = ratio * before.d[i] + 0.5 * (1.0 - ratio * ratio) * delta.d[i];
    EXPECT_NEAR(speed.d[i], expected, 1e-15) << "d" << i;
  }
  // The flux's own routine on the same inputs, and copies/references as the flux uses them.
  D fixed = before;
  const D& delta_ref = delta;
  harten_entropy_fix(fixed, delta_ref);
  EXPECT_EQ(fixed.v, speed.v);
  for (int i = 0; i < D::kDerivatives; ++i) EXPECT_EQ(fixed.d[i], speed.d[i]);
}

TYPED_TEST(DualNumbers, FluxValuesAreBitIdenticalToDouble) {
  using D = TypeParam;
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double direct_flux[5], seeded_flux[5], right_flux[5], jacobian[5][5];
    left_jacobian_direct<D>(c.left.data(), c.right.data(), normal_of(c), direct_flux, jacobian);
    left_jacobian_seeded<D>(c.left.data(), c.right.data(), normal_of(c), seeded_flux, jacobian);
    right_jacobian_direct<D>(c.left.data(), c.right.data(), normal_of(c), right_flux, jacobian);
    for (int m = 0; m < 5; ++m) {
      EXPECT_EQ(direct_flux[m], c.flux[m]) << "case " << i << " F" << m;
      EXPECT_EQ(seeded_flux[m], c.flux[m]) << "case " << i << " F" << m;
      EXPECT_EQ(right_flux[m], c.flux[m]) << "case " << i << " F" << m;
    }
  }
}

TYPED_TEST(DualNumbers, DirectSeedingGivesTheFortranJacobianOnBothSides) {
  using D = TypeParam;
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    const std::string name = "case " + std::to_string(i);
    double flux[5], right_block[5][5], mirrored[5][5], block[5][5];
    left_jacobian_direct<D>(c.left.data(), c.right.data(), normal_of(c), flux, block);
    expect_block_near(block, c, 0, 1e-14, name + " left");
    // Right side through the symmetry F(QR, QL, -n) = -F(QL, QR, n), with TO = double ...
    left_jacobian_direct<D>(c.right.data(), c.left.data(), normal_of(c).flipped(), flux, mirrored);
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 5; ++k) block[m][k] = -mirrored[m][k];
    expect_block_near(block, c, 5, 1e-14, name + " right by symmetry");
    // ... and directly with TO = T.
    right_jacobian_direct<D>(c.left.data(), c.right.data(), normal_of(c), flux, right_block);
    expect_block_near(right_block, c, 5, 1e-14, name + " right direct");
  }
}

TYPED_TEST(DualNumbers, SeededPrimitiveFluxGivesTheFortranJacobianAndEqualsDirect) {
  using D = TypeParam;
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    const std::string name = "case " + std::to_string(i);
    double flux[5], seeded[5][5], direct[5][5], mirrored[5][5];
    left_jacobian_seeded<D>(c.left.data(), c.right.data(), normal_of(c), flux, seeded);
    expect_block_near(seeded, c, 0, 1e-14, name + " seeded left");
    left_jacobian_direct<D>(c.left.data(), c.right.data(), normal_of(c), flux, direct);
    const double scale = max_abs_jacobian(c);
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 5; ++k)
        EXPECT_LE(std::abs(seeded[m][k] - direct[m][k]) / scale, 1e-13) << name << " dF" << m << "/dUL" << k;
    left_jacobian_seeded<D>(c.right.data(), c.left.data(), normal_of(c).flipped(), flux, mirrored);
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 5; ++k) seeded[m][k] = -mirrored[m][k];
    expect_block_near(seeded, c, 5, 1e-14, name + " seeded right by symmetry");
  }
}

// ---- expression-template specifics ------------------------------------------------------------------

TEST(ExprDual, TreesHoldLeavesByReferenceAndNodesByValue) {
  using E = ExprDual<5>;
  using Product = ExprProduct<E, E>;
  using Scaled = ExprScale<Product>;
  static_assert(std::is_same_v<decltype(std::declval<const E&>() * std::declval<const E&>()), Product>);
  static_assert(std::is_same_v<decltype(2.0 * (std::declval<const E&>() * std::declval<const E&>())), Scaled>);
  static_assert(std::is_same_v<decltype(Product::a), const E&>, "leaves are held by const reference");
  static_assert(std::is_same_v<decltype(Scaled::a), const Product>, "interior nodes are held by value");
  static_assert(std::is_trivially_copyable_v<E> && std::is_trivially_default_constructible_v<E>);
  static_assert(sizeof(E) == 6 * sizeof(double), "same layout as Dual<5>");
  SUCCEED();
}

TEST(ExprDual, DerivativesAreBitIdenticalToDualThroughTheFlux) {
  // Node rules are those of Dual<N>, so without FMA contraction both give the same bits.
  const auto cases = test::load_flux_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double flux[5], expr1[5][5], dual1[5][5], expr5[5][5], dual5[5][5], expr_right[5][5], dual_right[5][5];
    left_jacobian_direct<ExprDual<1>>(c.left.data(), c.right.data(), normal_of(c), flux, expr1);
    left_jacobian_direct<Dual<1>>(c.left.data(), c.right.data(), normal_of(c), flux, dual1);
    left_jacobian_seeded<ExprDual<5>>(c.left.data(), c.right.data(), normal_of(c), flux, expr5);
    left_jacobian_seeded<Dual<5>>(c.left.data(), c.right.data(), normal_of(c), flux, dual5);
    right_jacobian_direct<ExprDual<5>>(c.left.data(), c.right.data(), normal_of(c), flux, expr_right);
    right_jacobian_direct<Dual<5>>(c.left.data(), c.right.data(), normal_of(c), flux, dual_right);
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(expr1[m][k], dual1[m][k]) << "case " << i << " direct dF" << m << "/dUL" << k;
        EXPECT_EQ(expr5[m][k], dual5[m][k]) << "case " << i << " seeded dF" << m << "/dUL" << k;
        EXPECT_EQ(expr_right[m][k], dual_right[m][k]) << "case " << i << " dF" << m << "/dUR" << k;
      }
  }
}

TEST(ExprDual, AssignmentReadingTheTargetInsideATree) {
  ExprDual<1> x(3.0), y(-2.0);
  x.d[0] = 1.0;
  y.d[0] = 0.5;
  // x = x*y + x/y - sqrt(x*x) reads x at every level; all of it must see the old x.
  x = x * y + x / y - sqrt(x * x);
  EXPECT_EQ(x.v, 3.0 * -2.0 + 3.0 / -2.0 - 3.0);
  const double expected = (1.0 * -2.0 + 3.0 * 0.5) + (1.0 * -2.0 - 3.0 * 0.5) / 4.0 - 1.0;
  EXPECT_DOUBLE_EQ(x.d[0], expected);
  EXPECT_EQ(value_of(x * y), x.v * y.v);
}

// ---- complex step and central differences on the flux ------------------------------------------------

TEST(DualNumComplexStep, FluxDerivativesAgreeWithDualTen) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  constexpr double h = 1e-60;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double reference[5][10];
    test::reference_face_jacobian(c.left.data(), c.right.data(), normal_of(c), reference);
    double scale = 0.0;
    for (const auto& row : reference)
      for (double x : row) scale = std::max(scale, std::abs(x));
    for (int k = 0; k < 10; ++k) {
      ComplexStep left[5], right[5], flux[5];
      for (int j = 0; j < 5; ++j) {
        left[j] = ComplexStep(c.left[j]);
        right[j] = ComplexStep(c.right[j]);
      }
      (k < 5 ? left[k] : right[k - 5]).im = h;
      roe_flux_conservative(left, right, normal_of(c), flux);
      for (int m = 0; m < 5; ++m) {
        // Full complex division rounds the real part differently from a double division: near, not equal.
        EXPECT_NEAR(flux[m].re, c.flux[m], 1e-14 * std::max(1.0, std::abs(c.flux[m]))) << "case " << i;
        EXPECT_LE(std::abs(flux[m].im / h - reference[m][k]) / scale, 1e-13)
            << "case " << i << " dF" << m << "/dU" << k << ": complex step " << flux[m].im / h << ", Dual<10> "
            << reference[m][k];
      }
    }
  }
}

TEST(DualNumComplexStep, CentralDifferencesAgreeWithDualTen) {
  const auto cases = test::load_flux_cases();
  ASSERT_EQ(cases.size(), 24u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FluxCase& c = cases[i];
    double reference[5][10];
    test::reference_face_jacobian(c.left.data(), c.right.data(), normal_of(c), reference);
    double scale = 0.0;
    for (const auto& row : reference)
      for (double x : row) scale = std::max(scale, std::abs(x));
    for (int k = 0; k < 10; ++k) {
      double states[2][10];
      const double base = k < 5 ? c.left[k] : c.right[k - 5];
      const double h = 1e-6 * std::max(1.0, std::abs(base));
      double flux[2][5];
      for (int side = 0; side < 2; ++side) {
        for (int j = 0; j < 5; ++j) states[side][j] = c.left[j], states[side][5 + j] = c.right[j];
        states[side][k] += side == 0 ? h : -h;
        roe_flux_conservative(states[side], states[side] + 5, normal_of(c), flux[side]);
      }
      for (int m = 0; m < 5; ++m) {
        const double central = (flux[0][m] - flux[1][m]) / (2.0 * h);
        EXPECT_LE(std::abs(central - reference[m][k]) / scale, 1e-7)
            << "case " << i << " dF" << m << "/dU" << k << ": central " << central << ", Dual<10> " << reference[m][k];
      }
    }
  }
}

}  // namespace
}  // namespace fluxjac
