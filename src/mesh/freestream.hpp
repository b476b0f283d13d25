// fluxjac — a uniform freestream state for meshes without one (`fluxjac mesh dual --state freestream`).
#pragma once

#include <cstdint>

#include "mesh/edge_mesh.hpp"

namespace fluxjac {

/// Freestream conditions. The flow direction is (cos a cos b, sin b, sin a cos b) for angle of attack a and
/// sideslip b, so x points downstream and z up, as in scripts/make_wing_mesh.sh (and `fluxjac mesh gen`).
struct FreestreamConditions {
  double mach = 0.85;
  double alpha_degrees = 2.0;  ///< angle of attack, in the x-z plane
  double beta_degrees = 0.0;   ///< sideslip, towards +y
};

/// \brief Fails with ExitCode::kUsage unless Mach is finite and in [0, 50] and both angles in [-90, 90] degrees.
void validate_freestream_conditions(const FreestreamConditions& conditions);

/// \brief The same state at every node: rho = 1, p = 1/gamma (so the speed of sound is 1 and the speed is
/// the Mach number), velocity along the freestream direction. A uniform state gives zero residual at
/// every node whose dual cell is closed.
FlowState uniform_freestream_state(std::int64_t n_nodes, const FreestreamConditions& conditions);

}  // namespace fluxjac
