// fluxjac — the work model of a case: the bytes and FP64 operations its variant declares for an assembly, and the
// floor time they imply on a device (docs/design.md, "Timing and the work model"). The result records
// (bench/run_record.hpp) ask it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/device_probe.hpp"
#include "jacobian/aoff_precision.hpp"

namespace fluxjac {

/// \brief What a work estimate depends on: the variant (its own declared work, VariantInfo::work), the strategy
/// and the mesh's sizes.
struct WorkCase {
  std::string variant;   ///< registry name
  std::string assembly;  ///< GPU assembly strategy, "edge" or "node"; empty for the CPU reference ("cpu")
  std::int64_t n_nodes = 0, n_edges = 0, n_blocks = 0;  ///< n_blocks: off-diagonal blocks (2 per edge)
  /// What the GPU kernels store Aoff in (the CPU reference stores float32 and rounds when fetched, untimed).
  AoffPrecision aoff_precision = AoffPrecision::kF32;
};

/// \brief Minimum traffic and arithmetic of one assembly, and the floor time they imply.
struct WorkEstimate {
  double bytes = 0.0;              ///< bytes the assembly must move (zeroing of Adiag excluded: it is timed apart)
  double flops = 0.0;              ///< FP64 flops (an FMA counts two, like the device probe's rate)
  double fp64_instructions = 0.0;  ///< FP64 instructions (DFMA, DADD, DMUL: one each; sequences for / and sqrt)
  /// max(bytes / copy bandwidth, FP64 instructions / FP64 instruction rate), the instruction rate half the
  /// measured FMA flop rate; 0 without measured ceilings
  double floor_ms = 0.0;

  /// \brief floor_ms / measured_ms: how close a measured time comes to the floor; 0 when either is unknown.
  double fraction_of_floor(double measured_ms) const;
};

/// \brief The work of `work_case` from the variant's declared work (src/registry/variant_work.hpp: bytes per
/// strategy from the arrays its kernels read and write, FP64 operations counted by running its own lane work on
/// CountingReal); the floor only when `device` holds measured ceilings. An unknown variant has no work (zeros).
WorkEstimate estimate_work(const WorkCase& work_case, const std::optional<DeviceCeilings>& device);

}  // namespace fluxjac
