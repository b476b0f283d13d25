// fluxjac — what the GPU is and what it can do, measured in the running process.
#pragma once

#include <optional>
#include <string>

namespace fluxjac {

/// \brief Device description plus the two ceilings of the roofline, measured (not datasheet).
struct DeviceCeilings {
  std::string name;
  int sm_count = 0;
  int sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  double memory_gib = 0.0;
  double l2_mib = 0.0;
  int runtime_version = 0;
  int driver_version = 0;
  double copy_bandwidth_gbs = 0.0;  ///< device-to-device copy, bytes read + written per second / 1e9
  double fp64_gflops = 0.0;         ///< FP64 FMA rate, 2 flops per FMA, / 1e9
};

/// \brief Why no GPU variant can run in this process: `brief`, a few words for each skipped case ("no CUDA
/// device", "CUDA device unusable", "built without CUDA"), and `detail`, the sentence a sweep says once (the CUDA
/// runtime's own error text only where a driver is installed but no device can be used). Both empty when a CUDA
/// device is usable.
struct GpuUnavailable {
  std::string brief;
  std::string detail;
};

/// \brief Why no GPU variant can run here (see GpuUnavailable). Asked once, then cached.
const GpuUnavailable& gpu_unavailable();

/// \brief Whether a CUDA device is usable (false in CPU-only builds or without a GPU).
bool gpu_available();

/// \brief Describes device 0 and measures its copy bandwidth and FP64 rate (about a second).
/// Empty when no GPU is usable. The result is cached for the process.
std::optional<DeviceCeilings> probe_device();

}  // namespace fluxjac
