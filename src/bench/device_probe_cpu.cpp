// CPU-only builds: no device to probe (the CUDA build compiles device_probe.cu instead).
#if !defined(FLUXJAC_WITH_CUDA)
#include "bench/device_probe.hpp"

namespace fluxjac {
const GpuUnavailable& gpu_unavailable() {
  static const GpuUnavailable reason{"built without CUDA",
                                     "this fluxjac was built without CUDA (rebuild with nvcc available, "
                                     "-DFLUXJAC_CUDA=ON)"};
  return reason;
}
bool gpu_available() { return false; }
std::optional<DeviceCeilings> probe_device() { return std::nullopt; }
}  // namespace fluxjac
#endif
