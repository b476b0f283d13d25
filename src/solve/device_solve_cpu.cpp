// CPU-only builds: no device to solve on (the CUDA build compiles device_solve.cu instead).
#if !defined(FLUXJAC_WITH_CUDA)
#include "solve/device_solve.hpp"

#include "util/error.hpp"

namespace fluxjac {
SolveOutcome solve_step_on_device(const EdgeMesh&, const FlowState&, const JacobianPattern&, const Jacobian&,
                                  Orientation, const SolveOptions&, const SolveRanks&) {
  fail(ExitCode::kRuntime, "this fluxjac was built without CUDA: the solve runs on the host (--variant reference)");
}
}  // namespace fluxjac
#endif
