// fluxjac — the 3D Roe flux with Harten's entropy fix, written once for every scalar type.
//
// Source: K. Masatsuka, "I do like CFD", EDU3D subroutine roe_ddt (cfdbooks.com), the flux behind
// Zubair et al., "Efficient GPU Implementation of Automatic Differentiation for Computational Fluid
// Dynamics", HiPC 2023. Sums run left to right and brackets are exactly those of docs/design.md, "The Roe flux,
// exactly", so a double evaluation without FMA contraction is bit-identical to the Fortran code.
//
// T is the scalar type of the left state and of the result (double, a dual type, an expression-template
// dual); TO is the type of the right state. AD variants differentiate with respect to the left state only
// (TO = double) and get the right-state derivatives from the symmetry F(QR, QL, -n) = -F(QL, QR, n).
//
// Divisions that stay plain doubles in the AD variants (the right state's, and gas.hpp's primitive conversions) are
// written divide(a, b) (ad/device_math.hpp): the IEEE quotient on the host, so that the bits above hold; on the GPU
// a reciprocal without the slow path, as the AD types divide there. A division by gamma - 1 is
// divide_by_constant(a, c, 1 / c): a multiply by the constant inverse on the GPU.
#pragma once

#include <type_traits>

#include "ad/dual.hpp"
#include "physics/gas.hpp"
#include "types.hpp"

namespace fluxjac {

/// Unit normal of a dual face, pointing from the left node to the right node. Real is double except where the
/// work model counts operations (ad/counting_real.hpp).
template <class Real>
struct BasicFaceNormal {
  Real x, y, z;
  FLUXJAC_HD BasicFaceNormal flipped() const { return {-x, -y, -z}; }
};
using FaceNormal = BasicFaceNormal<double>;

/// \brief Harten's entropy fix: smooth |lambda| below delta (delta depends on the state and is
/// differentiated too). Comparisons use values only.
template <class T>
FLUXJAC_HD FLUXJAC_FORCEINLINE void harten_entropy_fix(T& wave_speed, const T& delta) {
  if (value_of(wave_speed) < value_of(delta)) wave_speed = 0.5 * ((wave_speed * wave_speed) / delta + delta);
}

/// \brief Harten's entropy fix on a one-derivative Dual: the operations of the generic form, bit for bit, with the
/// fixed speed's value computed on both paths and selected, so that only the derivative branches. The value work then
/// has no control flow, and dn_2's unrolled passes over the same values share it (kernels/assembly/lane_work.hpp,
/// SeededPasses). Dual<5> keeps the generic form: computing the value on both paths costs dn5_2 registers.
template <int N, class R, std::enable_if_t<N == 1, int> = 0>
FLUXJAC_HD FLUXJAC_FORCEINLINE void harten_entropy_fix(Dual<N, R>& wave_speed, const Dual<N, R>& delta) {
  const R square = wave_speed.v * wave_speed.v;
  const R inverse_delta = reciprocal(delta.v);
  const R square_over_delta = quotient(square, delta.v, inverse_delta);
  const R fixed = 0.5 * (square_over_delta + delta.v);
  const bool fires = wave_speed.v < delta.v;
  if (fires) {
    const R square_d = wave_speed.d[0] * wave_speed.v + wave_speed.v * wave_speed.d[0];
    wave_speed.d[0] = 0.5 * ((square_d - square_over_delta * delta.d[0]) * inverse_delta + delta.d[0]);
  }
  wave_speed.v = fires ? fixed : wave_speed.v;
}

/// \brief Roe flux per unit area F(left, right, n) from primitive states (the paper's Algorithm 3 input).
template <class T, class TO, class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void roe_flux(const Primitive<T>& left, const Primitive<TO>& right,
                                             const BasicFaceNormal<Real>& n, T flux[kBlock]) {
  // ---- physical fluxes of each side -----------------------------------------------------------
  const T normal_velocity_left = (left.u * n.x + left.v * n.y) + left.w * n.z;
  const TO normal_velocity_right = (right.u * n.x + right.v * n.y) + right.w * n.z;
  const T sound_speed_left = sqrt(divide(kGamma * left.p, left.rho));
  const TO sound_speed_right = sqrt(divide(kGamma * right.p, right.rho));
  const T total_enthalpy_left =
      divide_by_constant(sound_speed_left * sound_speed_left, kGammaMinusOne, kInverseGammaMinusOne) +
      0.5 * ((left.u * left.u + left.v * left.v) + left.w * left.w);
  const TO total_enthalpy_right =
      divide_by_constant(sound_speed_right * sound_speed_right, kGammaMinusOne, kInverseGammaMinusOne) +
      0.5 * ((right.u * right.u + right.v * right.v) + right.w * right.w);

  // ---- Roe averages -----------------------------------------------------------------------------
  const T roe_ratio = sqrt(right.rho / left.rho);
  const T rho = roe_ratio * left.rho;
  const T denominator = 1.0 + roe_ratio;
  const T u = (left.u + roe_ratio * right.u) / denominator;
  const T v = (left.v + roe_ratio * right.v) / denominator;
  const T w = (left.w + roe_ratio * right.w) / denominator;
  const T enthalpy = (total_enthalpy_left + roe_ratio * total_enthalpy_right) / denominator;
  const T kinetic = 0.5 * ((u * u + v * v) + w * w);
  const T a = sqrt(kGammaMinusOne * (enthalpy - kinetic));
  const T qn = (u * n.x + v * n.y) + w * n.z;

  // ---- wave strengths ---------------------------------------------------------------------------
  const T drho = right.rho - left.rho;
  const T dp = right.p - left.p;
  const T dqn = normal_velocity_right - normal_velocity_left;
  const T du = right.u - left.u;
  const T dv = right.v - left.v;
  const T dw = right.w - left.w;
  const T rho_a_dqn = (rho * a) * dqn;
  const T two_a_a = (2.0 * a) * a;
  const T strength_acoustic_minus = (dp - rho_a_dqn) / two_a_a;
  const T strength_entropy = drho - dp / (a * a);
  const T strength_acoustic_plus = (dp + rho_a_dqn) / two_a_a;
  const T& strength_shear = rho;

  // ---- wave speeds with Harten's entropy fix on all four waves ----------------------------------
  T ws1 = abs(qn - a);
  T ws2 = abs(qn);
  T ws3 = abs(qn + a);
  T ws4 = ws2;
  const T delta = 0.2 * a;
  harten_entropy_fix(ws1, delta);
  harten_entropy_fix(ws2, delta);
  harten_entropy_fix(ws3, delta);
  harten_entropy_fix(ws4, delta);

  // ---- dissipation: sum of wave strength x speed x right eigenvector (shear waves combined) ----
  const T c1 = ws1 * strength_acoustic_minus;
  const T c2 = ws2 * strength_entropy;
  const T c3 = ws3 * strength_acoustic_plus;
  const T c4 = ws4 * strength_shear;
  const T diss_mass = (c1 + c2) + c3;  // r1_0 = r2_0 = r3_0 = 1 and r4_0 = 0 add nothing
  const T diss_x = ((c1 * (u - a * n.x) + c2 * u) + c3 * (u + a * n.x)) + c4 * (du - dqn * n.x);
  const T diss_y = ((c1 * (v - a * n.y) + c2 * v) + c3 * (v + a * n.y)) + c4 * (dv - dqn * n.y);
  const T diss_z = ((c1 * (w - a * n.z) + c2 * w) + c3 * (w + a * n.z)) + c4 * (dw - dqn * n.z);
  const T diss_energy = ((c1 * (enthalpy - a * qn) + c2 * kinetic) + c3 * (enthalpy + a * qn)) +
                        c4 * (((u * du + v * dv) + w * dw) - qn * dqn);

  // ---- central part plus dissipation ------------------------------------------------------------
  const T mass_left = left.rho * normal_velocity_left;
  const TO mass_right = right.rho * normal_velocity_right;
  flux[0] = 0.5 * ((mass_left + mass_right) - diss_mass);
  flux[1] = 0.5 * (((mass_left * left.u + left.p * n.x) + (mass_right * right.u + right.p * n.x)) - diss_x);
  flux[2] = 0.5 * (((mass_left * left.v + left.p * n.y) + (mass_right * right.v + right.p * n.y)) - diss_y);
  flux[3] = 0.5 * (((mass_left * left.w + left.p * n.z) + (mass_right * right.w + right.p * n.z)) - diss_z);
  flux[4] = 0.5 * ((mass_left * total_enthalpy_left + mass_right * total_enthalpy_right) - diss_energy);
}

/// \brief Roe flux per unit area from conservative states (the paper's Algorithm 4 input).
template <class T, class TO, class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void roe_flux_conservative(const T left[kBlock], const TO right[kBlock],
                                                          const BasicFaceNormal<Real>& n, T flux[kBlock]) {
  roe_flux(primitive_from_conservative(left), primitive_from_conservative(right), n, flux);
}

}  // namespace fluxjac
