// fluxjac — forward-mode dual numbers with N derivative components.
//
// Dual<1> is the paper's DualNum, Dual<5> its DualNum5 and Dual<10> the multivariate dual of the CPU
// reference. Every operation computes the value exactly as plain double arithmetic would, so a flux
// evaluated on duals has bit-identical values to the same flux on doubles.
#pragma once

#include <cmath>

#include "types.hpp"

namespace fluxjac {

template <int N>
struct Dual {
  static constexpr int kDerivatives = N;
  double v;     ///< value
  double d[N];  ///< derivative components

  Dual() = default;
  /// A constant: value x, all derivatives zero.
  FLUXJAC_HD constexpr Dual(double x) : v(x), d{} {}  // NOLINT(google-explicit-constructor)
};

using DualNum = Dual<1>;
using DualNum5 = Dual<5>;

/// \brief Value of a scalar or dual; comparisons in the flux use values only.
FLUXJAC_HD inline double value_of(double x) { return x; }

// Plain-double overloads so that unqualified sqrt/abs in the flux template resolve inside fluxjac.
FLUXJAC_HD FLUXJAC_FORCEINLINE double sqrt(double x) { return ::sqrt(x); }
FLUXJAC_HD FLUXJAC_FORCEINLINE double abs(double x) { return x < 0.0 ? -x : x; }
template <int N>
FLUXJAC_HD inline double value_of(const Dual<N>& x) {
  return x.v;
}

// ---- arithmetic: dual with dual -------------------------------------------------------------
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator+(const Dual<N>& a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a.v + b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator-(const Dual<N>& a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a.v - b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator-(const Dual<N>& a) {
  Dual<N> r;
  r.v = -a.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator*(const Dual<N>& a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a.v * b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator/(const Dual<N>& a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a.v / b.v;
  const double inv = 1.0 / b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
  return r;
}

// ---- arithmetic: dual with constant ---------------------------------------------------------
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator+(const Dual<N>& a, double b) {
  Dual<N> r = a;
  r.v = a.v + b;
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator+(double a, const Dual<N>& b) {
  Dual<N> r = b;
  r.v = a + b.v;
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator-(const Dual<N>& a, double b) {
  Dual<N> r = a;
  r.v = a.v - b;
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator-(double a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a - b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = -b.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator*(const Dual<N>& a, double b) {
  Dual<N> r;
  r.v = a.v * b;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b;
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator*(double a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a * b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a * b.d[i];
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator/(const Dual<N>& a, double b) {
  Dual<N> r;
  r.v = a.v / b;
  const double inv = 1.0 / b;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * inv;
  return r;
}
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> operator/(double a, const Dual<N>& b) {
  Dual<N> r;
  r.v = a / b.v;
  const double scale = -r.v / b.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = scale * b.d[i];
  return r;
}

// ---- elementary functions -------------------------------------------------------------------
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> sqrt(const Dual<N>& a) {
  Dual<N> r;
  r.v = ::sqrt(a.v);
  const double half_inv = 0.5 / r.v;
FLUXJAC_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * half_inv;
  return r;
}
/// |x| takes the sign of the value; at exactly zero the derivative is +x'.
template <int N>
FLUXJAC_HD FLUXJAC_FORCEINLINE Dual<N> abs(const Dual<N>& a) {
  return a.v < 0.0 ? -a : a;
}

}  // namespace fluxjac
