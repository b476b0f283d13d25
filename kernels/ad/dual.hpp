// fluxjac — forward-mode dual numbers with N derivative components.
//
// Dual<1> is the paper's DualNum, Dual<5> its DualNum5 and Dual<10> the multivariate dual of the CPU
// reference. On the host every operation computes the value exactly as plain double arithmetic would, so a flux
// evaluated on duals has bit-identical values to the same flux on doubles. On the GPU a division takes one
// reciprocal, shared by the quotient and its derivatives, and a square root gives its reciprocal on the way
// (ad/device_math.hpp): values may then differ from plain double arithmetic in the last bit or two.
//
// Real is the type of the value and of each derivative component: double everywhere that computes, and
// CountingReal (ad/counting_real.hpp) where the work model counts the FP64 operations of a variant.
#pragma once

#include <cmath>

#include "ad/device_math.hpp"
#include "types.hpp"

namespace fluxjac {

template <int N, class Real = double>
struct Dual {
  static constexpr int kDerivatives = N;
  using real_type = Real;
  Real v;     ///< value
  Real d[N];  ///< derivative components

  Dual() = default;
  /// A constant: value x, all derivatives zero.
  FLUXJAC_HD constexpr Dual(Real x) : v(x), d{} {}  // NOLINT(google-explicit-constructor)
};

using DualNum = Dual<1>;
using DualNum5 = Dual<5>;

/// \brief The same AD type computing in another real type: with_real_t<Dual<5>, CountingReal> is
/// Dual<5, CountingReal>, and a plain double becomes Real itself. Lane policies name their AD type in double;
/// the work model reruns them on CountingReal through this.
template <class Scalar, class Real>
struct with_real;
template <class Real>
struct with_real<double, Real> {
  using type = Real;
};
template <int N, class From, class Real>
struct with_real<Dual<N, From>, Real> {
  using type = Dual<N, Real>;
};
template <class Scalar, class Real>
using with_real_t = typename with_real<Scalar, Real>::type;

namespace dual_detail {
/// The type itself in a non-deduced context: a constant operand converts to the dual's real type (a double
/// literal to CountingReal) instead of taking part in deduction.
template <class T>
struct identity {
  using type = T;
};
}  // namespace dual_detail
template <class T>
using real_constant = typename dual_detail::identity<T>::type;

/// \brief Value of a scalar or dual; comparisons in the flux use values only.
FLUXJAC_HD inline double value_of(double x) { return x; }

// Plain-double overloads so that unqualified sqrt/abs in the flux template resolve inside fluxjac.
// On the device a plain double's square root takes the sequence of ad/device_math.hpp, without the slow path.
FLUXJAC_HD FLUXJAC_FORCEINLINE double sqrt(double x) {
#if defined(__CUDA_ARCH__)
  double root, inverse_root;
  sqrt_with_reciprocal(x, root, inverse_root);
  return root;
#else
  return ::sqrt(x);
#endif
}
FLUXJAC_HD FLUXJAC_FORCEINLINE double abs(double x) { return x < 0.0 ? -x : x; }
template <int N, class R>
FLUXJAC_HD inline R value_of(const Dual<N, R>& x) {
  return x.v;
}

// ---- arithmetic: dual with dual -------------------------------------------------------------
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator+(const Dual<N, R>& a, const Dual<N, R>& b) {
  Dual<N, R> r;
  r.v = a.v + b.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator-(const Dual<N, R>& a, const Dual<N, R>& b) {
  Dual<N, R> r;
  r.v = a.v - b.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator-(const Dual<N, R>& a) {
  Dual<N, R> r;
  r.v = -a.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator*(const Dual<N, R>& a, const Dual<N, R>& b) {
  Dual<N, R> r;
  r.v = a.v * b.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator/(const Dual<N, R>& a, const Dual<N, R>& b) {
  Dual<N, R> r;
  const R inv = reciprocal(b.v);
  r.v = quotient(a.v, b.v, inv);
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
  return r;
}

// ---- arithmetic: dual with constant ---------------------------------------------------------
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator+(const Dual<N, R>& a, real_constant<R> b) {
  Dual<N, R> r = a;
  r.v = a.v + b;
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator+(real_constant<R> a, const Dual<N, R>& b) {
  Dual<N, R> r = b;
  r.v = a + b.v;
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator-(const Dual<N, R>& a, real_constant<R> b) {
  Dual<N, R> r = a;
  r.v = a.v - b;
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator-(real_constant<R> a, const Dual<N, R>& b) {
  Dual<N, R> r;
  r.v = a - b.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = -b.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator*(const Dual<N, R>& a, real_constant<R> b) {
  Dual<N, R> r;
  r.v = a.v * b;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b;
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator*(real_constant<R> a, const Dual<N, R>& b) {
  Dual<N, R> r;
  r.v = a * b.v;
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a * b.d[i];
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator/(const Dual<N, R>& a, real_constant<R> b) {
  Dual<N, R> r;
  const R inv = 1.0 / b;  // folded where b is a constant (kGammaMinusOne)
  r.v = quotient(a.v, b, inv);
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * inv;
  return r;
}
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> operator/(real_constant<R> a, const Dual<N, R>& b) {
  Dual<N, R> r;
  const R inv = reciprocal(b.v);
  r.v = quotient(R(a), b.v, inv);
  const R scale = quotient(-r.v, b.v, inv);
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = scale * b.d[i];
  return r;
}

// ---- elementary functions -------------------------------------------------------------------
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> sqrt(const Dual<N, R>& a) {
  Dual<N, R> r;
  R inv;
  sqrt_with_reciprocal(a.v, r.v, inv);
  const R half_inv = 0.5 * inv;  // 0.5 / r.v, bit for bit: halving is exact
  FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * half_inv;
  return r;
}
/// |x| takes the sign of the value; at exactly zero the derivative is +x'.
template <int N, class R>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N, R> abs(const Dual<N, R>& a) {
  return a.v < 0.0 ? -a : a;
}

}  // namespace fluxjac
