// fluxjac — the one timed loop of every case (nvbench's `state.exec`): warm-up, repetitions, the ghost exchange before
// each, the variant's zeroing and assembly timed apart on its own clock, and progress.
//
// A variant exposes only "reset" and "do the work" (Variant::zero, Variant::assemble) and its stopwatch; whatever is
// done around them, on one rank or many, for the CPU reference or a GPU variant, is done here once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "part/ghost_exchange.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// \brief How a case is timed.
struct TimingOptions {
  int warmup = 2;  ///< untimed repetitions first
  int reps = 10;   ///< timed repetitions
  /// Called after each warm-up and timed repetition with (done, warmup + reps); may be empty. Long runs report
  /// progress through it.
  std::function<void(std::int64_t done, std::int64_t total)> progress = nullptr;
};

/// \brief Per-repetition times in milliseconds, one of each per timed repetition.
struct TimingSamples {
  std::vector<double> assembly_ms;  ///< the assembly (Variant::assemble)
  std::vector<double> zero_ms;      ///< zeroing before it (Variant::zero; next to nothing where there is none)
  std::vector<double> halo_ms;      ///< the ghost exchange before it (0 on one rank)
};

/// \brief Runs `variant` (set up and prepared) `timing.warmup` times untimed, then `timing.reps` times timed. Before
/// each repetition, warm-up included, the ranks exchange the ghost states of the variant's state buffer
/// (exchange.refresh, prepared before); then the variant zeroes and assembles, each phase timed by a stopwatch of the
/// variant's own; progress is called after each repetition.
///
/// A rank whose variant fails inside the loop (out of memory, a CUDA error) leaves it with its error; its peers learn
/// it at their next ghost exchange, which carries failures like every collective, and the case's guard records the
/// case as failed on every rank (docs/design.md, "Many GPUs", "Errors").
TimingSamples timed_loop(Variant& variant, const TimingOptions& timing, GhostExchange& exchange);

}  // namespace fluxjac
