// fluxjac — what `run` and `bench` share: `run` is the sweep of one mesh, so both read the same case options,
// check them in the same place (plan_sweep), print the same progress and end with the same report and exit
// code. Only their mesh options and extras (run: --state, --reference, --output) differ.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "bench/sweep.hpp"

namespace fluxjac {

/// \brief Adds the case options (--variant, --mode, --assembly, --edges-per-block, --warmup, --reps,
/// --validate/--no-validate, --adiag-tolerance, --aoff-tolerance, --threads) to a subcommand. The values in
/// `options` when this is called are the defaults shown by --help.
void add_case_options(CLI::App& command, CaseOptions& options);

/// \brief Refuses (Error(kUsage)) a --csv or --json path whose folder does not exist: before hours of running,
/// not after.
void check_report_folders(const std::string& csv, const std::string& json);

/// \brief Prints the plan's notes (options without effect, what "all" stood for) as `fluxjac: note:` lines on
/// stderr; they are shown even with --quiet.
void print_notes(const SweepPlan& plan);

/// \brief The progress on stderr: notes, one line per case with its outcome, and for long cases a line every
/// few seconds with the repetitions done. With `quiet`, nothing. Also rewrites --csv/--json (when given)
/// after every case, so an interrupted sweep keeps what it measured.
SweepObserver progress_observer(const SweepPlan& plan, bool quiet, const std::string& csv, const std::string& json);

/// \brief Prints a table per mesh, the tolerances and a summary line, and returns the exit code: 1 when a
/// validation failed, 4 when a case failed with a run-time error; with config.named_cases_must_run (run) also 3
/// when a case of a variant named explicitly was skipped or when no case ran; otherwise 0 (skipped cases are
/// listed in the tables).
int report_sweep(const SweepPlan& plan, const SweepResult& result, const SweepConfig& config);

}  // namespace fluxjac
