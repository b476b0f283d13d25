// CPU-only builds: no device to probe (the CUDA build compiles device_probe.cu instead).
#if !defined(FLUXJAC_WITH_CUDA)
#include "bench/device_probe.hpp"

namespace fluxjac {
std::string gpu_unavailable_reason() { return "this fluxjac was built without CUDA"; }
bool gpu_available() { return false; }
std::optional<DeviceCeilings> probe_device() { return std::nullopt; }
}  // namespace fluxjac
#endif
