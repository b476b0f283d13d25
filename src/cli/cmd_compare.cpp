// fluxjac compare: regression check of one result file against another (validation changes, slowdowns).
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "bench/result_compare.hpp"
#include "cli/commands.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

struct CompareCommandOptions {
  std::string base, candidate;
  CompareOptions compare;
  bool changes_only = false;
};

int compare(const CompareCommandOptions& options) {
  // Written so that NaN fails too: a NaN tolerance would make every slowdown comparison false.
  if (!(std::isfinite(options.compare.time_tolerance) && options.compare.time_tolerance >= 0))
    fail(ExitCode::kUsage, "--time-tolerance {}: must be a finite number, 0 or more", options.compare.time_tolerance);
  const ResultFile base = read_result_file(options.base);
  const ResultFile candidate = read_result_file(options.candidate);
  const ComparisonReport report = compare_results(base, candidate, options.compare);
  fmt::print("{}", format_comparison(base, candidate, report, options.compare, options.changes_only));
  if (report.regressions > 0) {
    fmt::print(stderr, "fluxjac: {} regression{} against {}\n", report.regressions, report.regressions == 1 ? "" : "s",
               printable(options.base));
    return static_cast<int>(ExitCode::kValidationFailed);
  }
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* compare_app = add_command(
      app,
      {"compare",
       "Compare two result files of 'fluxjac bench --json' (or 'run --json') case by case. A case is its mesh, "
       "variant, mode, assembly, edges per block as requested, and ranks; the mesh is matched by its content "
       "(mesh_digest), or in files without digests by its counts and ordering figures, so a generator spec and its "
       "file are one mesh. A solve case (bench --solve) is its mesh, variant, ranks, CFL, preconditioner, sweeps and "
       "Aoff precision. A file that holds one case twice is refused (exit code 2). Reports validation changes, "
       "cases that no longer run or are missing, slowdowns of the median time (a solve case: of its solve time) "
       "beyond the tolerance, and solves that take more iterations or no longer converge; exit code 1 on any of "
       "them. The case key and the verdicts: docs/bench-json.md."},
      action, [options](const CLI::App&) { return compare(*options); });
  compare_app->add_option("BASE", options->base, "result file to compare against (.json)")->required();
  compare_app->add_option("NEW", options->candidate, "result file to check (.json)")->required();
  compare_app
      ->add_option(
          "--time-tolerance", options->compare.time_tolerance,
          "relative slowdown allowed: NEW median > BASE median x (1 + this) is a regression (a solve case: its "
          "solve time)")
      ->capture_default_str();
  compare_app->add_flag("--allow-missing", options->compare.allow_missing,
                        "cases of BASE that NEW lacks are not regressions (NEW ran a smaller sweep)");
  compare_app->add_flag("--changes-only", options->changes_only, "list only the cases that changed");
}

}  // namespace fluxjac
