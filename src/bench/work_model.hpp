// fluxjac — the work model of a case: the bytes and FP64 operations an assembly must do, and the floor time they
// imply on a device (docs/design.md 6). The result records (bench/run_record.hpp) ask it; nothing else does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/device_probe.hpp"

namespace fluxjac {

/// \brief What a work estimate may depend on.
struct WorkCase {
  std::string variant;   ///< registry name
  std::string assembly;  ///< GPU assembly strategy, "edge" or "node"; empty for CPU variants
  std::int64_t n_nodes = 0, n_edges = 0;
};

/// \brief Minimum traffic and arithmetic of one assembly, and the floor time they imply.
struct WorkEstimate {
  double bytes = 0.0;     ///< bytes the assembly must move
  double flops = 0.0;     ///< FP64 operations
  double floor_ms = 0.0;  ///< max(bytes / copy bandwidth, flops / FP64 rate); 0 without measured ceilings

  /// \brief floor_ms / measured_ms: how close a measured time comes to the floor; 0 when either is unknown.
  double fraction_of_floor(double measured_ms) const;
};

/// \brief The work of `work_case`; the floor only when `device` holds measured ceilings.
///
/// Today one model serves every variant and strategy. Bytes: per edge its two node ids (int32), normal
/// (3 float64), area, two Aoff slots (int32) and two Aoff blocks written (2 x 25 float32); per node its state
/// (5 float64) read once and its Adiag block read and written once (2 x 25 float64). Zeroing Adiag is timed and
/// counted apart. Flops: about 2,700 FP64 operations per edge for the multivariate-dual flux derivative.
WorkEstimate estimate_work(const WorkCase& work_case, const std::optional<DeviceCeilings>& device);

}  // namespace fluxjac
