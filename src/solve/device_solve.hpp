// fluxjac — the solve of one pseudo-time step on the GPU (docs/design.md, "The solve"): M's arrays on the device
// (the diagonal blocks with the shift folded in, float32 Aoff as assembled), block Jacobi's blocks inverted there,
// FGMRES over device vectors with cuBLAS for the basis, and a block product kernel; only the Hessenberg column and
// norms cross to the host, once per iteration.
#pragma once

#include "solve/solve_step.hpp"

namespace fluxjac {

/// \brief solve_step on the GPU: the same checks, the same outcome (times from CUDA events; set-up includes the
/// upload of M's arrays), on one rank or many (the ghost rows of x through the GPU halo exchange). Error(kRuntime) in a
/// build without CUDA or without a usable device.
SolveOutcome solve_step_on_device(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                                  const Jacobian& jacobian, Orientation orientation, const SolveOptions& options,
                                  const SolveRanks& ranks = {});

}  // namespace fluxjac
