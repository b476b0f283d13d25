// fluxjac — what `run` and `bench` share: `run` is the sweep of one mesh, so both read the same case options,
// check them in the same place (plan_sweep), print the same progress and end with the same report and exit
// code. Only their mesh options and extras (run: --state, --reference, --output) differ.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "bench/sweep.hpp"
#include "ranks/communicator.hpp"

namespace fluxjac {

/// \brief Adds the case options (--variant, --mode, --assembly, --edges-per-block, --warmup, --reps,
/// --validate/--no-validate, --adiag-tolerance, --aoff-tolerance, --threads) to a subcommand. The values in
/// `options` when this is called are the defaults shown by --help.
void add_case_options(CLI::App& command, CaseOptions& options);

/// \brief The --csv and --json files of a sweep command; "-" is standard output, written once at the end (the
/// tables then go to stderr). The command checks them with check_output_paths before any work.
struct ReportFiles {
  std::string csv, json;
  bool uses_standard_output() const;
};

/// \brief Prints the plan's notes (options without effect, what "all" stood for) as `fluxjac: note:` lines on
/// stderr; they are shown even with --quiet.
void print_notes(const SweepPlan& plan);

/// \brief Writes the report files that are files (not standard output), each atomically.
void write_report_files(const ReportFiles& reports, const std::vector<RunRecord>& records,
                        const std::optional<DeviceCeilings>& device);

/// \brief The progress on stderr: notes, one line per case with its outcome, and for long cases a line every
/// few seconds with the repetitions done. With `quiet`, nothing. Also rewrites the report files (those that are
/// files) after every case, so an interrupted sweep keeps what it measured. Many ranks (those of comm, which run
/// the sweep): the first prints and writes; a failed write ends the sweep on all of them at once (it meets the others
/// in their next collective: ranks/communicator.hpp).
SweepObserver progress_observer(const SweepPlan& plan, bool quiet, const ReportFiles& reports,
                                const Communicator& comm = Communicator::world());

/// \brief Writes the report files that go to standard output, prints a table per mesh, the tolerances and a
/// summary line (on stderr when a report took standard output), and returns the exit code: 1 when a
/// validation failed, 4 when a case failed with a run-time error, 3 when no case ran (every one skipped) or, with
/// config.named_cases_must_run (run), when a case of a variant named explicitly was skipped; otherwise 0 (skipped
/// cases are listed in the tables, their reason once in the summary line).
int report_sweep(const SweepPlan& plan, const SweepResult& result, const SweepConfig& config,
                 const ReportFiles& reports);

}  // namespace fluxjac
