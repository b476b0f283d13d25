// fluxjac — the reciprocal, division and square root that the flux template and the AD types take on the GPU (hd
// keeps IEEE for its own four reciprocals and two square roots: no gain, and 6% slower, measured).
//
// nvcc's IEEE double division and square root are a hardware approximation refined by Newton steps, a range check
// and a called slow path (denormals, overflow). The call makes ptxas keep registers live across it (the spills that
// ptxas lists under __cuda_sm20_div_rn_f64_full), and a dual division used to take two of them: the quotient and
// the reciprocal for its derivatives. On the device these helpers take the approximation and refine it without the
// check: a reciprocal is MUFU.RCP64H, one cubic and one Newton step (5 DFMA); a square root starts from the
// single-precision MUFU.RSQ of the argument rounded to float, takes two Newton steps and one correction of the root,
// and gives 1/sqrt on the way. Both are within an ulp or two of the IEEE result for the positive normal numbers the
// flux divides by (densities, pressures, sound speeds, Roe denominators; the mesh reader refuses non-positive density
// and pressure), and the Jacobian's validation bounds what that changes (docs/design.md, "Validation"). Zero gives
// infinity (a square root of zero NaN), denormals are flushed; a square root's argument must lie in float's normal
// range (about 1.2e-38 to 3.4e38), which every flux argument of a physical state does.
//
// Both approximations are compiler intrinsics, not inline assembly: nvcc can then merge repeated ones and everything
// computed from them (dn_2's five passes compute the flux value once: kernels/assembly/lane_work.hpp, SeededPasses).
// The double-precision MUFU.RSQ64H has no intrinsic without a called slow path for denormals.
//
// On the host each helper is the plain IEEE operation, so the CPU reference, the CPU emulation of every variant and
// the flux value stay bit-exact (docs/design.md, "The Roe flux, exactly"). Real other than double (the work model's
// CountingReal) takes the generic templates, which do the same operations as the device sequence where that matters for
// the count.
#pragma once

#include <cmath>

#include "types.hpp"

namespace fluxjac {

/// 1 / x (see the top of this file).
FLUXJAC_HD FLUXJAC_FORCEINLINE double reciprocal(double x) {
#if defined(__CUDA_ARCH__)
  double r = __nvvm_rcp_approx_ftz_d(x);  // MUFU.RCP64H
  const double e = fma(-x, r, 1.0);       // cubic step: r (1 + e + e^2)
  r = fma(fma(e, e, e), r, r);
  return fma(r, fma(-x, r, 1.0), r);  // Newton step
#else
  return 1.0 / x;
#endif
}
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real reciprocal(const Real& x) {
  return Real(1.0) / x;
}

/// a / b, given inverse = reciprocal(b): one multiply on the device, the IEEE quotient on the host.
FLUXJAC_HD FLUXJAC_FORCEINLINE double quotient(double a, double b, double inverse) {
#if defined(__CUDA_ARCH__)
  (void)b;
  return a * inverse;
#else
  (void)inverse;
  return a / b;
#endif
}
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real quotient(const Real& a, const Real&, const Real& inverse) {
  return a * inverse;
}

/// \brief a / b of plain doubles (see the top of this file): on the device a times reciprocal(b), on the host the IEEE
/// quotient. The flux template divides with it wherever both operands may be doubles; other types keep operator/.
FLUXJAC_HD FLUXJAC_FORCEINLINE double divide(double a, double b) {
#if defined(__CUDA_ARCH__)
  return a * reciprocal(b);
#else
  return a / b;
#endif
}
// By reference: an expression-template dual (ad/expr_dual.hpp) refers to its operands, so copies would dangle.
template <class A, class B>
FLUXJAC_HD FLUXJAC_FORCEINLINE auto divide(const A& a, const B& b) {
  return a / b;
}
// A double divisor by value: a constexpr one (kGammaMinusOne) must not be odr-used in device code.
template <class A>
FLUXJAC_HD FLUXJAC_FORCEINLINE auto divide(const A& a, double b) {
  return a / b;
}

/// \brief a / c for a constant c given its inverse as a constant too (kGammaMinusOne, kInverseGammaMinusOne): on the
/// device a times the inverse (divide()'s reciprocal is inline assembly, which the compiler cannot fold), on the host
/// the IEEE quotient. Other types divide by a double constant themselves and fold its inverse.
FLUXJAC_HD FLUXJAC_FORCEINLINE double divide_by_constant(double a, double c, double inverse) {
  return quotient(a, c, inverse);
}
template <class A>
FLUXJAC_HD FLUXJAC_FORCEINLINE auto divide_by_constant(const A& a, double c, double) {
  return divide(a, c);
}

/// \brief The IEEE square root on host and device alike: hd's, whose kernel measured 6% slower with the device
/// sequence (docs/tuning.md, "Division without the slow path"). Other real types take their own sqrt.
FLUXJAC_HD FLUXJAC_FORCEINLINE double ieee_sqrt(double x) { return ::sqrt(x); }
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real ieee_sqrt(const Real& x) {
  return sqrt(x);
}

/// sqrt(x) and 1 / sqrt(x) together (see the top of this file).
FLUXJAC_HD FLUXJAC_FORCEINLINE void sqrt_with_reciprocal(double x, double& root, double& inverse_root) {
#if defined(__CUDA_ARCH__)
  double y = static_cast<double>(__nvvm_rsqrt_approx_ftz_f(static_cast<float>(x)));
  const double half_x = 0.5 * x;
  y = fma(y, fma(-half_x * y, y, 0.5), y);  // Newton steps for 1/sqrt(x): y += y (1/2 - x y^2 / 2)
  y = fma(y, fma(-half_x * y, y, 0.5), y);
  const double s = x * y;
  root = fma(fma(-s, s, x), 0.5 * y, s);  // one correction of the root: s + (x - s^2) / (2 sqrt(x))
  inverse_root = y;
#else
  root = ::sqrt(x);
  inverse_root = 1.0 / root;
#endif
}
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void sqrt_with_reciprocal(const Real& x, Real& root, Real& inverse_root) {
  root = sqrt(x);
  inverse_root = Real(1.0) / root;
}

}  // namespace fluxjac
