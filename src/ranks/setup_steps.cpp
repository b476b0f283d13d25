#include "ranks/setup_steps.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "util/memory.hpp"
#include "util/note.hpp"

namespace fluxjac {
namespace {

RankRange over_ranks(const Communicator& comm, double value) {
  const std::vector<double> values = comm.all_gather(value);
  return {*std::min_element(values.begin(), values.end()),
          std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()),
          *std::max_element(values.begin(), values.end())};
}

}  // namespace

SetupStep gather_step(const Communicator& comm, std::string name, StepKind kind, double seconds) {
  SetupStep step;
  step.name = std::move(name);
  step.kind = kind;
  step.seconds = over_ranks(comm, seconds);
  step.peak_bytes = over_ranks(comm, static_cast<double>(peak_resident_bytes()));
  return step;
}

SetupStep finish_step(const Communicator& comm, std::string name, StepKind kind,
                      std::chrono::steady_clock::time_point start) {
  return gather_step(comm, std::move(name), kind, seconds_since(start));
}

double seconds_of(const std::vector<SetupStep>& steps, StepKind kind) {
  double seconds = 0.0;
  for (const SetupStep& step : steps)
    if (step.kind == kind) seconds += step.seconds.max;
  return seconds;
}

std::string step_line(const SetupStep& step) {
  return fmt::format("{}: {:.2f} s (slowest rank), peak memory per rank {} / {} / {} (min / mean / max)", step.name,
                     step.seconds.max, format_bytes(step.peak_bytes.min), format_bytes(step.peak_bytes.mean),
                     format_bytes(step.peak_bytes.max));
}

}  // namespace fluxjac
