// fluxjac — the clock a variant's work is timed with: the timed loop (src/bench/timed_loop.hpp) asks the variant for
// it and times each phase (zeroing, assembly) through it, whatever the variant runs on.
#pragma once

#include <chrono>

namespace fluxjac {

/// \brief Times one phase of a variant's work: start() before the work is issued, stop() after it, elapsed_ms() the
/// milliseconds between, once the work has ended (it waits for it). A variant whose work runs asynchronously (a GPU's
/// stream) records both marks in that stream, so that two stopwatches time two phases back to back with no wait
/// between them.
class Stopwatch {
 public:
  virtual ~Stopwatch() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_ms() = 0;
};

/// \brief The host's steady clock, for work that has ended when the call that does it returns (the CPU reference).
class SteadyStopwatch final : public Stopwatch {
 public:
  void start() override { start_ = std::chrono::steady_clock::now(); }
  void stop() override { stop_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() override { return std::chrono::duration<double, std::milli>(stop_ - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_{}, stop_{};
};

}  // namespace fluxjac
