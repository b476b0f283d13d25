#include "bench/case_options.hpp"

#include <cmath>

#include "jacobian/aoff_precision.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

void check_count(const char* option, long long value, long long low, long long high, const char* meaning) {
  if (value < low || value > high)
    fail(ExitCode::kUsage, "{} {}: {} must be between {} and {}", option, value, meaning, low, high);
}

void check_tolerance(const char* option, double value) {
  // Written so that NaN fails too: every comparison with NaN is false.
  if (!(std::isfinite(value) && value >= 0.0))
    fail(ExitCode::kUsage, "{} {}: a tolerance must be a finite number, 0 or more", option, value);
}

}  // namespace

void check_case_options(const CaseOptions& options) {
  check_count("--reps", options.reps, 1, kMaxReps, "timed repetitions");
  check_count("--warmup", options.warmup, 0, kMaxWarmup, "warm-up runs");
  check_count("--threads", options.threads, 0, kMaxThreads, "CPU threads (0 = every core)");
  for (int units : options.edges_per_block)
    check_count("--edges-per-block", units, 0, kMaxEdgesPerBlock, "edges per block (0 = the variant's default)");
  check_tolerance("--adiag-tolerance", options.tolerances.adiag);
  check_tolerance("--aoff-tolerance", options.tolerances.aoff);
  check_tolerance("--residual-tolerance", options.tolerances.residual);
  for (const std::string& precision : options.aoff_precisions) parse_assembly_precision(precision);
  if (options.modes.empty() || options.assemblies.empty() || options.edges_per_block.empty() ||
      options.aoff_precisions.empty())
    fail(ExitCode::kUsage, "--mode, --assembly, --edges-per-block and --aoff-precision each need at least one value");
}

}  // namespace fluxjac
