#include "mesh/freestream.hpp"

#include <cmath>

#include "physics/gas.hpp"
#include "util/error.hpp"

namespace fluxjac {

void validate_freestream_conditions(const FreestreamConditions& conditions) {
  if (!(conditions.mach >= 0.0 && conditions.mach <= 50.0))
    fail(ExitCode::kUsage, "freestream: Mach {} is outside [0, 50]", conditions.mach);
  if (!(std::abs(conditions.alpha_degrees) <= 90.0))
    fail(ExitCode::kUsage, "freestream: angle of attack {} degrees is outside [-90, 90]", conditions.alpha_degrees);
  if (!(std::abs(conditions.beta_degrees) <= 90.0))
    fail(ExitCode::kUsage, "freestream: sideslip {} degrees is outside [-90, 90]", conditions.beta_degrees);
}

FlowState uniform_freestream_state(std::int64_t n_nodes, const FreestreamConditions& conditions) {
  validate_freestream_conditions(conditions);
  constexpr double kRadiansPerDegree = 3.14159265358979323846 / 180.0;
  const double alpha = conditions.alpha_degrees * kRadiansPerDegree;
  const double beta = conditions.beta_degrees * kRadiansPerDegree;
  const double direction[3] = {std::cos(alpha) * std::cos(beta), std::sin(beta), std::sin(alpha) * std::cos(beta)};
  // rho = 1 and p = 1/gamma give a speed of sound of 1, so the speed equals the Mach number.
  constexpr double kDensity = 1.0;
  constexpr double kPressure = 1.0 / kGamma;
  const double speed = conditions.mach;
  double freestream[kBlock];
  freestream[0] = kDensity;
  for (int d = 0; d < 3; ++d) freestream[1 + d] = kDensity * speed * direction[d];
  freestream[4] = kPressure / kGammaMinusOne + 0.5 * kDensity * speed * speed;

  FlowState state;
  state.gamma = kGamma;
  state.Q.resize(static_cast<std::size_t>(n_nodes) * kBlock);
  for (std::int64_t node = 0; node < n_nodes; ++node)
    for (int k = 0; k < kBlock; ++k) state.Q[kBlock * node + k] = freestream[k];
  return state;
}

}  // namespace fluxjac
