// fluxjac — the time and host memory of each step that makes the ranks' parts (docs/design.md, "Many GPUs"):
// reading slices, building the distributed graph, partitioning, redistributing, writing. Each figure is gathered over
// the ranks (min / mean / max), so that a step whose memory grows with the rank count shows in the progress lines and
// in the bench JSON (docs/bench-json.md, `partition.steps`).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ranks/communicator.hpp"

namespace fluxjac {

/// \brief min / mean / max of one figure over the ranks.
struct RankRange {
  double min = 0.0, mean = 0.0, max = 0.0;
};

/// \brief What a step does, for the summaries that add the steps of one kind (`mesh partition`'s read, partition,
/// renumber and write times).
enum class StepKind { kRead, kPartition, kRenumber, kWrite, kGenerate };

/// \brief One step: its name, its kind, each rank's time in it, and each rank's peak resident memory at its end (VmHWM:
/// the high-water mark since the generation or partition began, which restarts it with restart_peak_resident, so later
/// steps include earlier steps' peaks but not the process's earlier work).
struct SetupStep {
  std::string name;
  StepKind kind = StepKind::kGenerate;
  RankRange seconds;
  RankRange peak_bytes;
};

/// \brief The figures of a step that took `seconds` on this rank, gathered over the ranks (collective).
SetupStep gather_step(const Communicator& comm, std::string name, StepKind kind, double seconds);

/// \brief The figures of a step that started at `start` on this rank, gathered over the ranks (collective).
SetupStep finish_step(const Communicator& comm, std::string name, StepKind kind,
                      std::chrono::steady_clock::time_point start);

/// \brief The progress line of a step: "partition: 0.52 s (slowest rank), peak memory per rank 40.1 MiB / 41.0 MiB
/// / 43.2 MiB (min / mean / max)".
std::string step_line(const SetupStep& step);

/// \brief The seconds of the slowest rank in the steps of `kind`, added up.
double seconds_of(const std::vector<SetupStep>& steps, StepKind kind);

}  // namespace fluxjac
