// fluxjac — perfect-gas constants and state conversions (EDU3D conventions).
#pragma once

#include "ad/device_math.hpp"
#include "types.hpp"

namespace fluxjac {

/// Ratio of specific heats; the only value fluxjac supports.
inline constexpr double kGamma = 1.4;
/// gamma - 1 evaluated in double (0x3FD9999999999998), as the Fortran code does; never the literal 0.4.
inline constexpr double kGammaMinusOne = kGamma - 1.0;
/// 1 / (gamma - 1), for divide_by_constant (ad/device_math.hpp): the device multiplies by it.
inline constexpr double kInverseGammaMinusOne = 1.0 / kGammaMinusOne;

/// Primitive state (rho, u, v, w, p) on one side of a face.
template <class T>
struct Primitive {
  T rho, u, v, w, p;
};

/// \brief Primitive variables from conservative U = (rho, rho u, rho v, rho w, rho E), per docs/design.md, "The Roe
/// flux, exactly".
template <class T>
FLUXJAC_HD FLUXJAC_FORCEINLINE Primitive<T> primitive_from_conservative(const T U[kBlock]) {
  Primitive<T> q;
  q.rho = U[0];
  q.u = divide(U[1], U[0]);
  q.v = divide(U[2], U[0]);
  q.w = divide(U[3], U[0]);
  q.p = kGammaMinusOne * (U[4] - (0.5 * q.rho) * ((q.u * q.u + q.v * q.v) + q.w * q.w));
  return q;
}

/// \brief Hand-differentiated dq/dU for q = (rho, u, v, w, p), row-major: dq_dU[i][k] = dq_i/dU_k.
/// Used to seed the primitive-input flux (the paper's Algorithm 3).
template <class Real>
FLUXJAC_HD inline void primitive_jacobian(const Primitive<Real>& q, Real dq_dU[kBlock][kBlock]) {
  const Real inv_rho = reciprocal(q.rho);
  const Real kinetic = 0.5 * ((q.u * q.u + q.v * q.v) + q.w * q.w);
  const Real vel[3] = {q.u, q.v, q.w};
  for (int i = 0; i < kBlock; ++i)
    for (int k = 0; k < kBlock; ++k) dq_dU[i][k] = 0.0;
  dq_dU[0][0] = 1.0;
  for (int j = 0; j < 3; ++j) {
    dq_dU[1 + j][0] = -vel[j] * inv_rho;
    dq_dU[1 + j][1 + j] = inv_rho;
  }
  dq_dU[4][0] = kGammaMinusOne * kinetic;
  dq_dU[4][1] = -kGammaMinusOne * q.u;
  dq_dU[4][2] = -kGammaMinusOne * q.v;
  dq_dU[4][3] = -kGammaMinusOne * q.w;
  dq_dU[4][4] = kGammaMinusOne;
}

/// \brief Column `column` of dq/dU (see primitive_jacobian), by selects rather than an indexed array so
/// that a run-time column keeps everything in registers on the GPU.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void primitive_jacobian_column(const Primitive<Real>& q, int column,
                                                              Real dq_dUk[kBlock]) {
  const Real inv_rho = reciprocal(q.rho);
  const Real kinetic = 0.5 * ((q.u * q.u + q.v * q.v) + q.w * q.w);
  dq_dUk[0] = column == 0 ? 1.0 : 0.0;
  dq_dUk[1] = column == 0 ? -q.u * inv_rho : (column == 1 ? inv_rho : 0.0);
  dq_dUk[2] = column == 0 ? -q.v * inv_rho : (column == 2 ? inv_rho : 0.0);
  dq_dUk[3] = column == 0 ? -q.w * inv_rho : (column == 3 ? inv_rho : 0.0);
  dq_dUk[4] = column == 0   ? kGammaMinusOne * kinetic
              : column == 1 ? -kGammaMinusOne * q.u
              : column == 2 ? -kGammaMinusOne * q.v
              : column == 3 ? -kGammaMinusOne * q.w
                            : kGammaMinusOne;
}

}  // namespace fluxjac
