#include "bench/timed_loop.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

namespace fluxjac {
namespace {

/// \brief The repetition (1-based, counted in ghost exchanges, warm-up included) after whose ghost exchange this rank's
/// timed loop fails as if an allocation had failed, or 0: set by the test-only environment variable
/// FLUXJAC_TEST_LOOP_FAILURE=RANK:REPETITION (RANK a rank of the whole job). tests/test_mpi.cpp uses it to fail one
/// rank inside the loop, where a real allocation or CUDA failure would stop it; no other code reads it.
std::int64_t injected_loop_failure() {
  static const std::int64_t repetition = [] {
    const char* value = std::getenv("FLUXJAC_TEST_LOOP_FAILURE");
    int rank = -1;
    long long at = 0;
    if (!value || std::sscanf(value, "%d:%lld", &rank, &at) != 2 || rank != Communicator::world().rank()) return 0LL;
    return at;
  }();
  return repetition;
}

}  // namespace

TimingSamples timed_loop(Variant& variant, const TimingOptions& timing, GhostExchange& exchange) {
  // In 64 bits: the sum of two int counts must not wrap into "no repetitions".
  const std::int64_t total = std::int64_t{timing.warmup} + timing.reps;
  TimingSamples samples;
  // One stopwatch per phase: on a GPU both phases are timed by events in the stream, with no wait between them.
  const std::unique_ptr<Stopwatch> zero_watch = variant.stopwatch(), assembly_watch = variant.stopwatch();
  for (std::int64_t rep = 0; rep < total; ++rep) {
    const double halo_ms = exchange.refresh(variant.state_buffer());
    if (rep + 1 == injected_loop_failure()) throw std::bad_alloc();
    zero_watch->start();
    variant.zero();
    zero_watch->stop();
    assembly_watch->start();
    variant.assemble();
    assembly_watch->stop();
    const double zero_ms = zero_watch->elapsed_ms();
    const double assembly_ms = assembly_watch->elapsed_ms();
    if (rep >= timing.warmup) {
      samples.halo_ms.push_back(halo_ms);
      samples.zero_ms.push_back(zero_ms);
      samples.assembly_ms.push_back(assembly_ms);
    }
    if (timing.progress) timing.progress(rep + 1, total);
  }
  return samples;
}

}  // namespace fluxjac
