// fluxjac — hand-differentiated Jacobian of the Roe flux (the `hd` variant; the analytic "gold" of the
// Sacado performance tests).
//
// Same flux as physics/roe_flux.hpp (K. Masatsuka, EDU3D roe_ddt; Zubair et al., HiPC 2023), with the same
// formulas in the same order except that each divisor is inverted once (about 30 divisions became 4), so
// the value agrees with roe_flux_conservative<double, double> to a few units in the last place.
//
// Derivatives are taken with respect to the LEFT state only; the right block comes from the symmetry
// F(QR, QL, -n) = -F(QL, QR, n). The chain rule runs in the left primitive variables q = (rho, u, v, w, p):
// there the gradients are sparse (the Roe ratio depends on rho only, the Roe velocity u_j on rho and u_j,
// the pressure jump on p only, ...), and each direction dq_K is written as its own compile-time
// specialization so that structural zeros cost nothing. The four wave-strength x wave-speed products are
// linearized once into a few coefficients shared by all directions. dF/dq is then mapped to dF/dU with
// the sparse dq/dU of gas.hpp (primitive_jacobian) in one cheap pass at the end.
#pragma once

#include "physics/gas.hpp"
#include "physics/roe_flux.hpp"
#include "types.hpp"

namespace fluxjac {
namespace roe_hd_detail {

/// \brief Harten's entropy fix on one wave speed |arg|, with the linearization of the result:
/// d(speed) = scale * d(arg) + delta_weight * d(a), where delta = 0.2 a (docs/design.md, "The Roe flux, exactly").
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void wave_speed_with_fix(Real arg, Real delta, Real inverse_delta, Real& speed,
                                                        Real& scale, Real& delta_weight) {
  const Real sign = arg < 0.0 ? -1.0 : 1.0;  // |x| takes the sign of the value, +1 at zero
  speed = abs(arg);
  scale = sign;
  delta_weight = 0.0;
  if (speed < delta) {
    // ws = 0.5 (ws0^2 / delta + delta): d ws = (ws0/delta) d ws0 + 0.5 (1 - (ws0/delta)^2) d delta
    const Real ratio = speed * inverse_delta;
    speed = 0.5 * (speed * ratio + delta);
    scale = sign * ratio;
    delta_weight = 0.1 * (1.0 - ratio * ratio);  // 0.5 * d delta / d a = 0.5 * 0.2
  }
}

/// Values of one flux evaluation that its derivative needs, and chain-rule coefficients shared by the
/// five left primitive directions. Real is double except where the work model counts operations.
template <class Real>
struct BasicRoeLinearization {
  Real normal[3];
  // ---- left state --------------------------------------------------------------------------------
  Real rho_left, inverse_rho_left, vel_left[3], normal_velocity_left, enthalpy_left, mass_left;
  Real enthalpy_left_d_rho, enthalpy_left_d_p;  // dH_L/drho_L, dH_L/dp_L
  // ---- Roe averages ------------------------------------------------------------------------------
  Real half_roe_ratio;  // d(rho_roe)/d(rho_L)
  Real ratio_slope;     // d(roe_ratio)/d(rho_L) / (1 + roe_ratio)
  Real inverse_denominator;
  Real vel[3], vel_right_minus_roe[3], enthalpy, enthalpy_right_minus_roe, kinetic, qn, a, a_qn;
  Real half_gm1_over_a;  // da = half_gm1_over_a * (dH - dkinetic)
  Real rho_a, rho_a_jump_qn_d_rho;
  // ---- jumps and the shear eigenvector -----------------------------------------------------------
  Real jump_vel[3], jump_qn, shear[3], shear_energy;
  // ---- wave products c_k = ws_k * L_k, linearized: dc = c_qn dqn + c_a da + jump terms -------------
  Real c1_qn, c1_a, c1_jump;       // dc1 = c1_qn dqn + c1_a da + c1_jump (dp_jump - dY)
  Real c2_qn, c2_a, c2_rho, c2_p;  // dc2 = c2_qn dqn + c2_a da + c2_rho drho_jump - c2_p dp_jump
  Real c3_qn, c3_a, c3_jump;       // dc3 = c3_qn dqn + c3_a da + c3_jump (dp_jump + dY)
  Real c4_qn, c4_a;                // dc4 = c4_qn dqn + c4_a da + ws2 drho_roe (c2_rho = ws2)
  Real c31, c13, csum, c2, c4;

  /// \brief The flux of roe_flux_conservative<double, double>, keeping what the derivative needs. Each
  /// divisor is inverted once and multiplied (4 divisions and 2 square roots instead of about 30 and 4,
  /// which were a third of the kernel's instructions), so the value may differ from the template's in the
  /// last bits (tests/test_hand_jacobian.cpp bounds it).
  FLUXJAC_HD FLUXJAC_FORCEINLINE void evaluate(const Real left[kBlock], const Real right[kBlock],
                                               const BasicFaceNormal<Real>& n, Real flux[kBlock]) {
    normal[0] = n.x;
    normal[1] = n.y;
    normal[2] = n.z;
    // ---- primitive variables (gas.hpp primitive_from_conservative) ------------------------------
    rho_left = left[0];
    inverse_rho_left = 1.0 / rho_left;
    const Real u_left = left[1] * inverse_rho_left;
    const Real v_left = left[2] * inverse_rho_left;
    const Real w_left = left[3] * inverse_rho_left;
    const Real p_left =
        kGammaMinusOne * (left[4] - (0.5 * rho_left) * ((u_left * u_left + v_left * v_left) + w_left * w_left));
    const Real rho_right = right[0];
    const Real inverse_rho_right = 1.0 / rho_right;
    const Real u_right = right[1] * inverse_rho_right;
    const Real v_right = right[2] * inverse_rho_right;
    const Real w_right = right[3] * inverse_rho_right;
    const Real p_right =
        kGammaMinusOne * (right[4] - (0.5 * rho_right) * ((u_right * u_right + v_right * v_right) + w_right * w_right));
    vel_left[0] = u_left;
    vel_left[1] = v_left;
    vel_left[2] = w_left;

    // ---- physical fluxes of each side -----------------------------------------------------------
    normal_velocity_left = (u_left * n.x + v_left * n.y) + w_left * n.z;
    const Real normal_velocity_right = (u_right * n.x + v_right * n.y) + w_right * n.z;
    // c^2 / (gamma - 1) = gamma p / ((gamma - 1) rho): the sound speeds themselves are not needed.
    constexpr double kGammaOverGm1 = kGamma / kGammaMinusOne;
    enthalpy_left_d_p = kGammaOverGm1 * inverse_rho_left;
    const Real sound_energy_left = enthalpy_left_d_p * p_left;
    enthalpy_left = sound_energy_left + 0.5 * ((u_left * u_left + v_left * v_left) + w_left * w_left);
    const Real enthalpy_right = kGammaOverGm1 * (p_right * inverse_rho_right) +
                                0.5 * ((u_right * u_right + v_right * v_right) + w_right * w_right);
    enthalpy_left_d_rho = -sound_energy_left * inverse_rho_left;

    // ---- Roe averages -----------------------------------------------------------------------------
    const Real roe_ratio = ieee_sqrt(rho_right * inverse_rho_left);
    const Real rho = roe_ratio * rho_left;
    inverse_denominator = 1.0 / (1.0 + roe_ratio);
    vel[0] = (u_left + roe_ratio * u_right) * inverse_denominator;
    vel[1] = (v_left + roe_ratio * v_right) * inverse_denominator;
    vel[2] = (w_left + roe_ratio * w_right) * inverse_denominator;
    enthalpy = (enthalpy_left + roe_ratio * enthalpy_right) * inverse_denominator;
    kinetic = 0.5 * ((vel[0] * vel[0] + vel[1] * vel[1]) + vel[2] * vel[2]);
    a = ieee_sqrt(kGammaMinusOne * (enthalpy - kinetic));
    const Real inverse_a = 1.0 / a;
    const Real inverse_a_a = inverse_a * inverse_a;
    qn = (vel[0] * n.x + vel[1] * n.y) + vel[2] * n.z;
    half_roe_ratio = 0.5 * roe_ratio;
    ratio_slope = (-half_roe_ratio * inverse_rho_left) * inverse_denominator;
    vel_right_minus_roe[0] = u_right - vel[0];
    vel_right_minus_roe[1] = v_right - vel[1];
    vel_right_minus_roe[2] = w_right - vel[2];
    enthalpy_right_minus_roe = enthalpy_right - enthalpy;
    half_gm1_over_a = (0.5 * kGammaMinusOne) * inverse_a;

    // ---- wave strengths ---------------------------------------------------------------------------
    const Real jump_rho = rho_right - rho_left;
    const Real jump_p = p_right - p_left;
    jump_qn = normal_velocity_right - normal_velocity_left;
    jump_vel[0] = u_right - u_left;
    jump_vel[1] = v_right - v_left;
    jump_vel[2] = w_right - w_left;
    rho_a = rho * a;
    const Real rho_a_dqn = rho_a * jump_qn;
    const Real inverse_two_a_a = 0.5 * inverse_a_a;
    const Real strength_acoustic_minus = (jump_p - rho_a_dqn) * inverse_two_a_a;
    const Real strength_entropy = jump_rho - jump_p * inverse_a_a;
    const Real strength_acoustic_plus = (jump_p + rho_a_dqn) * inverse_two_a_a;
    rho_a_jump_qn_d_rho = (half_roe_ratio * a) * jump_qn;

    // ---- wave speeds with Harten's entropy fix (ws4 = ws2: same speed, same fix) -----------------
    const Real delta = 0.2 * a;
    const Real inverse_delta = 5.0 * inverse_a;
    Real ws1, ws2, ws3, scale1, scale2, scale3, weight1, weight2, weight3;
    wave_speed_with_fix(qn - a, delta, inverse_delta, ws1, scale1, weight1);
    wave_speed_with_fix(qn, delta, inverse_delta, ws2, scale2, weight2);
    wave_speed_with_fix(qn + a, delta, inverse_delta, ws3, scale3, weight3);

    // ---- dissipation ------------------------------------------------------------------------------
    const Real c1 = ws1 * strength_acoustic_minus;
    c2 = ws2 * strength_entropy;
    const Real c3 = ws3 * strength_acoustic_plus;
    c4 = ws2 * rho;
    a_qn = a * qn;
    const Real diss_mass = (c1 + c2) + c3;
    shear[0] = jump_vel[0] - jump_qn * n.x;
    shear[1] = jump_vel[1] - jump_qn * n.y;
    shear[2] = jump_vel[2] - jump_qn * n.z;
    shear_energy = ((vel[0] * jump_vel[0] + vel[1] * jump_vel[1]) + vel[2] * jump_vel[2]) - qn * jump_qn;
    const Real diss_x = ((c1 * (vel[0] - a * n.x) + c2 * vel[0]) + c3 * (vel[0] + a * n.x)) + c4 * shear[0];
    const Real diss_y = ((c1 * (vel[1] - a * n.y) + c2 * vel[1]) + c3 * (vel[1] + a * n.y)) + c4 * shear[1];
    const Real diss_z = ((c1 * (vel[2] - a * n.z) + c2 * vel[2]) + c3 * (vel[2] + a * n.z)) + c4 * shear[2];
    const Real diss_energy = ((c1 * (enthalpy - a_qn) + c2 * kinetic) + c3 * (enthalpy + a_qn)) + c4 * shear_energy;

    // ---- central part plus dissipation ------------------------------------------------------------
    mass_left = rho_left * normal_velocity_left;
    const Real mass_right = rho_right * normal_velocity_right;
    flux[0] = 0.5 * ((mass_left + mass_right) - diss_mass);
    flux[1] = 0.5 * (((mass_left * u_left + p_left * n.x) + (mass_right * u_right + p_right * n.x)) - diss_x);
    flux[2] = 0.5 * (((mass_left * v_left + p_left * n.y) + (mass_right * v_right + p_right * n.y)) - diss_y);
    flux[3] = 0.5 * (((mass_left * w_left + p_left * n.z) + (mass_right * w_right + p_right * n.z)) - diss_z);
    flux[4] = 0.5 * ((mass_left * enthalpy_left + mass_right * enthalpy_right) - diss_energy);

    // ---- linearized wave products -----------------------------------------------------------------
    // L1 = (dp - X)/(2a^2), X = (rho a) dqn: dL1 = (d dp - dX)/(2a^2) - (2 L1/a) da, and dX holds
    // rho dqn da (folded into c1_a) plus dY = (drho_roe a) dqn + (rho a) d dqn. L3 likewise with +X.
    // L2 = drho - dp/a^2: dL2 = d drho - d dp / a^2 + (2 dp / a^3) da.
    const Real rho_jump_qn = rho * jump_qn;
    c1_qn = strength_acoustic_minus * scale1;
    c1_jump = ws1 * inverse_two_a_a;
    c1_a = (strength_acoustic_minus * (weight1 - scale1) - ws1 * ((2.0 * strength_acoustic_minus) * inverse_a)) -
           c1_jump * rho_jump_qn;
    c3_qn = strength_acoustic_plus * scale3;
    c3_jump = ws3 * inverse_two_a_a;
    c3_a = (strength_acoustic_plus * (scale3 + weight3) - ws3 * ((2.0 * strength_acoustic_plus) * inverse_a)) +
           c3_jump * rho_jump_qn;
    c2_qn = strength_entropy * scale2;
    c2_a = strength_entropy * weight2 + ws2 * (((2.0 * jump_p) * inverse_a_a) * inverse_a);
    c2_rho = ws2;
    c2_p = ws2 * inverse_a_a;
    c4_qn = rho * scale2;
    c4_a = rho * weight2;
    c31 = c3 - c1;
    c13 = c1 + c3;
    csum = diss_mass;
  }

  /// \brief dF/dq_K for one left primitive direction K (0 rho, 1-3 velocity, 4 pressure).
  template <int K>
  FLUXJAC_HD FLUXJAC_FORCEINLINE void flux_derivative(Real dflux[kBlock]) const {
    static_assert(K >= 0 && K < kBlock, "primitive direction out of range");
    constexpr bool kRho = K == 0;
    constexpr bool kVelocity = K >= 1 && K <= 3;
    constexpr int j0 = kVelocity ? K - 1 : 0;  // the velocity component of this direction

    // ---- Roe averages: velocity, normal velocity, kinetic energy, enthalpy, sound speed ------------
    Real vel_d[3] = {0.0, 0.0, 0.0};
    Real qn_d = 0.0, kinetic_d = 0.0, enthalpy_d, a_d;
    if constexpr (kRho) {
      FLUXJAC_UNROLL
      for (int j = 0; j < 3; ++j) vel_d[j] = ratio_slope * vel_right_minus_roe[j];
      qn_d = (vel_d[0] * normal[0] + vel_d[1] * normal[1]) + vel_d[2] * normal[2];
      kinetic_d = (vel[0] * vel_d[0] + vel[1] * vel_d[1]) + vel[2] * vel_d[2];
      enthalpy_d = enthalpy_left_d_rho * inverse_denominator + ratio_slope * enthalpy_right_minus_roe;
      a_d = half_gm1_over_a * (enthalpy_d - kinetic_d);
    } else if constexpr (kVelocity) {
      qn_d = normal[j0] * inverse_denominator;
      kinetic_d = vel[j0] * inverse_denominator;
      enthalpy_d = vel_left[j0] * inverse_denominator;
      a_d = half_gm1_over_a * ((vel_left[j0] - vel[j0]) * inverse_denominator);
    } else {
      enthalpy_d = enthalpy_left_d_p * inverse_denominator;
      a_d = half_gm1_over_a * enthalpy_d;
    }

    // ---- wave products (their jumps: drho_L -> -1, d dqn = -n_j0, dp_L -> -1) ----------------------
    Real c1_d, c2_d, c3_d, c4_d;
    if constexpr (kRho) {
      c1_d = (c1_qn * qn_d + c1_a * a_d) - c1_jump * rho_a_jump_qn_d_rho;
      c3_d = (c3_qn * qn_d + c3_a * a_d) + c3_jump * rho_a_jump_qn_d_rho;
      c2_d = (c2_qn * qn_d + c2_a * a_d) - c2_rho;
      c4_d = (c4_qn * qn_d + c4_a * a_d) + c2_rho * half_roe_ratio;
    } else if constexpr (kVelocity) {
      const Real dy = rho_a * normal[j0];  // dY = (rho a) d dqn = -(rho a) n_j0
      c1_d = (c1_qn * qn_d + c1_a * a_d) + c1_jump * dy;
      c3_d = (c3_qn * qn_d + c3_a * a_d) - c3_jump * dy;
      c2_d = c2_qn * qn_d + c2_a * a_d;
      c4_d = c4_qn * qn_d + c4_a * a_d;
    } else {
      c1_d = c1_a * a_d - c1_jump;
      c3_d = c3_a * a_d - c3_jump;
      c2_d = c2_a * a_d + c2_p;
      c4_d = c4_a * a_d;
    }
    const Real diss_mass_d = (c1_d + c2_d) + c3_d;
    const Real c31_d = c3_d - c1_d;
    const Real normal_weight = c31_d * a + c31 * a_d;

    // ---- left physical flux -----------------------------------------------------------------------
    Real mass_left_d = 0.0, flux_left_d[3], energy_left_d;
    if constexpr (kRho) {
      mass_left_d = normal_velocity_left;
      FLUXJAC_UNROLL
      for (int j = 0; j < 3; ++j) flux_left_d[j] = normal_velocity_left * vel_left[j];
      energy_left_d = normal_velocity_left * enthalpy_left + mass_left * enthalpy_left_d_rho;
    } else if constexpr (kVelocity) {
      mass_left_d = rho_left * normal[j0];
      FLUXJAC_UNROLL
      for (int j = 0; j < 3; ++j) {
        flux_left_d[j] = mass_left_d * vel_left[j];
        if (j == j0) flux_left_d[j] += mass_left;
      }
      energy_left_d = mass_left_d * enthalpy_left + mass_left * vel_left[j0];
    } else {
      FLUXJAC_UNROLL
      for (int j = 0; j < 3; ++j) flux_left_d[j] = normal[j];
      energy_left_d = mass_left * enthalpy_left_d_p;
    }

    // ---- dissipation: d(c_sum u_j + c31 a n_j + c4 r4_j), d(c13 H + c31 a qn + c2 K + c4 r4_E) ------
    if constexpr (kRho || kVelocity) {
      dflux[0] = 0.5 * (mass_left_d - diss_mass_d);
    } else {
      dflux[0] = -0.5 * diss_mass_d;
    }
    FLUXJAC_UNROLL
    for (int j = 0; j < 3; ++j) {
      Real diss_d = (diss_mass_d * vel[j] + normal_weight * normal[j]) + c4_d * shear[j];
      if constexpr (kRho) diss_d += csum * vel_d[j];
      if constexpr (kVelocity) {
        diss_d += c4 * (normal[j0] * normal[j]);
        if (j == j0) diss_d += csum * inverse_denominator - c4;
      }
      dflux[1 + j] = 0.5 * (flux_left_d[j] - diss_d);
    }
    const Real c13_d = c1_d + c3_d;
    Real energy_d = ((((c13_d * enthalpy + c13 * enthalpy_d) + c31_d * a_qn) + c31 * (a_d * qn)) + c2_d * kinetic) +
                    c4_d * shear_energy;
    if constexpr (kRho) {
      const Real shear_energy_d =
          ((vel_d[0] * jump_vel[0] + vel_d[1] * jump_vel[1]) + vel_d[2] * jump_vel[2]) - qn_d * jump_qn;
      energy_d += (c31 * (a * qn_d) + c2 * kinetic_d) + c4 * shear_energy_d;
    } else if constexpr (kVelocity) {
      const Real shear_energy_d = ((inverse_denominator * jump_vel[j0] - vel[j0]) - qn_d * jump_qn) + qn * normal[j0];
      energy_d += (c31 * (a * qn_d) + c2 * kinetic_d) + c4 * shear_energy_d;
    }
    dflux[4] = 0.5 * (energy_left_d - energy_d);
  }
};
using RoeLinearization = BasicRoeLinearization<double>;

/// \brief Column 1+J of dF/dU before its pressure term: dF/du_J / rho, and its share -u_J dF/du_J / rho
/// of column 0.
template <int J, class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void add_velocity_column(const BasicRoeLinearization<Real>& lin, Real inverse_rho_left,
                                                        Real dflux_dleft[kBlock][kBlock]) {
  Real column[kBlock];
  lin.template flux_derivative<1 + J>(column);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) {
    const Real scaled = column[m] * inverse_rho_left;
    dflux_dleft[m][1 + J] = scaled;
    dflux_dleft[m][0] -= lin.vel_left[J] * scaled;
  }
}

}  // namespace roe_hd_detail

/// \brief Roe flux per unit area and its hand-differentiated Jacobian with respect to the left conservative
/// state: dflux_dleft[m][k] = dF_m/dUL_k (row-major). The flux agrees with roe_flux_conservative<double,
/// double> to a few units in the last place (reciprocals instead of divisions).
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void roe_flux_jacobian_hd(const Real left[kBlock], const Real right[kBlock],
                                                         const BasicFaceNormal<Real>& n, Real flux[kBlock],
                                                         Real dflux_dleft[kBlock][kBlock]) {
  roe_hd_detail::BasicRoeLinearization<Real> lin;
  lin.evaluate(left, right, n, flux);

  // dF/dU = dF/dq dq/dU with dq/dU of gas.hpp (primitive_jacobian): dF/dU_4 = gm1 dF/dp,
  // dF/dU_{1+j} = dF/du_j / rho - u_j dF/dU_4, dF/dU_0 = dF/drho - sum_j u_j dF/du_j / rho + K dF/dU_4.
  // The density direction goes first and the pressure direction last: the values that only the density
  // direction needs (Roe-ratio slopes, right-minus-Roe differences) then die early, which saves registers.
  Real column[kBlock];
  lin.template flux_derivative<0>(column);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) dflux_dleft[m][0] = column[m];
  roe_hd_detail::add_velocity_column<0>(lin, lin.inverse_rho_left, dflux_dleft);
  roe_hd_detail::add_velocity_column<1>(lin, lin.inverse_rho_left, dflux_dleft);
  roe_hd_detail::add_velocity_column<2>(lin, lin.inverse_rho_left, dflux_dleft);
  const Real kinetic_left = 0.5 * ((lin.vel_left[0] * lin.vel_left[0] + lin.vel_left[1] * lin.vel_left[1]) +
                                   lin.vel_left[2] * lin.vel_left[2]);
  lin.template flux_derivative<4>(column);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) {
    const Real pressure_column = kGammaMinusOne * column[m];
    dflux_dleft[m][4] = pressure_column;
    dflux_dleft[m][1] -= lin.vel_left[0] * pressure_column;
    dflux_dleft[m][2] -= lin.vel_left[1] * pressure_column;
    dflux_dleft[m][3] -= lin.vel_left[2] * pressure_column;
    dflux_dleft[m][0] += kinetic_left * pressure_column;
  }
}

/// \brief Both Jacobian blocks of one face: dF/dUL directly and dF/dUR from the symmetry
/// dF/dUR(QL, QR, n) = -dF/dUL(QR, QL, -n). The flux returned is that of the left call.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void roe_flux_jacobian_hd_both(const Real left[kBlock], const Real right[kBlock],
                                                              const BasicFaceNormal<Real>& n, Real flux[kBlock],
                                                              Real dflux_dleft[kBlock][kBlock],
                                                              Real dflux_dright[kBlock][kBlock]) {
  roe_flux_jacobian_hd(left, right, n, flux, dflux_dleft);
  Real mirrored_flux[kBlock];
  roe_flux_jacobian_hd(right, left, n.flipped(), mirrored_flux, dflux_dright);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) {
    FLUXJAC_UNROLL
    for (int k = 0; k < kBlock; ++k) dflux_dright[m][k] = -dflux_dright[m][k];
  }
}

}  // namespace fluxjac
