// ctest-label: unit
// The one timed loop (src/bench/timed_loop.hpp) on one rank: with a fake variant whose clock and calls are traced,
// what it calls in which order (a ghost refresh, then zeroing and assembly each between its stopwatch's marks), how
// many samples and progress calls it gives, and that a variant failing inside the loop leaves it at once with its
// error (its peers learn it at their next exchange); and the CPU reference timed through it gives the Jacobian
// assemble_reference gives.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "bench/timed_loop.hpp"
#include "reference/reference.hpp"
#include "registry/registry.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// What the fake variant and its stopwatches were asked to do, in order, and the fake clock they share.
struct Trace {
  std::vector<std::string> calls;
  double clock_ms = 0.0;
  int zeroes = 0, assemblies = 0;
  int fail_at_assembly = 0;  ///< the assembly (1-based) that throws std::bad_alloc; 0: none
  int fail_at_zero = 0;      ///< the same for zero()
};

/// A stopwatch on the trace's clock.
class FakeStopwatch final : public Stopwatch {
 public:
  explicit FakeStopwatch(Trace& trace) : trace_(trace) {}
  void start() override {
    trace_.calls.push_back("start");
    start_ = trace_.clock_ms;
  }
  void stop() override {
    trace_.calls.push_back("stop");
    stop_ = trace_.clock_ms;
  }
  double elapsed_ms() override { return stop_ - start_; }

 private:
  Trace& trace_;
  double start_ = 0.0, stop_ = 0.0;
};

/// A variant that assembles nothing: zeroing takes 0.25 ms of the fake clock, the k-th assembly k ms. The loop reads
/// its state buffer once for each ghost exchange, so "state" in the trace counts the exchanges.
class FakeVariant final : public Variant {
 public:
  explicit FakeVariant(Trace& trace) : trace_(trace) { info_.name = "fake"; }
  const VariantInfo& info() const override { return info_; }
  void setup(const EdgeMesh&, const FlowState&, const JacobianPattern&) override {}
  void prepare(const AssemblyOptions&) override { trace_.calls.push_back("prepare"); }
  void zero() override {
    trace_.calls.push_back("zero");
    if (++trace_.zeroes == trace_.fail_at_zero) throw std::bad_alloc();
    trace_.clock_ms += 0.25;
  }
  void assemble() override {
    trace_.calls.push_back("assemble");
    if (++trace_.assemblies == trace_.fail_at_assembly) throw std::bad_alloc();
    trace_.clock_ms += trace_.assemblies;
  }
  std::unique_ptr<Stopwatch> stopwatch() const override { return std::make_unique<FakeStopwatch>(trace_); }
  void fetch(Jacobian&) override {}
  StateBuffer state_buffer() override {
    trace_.calls.push_back("state");
    return {state_.data(), 1, false};
  }

 private:
  Trace& trace_;
  VariantInfo info_;
  std::vector<double> state_ = std::vector<double>(kBlock, 1.0);
};

/// One rank's exchange: no ghosts, each refresh a no-op taking 0 ms.
struct OneRank {
  const Communicator& comm = Communicator::world();
  HaloPlan halo;
  GhostExchange exchange{comm, halo};
};

std::size_t count(const std::vector<std::string>& calls, const std::string& call) {
  return static_cast<std::size_t>(std::count(calls.begin(), calls.end(), call));
}

TEST(TimedLoop, RefreshesZeroesAndAssemblesOncePerRepetitionWarmUpIncludedEachPhaseTimedApart) {
  Trace trace;
  FakeVariant variant(trace);
  OneRank one;
  const TimingSamples samples = timed_loop(variant, TimingOptions{2, 3}, one.exchange);
  const std::vector<std::string> repetition = {"state", "start", "zero", "stop", "start", "assemble", "stop"};
  std::vector<std::string> expected;
  for (int rep = 0; rep < 5; ++rep) expected.insert(expected.end(), repetition.begin(), repetition.end());
  EXPECT_EQ(trace.calls, expected);
  // Only the timed repetitions are kept, each phase on its own stopwatch: assemblies 3, 4 and 5 took 3, 4 and 5 ms.
  EXPECT_EQ(samples.assembly_ms, (std::vector<double>{3.0, 4.0, 5.0}));
  EXPECT_EQ(samples.zero_ms, (std::vector<double>{0.25, 0.25, 0.25}));
  EXPECT_EQ(samples.halo_ms, (std::vector<double>{0.0, 0.0, 0.0}));  // one rank: nothing to exchange
}

TEST(TimedLoop, CallsProgressAfterEveryRepetitionWithTheTotalWarmUpIncluded) {
  for (const auto& [warmup, reps] : {std::pair{0, 1}, std::pair{1, 3}, std::pair{4, 2}}) {
    SCOPED_TRACE(testing::Message() << warmup << " warm-up, " << reps << " reps");
    Trace trace;
    FakeVariant variant(trace);
    OneRank one;
    std::vector<std::pair<std::int64_t, std::int64_t>> progress;
    TimingOptions timing{warmup, reps};
    timing.progress = [&](std::int64_t done, std::int64_t total) {
      progress.emplace_back(done, total);
      EXPECT_EQ(static_cast<std::int64_t>(trace.assemblies), done) << "called after the repetition's assembly";
    };
    const TimingSamples samples = timed_loop(variant, timing, one.exchange);
    const std::size_t total = static_cast<std::size_t>(warmup + reps);
    ASSERT_EQ(progress.size(), total);
    for (std::size_t k = 0; k < total; ++k)
      EXPECT_EQ(progress[k], (std::pair<std::int64_t, std::int64_t>(k + 1, total)));
    EXPECT_EQ(count(trace.calls, "state"), total);
    EXPECT_EQ(count(trace.calls, "zero"), total);
    EXPECT_EQ(count(trace.calls, "assemble"), total);
    EXPECT_EQ(samples.assembly_ms.size(), static_cast<std::size_t>(reps));
    EXPECT_EQ(samples.zero_ms.size(), static_cast<std::size_t>(reps));
    EXPECT_EQ(samples.halo_ms.size(), static_cast<std::size_t>(reps));
  }
}

TEST(TimedLoop, AVariantFailingMidLoopLeavesItAtOnceWithItsError) {
  // The third of 1 + 3 assemblies fails as an allocation would (in zero() or assemble()): the rank has exchanged three
  // times and leaves; its peers meet its error at their next exchange (ranks/communicator.hpp).
  for (const bool in_zero : {false, true}) {
    SCOPED_TRACE(in_zero ? "zero" : "assemble");
    Trace trace;
    (in_zero ? trace.fail_at_zero : trace.fail_at_assembly) = 3;
    FakeVariant variant(trace);
    OneRank one;
    int progress = 0;
    TimingOptions timing{1, 3};
    timing.progress = [&](std::int64_t, std::int64_t) { ++progress; };
    EXPECT_THROW(timed_loop(variant, timing, one.exchange), std::bad_alloc);
    EXPECT_EQ(count(trace.calls, "state"), 3u) << "no exchange after the failure";
    EXPECT_EQ(count(trace.calls, "zero"), 3u);
    EXPECT_EQ(count(trace.calls, "assemble"), in_zero ? 2u : 3u);
    EXPECT_EQ(progress, 2);
    EXPECT_EQ(trace.calls.back(), in_zero ? "zero" : "assemble");
  }
}

TEST(TimedLoop, AProgressCallbackThatThrowsEndsTheLoopWithItsError) {
  Trace trace;
  FakeVariant variant(trace);
  OneRank one;
  TimingOptions timing{0, 5};
  timing.progress = [](std::int64_t done, std::int64_t) {
    if (done == 2) fail(ExitCode::kRuntime, "stopped after {}", done);
  };
  try {
    timed_loop(variant, timing, one.exchange);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "stopped after 2");
  }
  EXPECT_EQ(count(trace.calls, "state"), 2u);
  EXPECT_EQ(count(trace.calls, "assemble"), 2u);
}

// ---- the CPU reference through the loop ----------------------------------------------------------------------

/// The reference variant, set up on a mesh, prepared for orientation and timed: its Jacobian is assemble_reference's,
/// bit for bit, however many times the loop assembled it.
TEST(TimedLoopReference, GivesTheJacobianOfAssembleReferenceInBothOrientations) {
  const test::AssembledMesh assembled = test::assemble_generated("mixed", 5, "random");
  const EdgeMesh& mesh = assembled.generated.mesh;
  for (const Orientation orientation : {Orientation::kA, Orientation::kTransposed}) {
    SCOPED_TRACE(to_string(orientation));
    std::unique_ptr<Variant> variant = Registry::instance().create("reference");
    variant->setup(mesh, assembled.generated.state, assembled.pattern);
    variant->prepare(AssemblyOptions{AssemblyMode::kFull, 0, AssemblyStrategy::kAuto, orientation});
    OneRank one;
    const TimingSamples samples = timed_loop(*variant, TimingOptions{1, 2}, one.exchange);
    EXPECT_EQ(samples.assembly_ms.size(), 2u);
    for (const double ms : samples.assembly_ms) EXPECT_GT(ms, 0.0);
    for (const double ms : samples.zero_ms) EXPECT_GE(ms, 0.0);  // nothing to zero: the clock's own cost
    Jacobian timed, expected;
    variant->fetch(timed);
    assemble_reference(mesh, assembled.generated.state, assembled.pattern, expected, orientation);
    EXPECT_TRUE(test::bitwise_equal(timed.adiag, expected.adiag)) << "Adiag";
    EXPECT_TRUE(test::bitwise_equal(timed.aoff, expected.aoff)) << "Aoff";
  }
}

TEST(TimedLoopReference, PrepareRefusesTheModesItHasNot) {
  const test::AssembledMesh assembled = test::assemble_generated("tet", 2);
  std::unique_ptr<Variant> variant = Registry::instance().create("reference");
  variant->setup(assembled.generated.mesh, assembled.generated.state, assembled.pattern);
  for (const AssemblyMode mode : {AssemblyMode::kComputeOnly, AssemblyMode::kScatterOnly}) {
    try {
      variant->prepare(AssemblyOptions{mode});
      FAIL() << "accepted " << to_string(mode);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_EQ(std::string(error.what()), "variant 'reference' runs only in mode 'full' (it has no separate scatter)");
    }
  }
}

}  // namespace
}  // namespace fluxjac
