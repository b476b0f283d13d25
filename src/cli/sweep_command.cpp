#include "cli/sweep_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "ranks/communicator.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/error_line.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

/// Seconds between progress lines of a long case; a case shorter than this prints none.
constexpr double kProgressInterval = 5.0;

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

std::string outcome_text(const RunRecord& r) {
  if (r.status != CaseStatus::kOk) return fmt::format("{}: {}", to_string(r.status), r.reason);
  const std::string validation =
      r.validated ? (r.comparison.passed ? "PASS" : "validation FAILED") : std::string("not validated");
  const std::string assembly =
      fmt::format("{:.4f} ms median, {:.3f} ns/edge, {}", r.assembly_ms.median, r.ns_per_edge, validation);
  if (!r.solve || !r.solve->solved) return assembly;
  const SolveFigures& solve = *r.solve;
  return fmt::format("{}; solve {} iterations, {:.3f} ms, relative residual {:.1e}, {}", assembly, solve.iterations,
                     solve.solve_ms, solve.relative_residual, solve.converged ? "converged" : "NOT converged");
}

/// What the progress lines of one case need to remember between hooks.
struct ProgressState {
  std::size_t total = 0;
  std::string header;       ///< "[case 2/7] mixed:20:rcm hd full node epb=default"
  bool line_open = false;   ///< the header is printed and waits for its outcome on the same line
  Clock::time_point start;  ///< of the case
  Clock::time_point shown;  ///< of the last line printed
};

/// Writes the report files (standard_output false) or the reports that go to standard output (true).
void write_reports(const ReportFiles& reports, const std::vector<RunRecord>& records,
                   const std::optional<DeviceCeilings>& device, bool standard_output) {
  if (!reports.csv.empty() && (reports.csv == kStandardOutput) == standard_output)
    write_text_output(reports.csv, format_csv(records, device));
  if (!reports.json.empty() && (reports.json == kStandardOutput) == standard_output)
    write_text_output(reports.json, format_json(records, device));
}

/// Tables per mesh, in the order the meshes ran.
void print_tables(std::FILE* out, const std::vector<RunRecord>& records) {
  std::vector<std::string> meshes;
  for (const RunRecord& r : records)
    if (std::find(meshes.begin(), meshes.end(), r.mesh.name) == meshes.end()) meshes.push_back(r.mesh.name);
  for (const std::string& name : meshes) {
    std::vector<RunRecord> of_mesh;
    std::copy_if(records.begin(), records.end(), std::back_inserter(of_mesh),
                 [&](const RunRecord& r) { return r.mesh.name == name; });
    const MeshSummary& m = of_mesh.front().mesh;
    fmt::print(out, "\nmesh {}: {} nodes, {} edges, {} off-diagonal blocks, ordering {} (bandwidth {})\n", name,
               m.n_nodes, m.n_edges, m.n_offdiag_blocks, m.order.empty() ? "unknown" : m.order, m.ordering_bandwidth);
    fmt::print(out, "{}", format_table(of_mesh));
  }
}

}  // namespace

void add_case_options(CLI::App& command, CaseOptions& options) {
  bool cpu_only_build = false;
  for (const VariantInfo& info : Registry::instance().list()) cpu_only_build = cpu_only_build || !info.available;
  command
      .add_option("--variant,--variants", options.variants,
                  std::string("variant names, comma-separated or repeated (see 'fluxjac list'), or 'all': every "
                              "variant this machine can run, GPU variants listed as skipped where there is no GPU") +
                      (cpu_only_build ? " (this CPU-only build: the reference only)" : "") +
                      "; NAME:cpu (or all:cpu) runs GPU variant NAME's CPU emulation, anywhere: validated like the "
                      "GPU runs, its times not meaningful for performance")
      ->delimiter(',')
      ->capture_default_str();
  command
      .add_option("--mode,--modes", options.modes,
                  "timed regions: full, compute-only (scatter switched off) or scatter-only (flux switched off): "
                  "the paper's Table IV split; validation needs full")
      ->delimiter(',')
      ->check(CLI::IsMember({"full", "compute-only", "scatter-only"}))
      ->capture_default_str();
  command
      .add_option("--assembly", options.assemblies,
                  "GPU assembly strategies: node (each node sums its incident edges' own-side blocks: no atomics, "
                  "deterministic Adiag), edge (the paper's design: per-edge blocks, atomics into Adiag) or auto "
                  "(each variant's faster one, shown by 'fluxjac list'); CPU variants have none")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "node", "edge"}))
      ->capture_default_str();
  command
      .add_option("--edges-per-block", options.edges_per_block,
                  fmt::format("GPU tuning values: edges per thread block (edge assembly), or at most this many "
                              "incident edges per block in whole rows (node assembly); 0 = the variant's default, "
                              "at most {}",
                              kMaxEdgesPerBlock))
      ->delimiter(',')
      ->capture_default_str();
  command
      .add_option("--aoff-precision", options.aoff_precisions,
                  fmt::format("what Aoff is stored in: f32, or bf16 (bfloat16, 8 significant bits: GPU kernels store "
                              "half the bytes; the file's float32 Aoff holds the bfloat16 values exactly, and "
                              "validation takes an Aoff tolerance of at least {:g}); f64 exists only for 'fluxjac "
                              "solve --variant reference'",
                              kBf16AoffTolerance))
      ->delimiter(',')
      ->capture_default_str();
  command
      .add_option("--warmup", options.warmup,
                  fmt::format("untimed runs before timing, per case (at most {})", kMaxWarmup))
      ->capture_default_str();
  command
      .add_option("--reps", options.reps,
                  fmt::format("timed repetitions per case, min/median/max reported (1 to {})", kMaxReps))
      ->capture_default_str();
  command.add_flag("--transpose", options.transpose,
                   "assemble the adjoint orientation A^T (block-CSR rows of the transpose, what discrete-adjoint "
                   "solvers use) instead of A = dR/dQ, for every variant, case and rank; validation compares with the "
                   "reference's A^T, and --output files record it (off unless given)");
  command.add_flag("--residual", options.residual,
                   "also assemble the residual R in the same pass, from the flux values the assembly computes: timed "
                   "with the Jacobian (the flux costs extra work: docs/performance.md, \"The residual\"), validated "
                   "against the reference's R and written to --output files as /residual (off unless given)");
  command.add_flag("--validate,!--no-validate", options.validate,
                   "compare the mode-full results with the reference, computed once per mesh (on unless "
                   "--no-validate; the CPU reference is slow on big meshes)");
  command
      .add_option("--adiag-tolerance", options.tolerances.adiag,
                  "pass if max|A-R|/max|R| of Adiag is at most this (finite, 0 or more)")
      ->capture_default_str();
  command
      .add_option("--aoff-tolerance", options.tolerances.aoff,
                  "pass if max|A-R|/max|R| of Aoff is at most this (finite, 0 or more)")
      ->capture_default_str();
  command
      .add_option("--residual-tolerance", options.tolerances.residual,
                  "with --residual: pass if max|A-R|/max|R| of the residual is at most this (finite, 0 or more)")
      ->capture_default_str();
  command
      .add_option("--threads", options.threads,
                  fmt::format("CPU threads of the reference (OpenMP); 0 = OMP_NUM_THREADS when set, else every core "
                              "({} here)",
                              std::thread::hardware_concurrency()))
      ->capture_default_str();
}

bool ReportFiles::uses_standard_output() const { return csv == kStandardOutput || json == kStandardOutput; }

void print_notes(const SweepPlan& plan) {
  if (!Communicator::world().is_root()) return;  // many ranks: rank 0 speaks for all
  for (const std::string& note : plan.notes) fmt::print(stderr, "fluxjac: note: {}\n", note);
}

void write_report_files(const ReportFiles& reports, const std::vector<RunRecord>& records,
                        const std::optional<DeviceCeilings>& device) {
  write_reports(reports, records, device, false);
}

SweepObserver progress_observer(const SweepPlan& plan, bool quiet, const ReportFiles& reports,
                                const Communicator& comm) {
  SweepObserver observer;
  observer.records_changed = [reports, &comm](const std::vector<RunRecord>& records,
                                              const std::optional<DeviceCeilings>& device) {
    if (comm.is_root()) write_reports(reports, records, device, false);
  };
  if (!comm.is_root()) return observer;  // many ranks: the first shows the progress
  if (quiet) return observer;

  auto state = std::make_shared<ProgressState>();
  state->total = plan.cases.size();
  observer.note = [state](const std::string& line) {
    if (state->line_open) fmt::print(stderr, "\n");
    state->line_open = false;
    fmt::print(stderr, "{}\n", line);
  };
  observer.case_started = [state](std::size_t index, const std::string& label) {
    state->header = fmt::format("[case {}/{}] {} ...", index + 1, state->total, label);
    fmt::print(stderr, "{} ", state->header);
    std::fflush(stderr);
    state->line_open = true;
    state->start = state->shown = Clock::now();
  };
  observer.repetition_done = [state](std::int64_t done, std::int64_t total) {
    const Clock::time_point now = Clock::now();
    if (done == total || seconds_between(state->shown, now) < kProgressInterval) return;
    const double elapsed = seconds_between(state->start, now);
    if (state->line_open) fmt::print(stderr, "\n");
    state->line_open = false;
    fmt::print(stderr, "    {}/{} repetitions (warm-up included), {:.0f} s so far, about {:.0f} s left\n", done, total,
               elapsed, elapsed / static_cast<double>(done) * static_cast<double>(total - done));
    state->shown = now;
  };
  observer.case_finished = [state](const RunRecord& record) {
    // After progress lines, the outcome repeats the case's header so that it reads on its own.
    if (!state->line_open) fmt::print(stderr, "{} ", state->header);
    fmt::print(stderr, "{}\n", outcome_text(record));
    state->line_open = false;
  };
  return observer;
}

int report_sweep(const SweepPlan& plan, const SweepResult& result, const SweepConfig& config,
                 const ReportFiles& reports) {
  const std::vector<RunRecord>& records = result.records;
  // Many ranks: every rank holds the same records and returns the same exit code; rank 0 prints and writes.
  const bool speak = Communicator::world().is_root();
  std::FILE* const out = !speak ? nullptr : reports.uses_standard_output() ? stderr : stdout;
  if (speak) {
    write_reports(reports, records, result.device, true);
    print_tables(out, records);
  }
  auto count = [&](auto predicate) { return std::count_if(records.begin(), records.end(), predicate); };
  const auto skipped = count([](const RunRecord& r) { return r.status == CaseStatus::kSkipped; });
  const auto failed = count([](const RunRecord& r) { return r.status == CaseStatus::kFailed; });
  const auto validated = count([](const RunRecord& r) { return r.validated; });
  const auto invalid = count([](const RunRecord& r) { return r.validated && !r.comparison.passed; });
  const auto solved = count([](const RunRecord& r) { return r.solve && r.solve->solved; });
  const auto unconverged = count([](const RunRecord& r) { return r.solve && r.solve->solved && !r.solve->converged; });
  const auto ran = static_cast<std::ptrdiff_t>(records.size()) - skipped - failed;
  // Why cases were skipped, said once (in the summary, or in the error when none ran): their reason where they
  // share one ("no CUDA device"), else the table's.
  std::string skip_reason;
  bool one_reason = true;
  for (const RunRecord& r : records)
    if (r.status == CaseStatus::kSkipped) {
      one_reason = one_reason && (skip_reason.empty() || skip_reason == r.reason);
      skip_reason = r.reason;
    }
  const std::string why_skipped = one_reason ? ": " + skip_reason : " (the table says why)";
  const std::string skipped_note =
      skipped == 0 || ran == 0 ? "" : "; skipped: " + (one_reason ? skip_reason : std::string("see the table"));
  // A bf16 case validates Aoff at no less than kBf16AoffTolerance (validation_tolerances): said when one ran.
  const bool bf16_validated = std::any_of(records.begin(), records.end(), [](const RunRecord& r) {
    return r.validated && r.aoff_precision == AoffPrecision::kBf16;
  });
  const double bf16_aoff = validation_tolerances(config.cases.tolerances, AoffPrecision::kBf16).aoff;
  if (speak && validated > 0)
    fmt::print(out, "tolerances: Adiag {:.0e}, Aoff {:.0e}{}{} (max|A - R| / max|R|); reference: {}\n",
               config.cases.tolerances.adiag, config.cases.tolerances.aoff,
               bf16_validated ? fmt::format(" (bf16 cases: {:.2e})", bf16_aoff) : "",
               config.cases.residual ? fmt::format(", residual {:.0e}", config.cases.tolerances.residual) : "",
               config.reference.empty() ? "CPU multivariate dual" : config.reference);
  if (speak &&
      std::any_of(records.begin(), records.end(), [](const RunRecord& r) { return !r.variant.emulates.empty(); }))
    fmt::print(out, "NAME{}: the CPU emulation of GPU variant NAME; its times are not GPU performance\n",
               kEmulationSuffix);
  const std::string solves =
      solved == 0 ? "" : fmt::format("; solves: {} converged, {} did not", solved - unconverged, unconverged);
  if (speak)
    fmt::print(out, "\n{} case{}: {} ran, {} skipped, {} failed; validation: {} passed, {} failed{}{}\n",
               records.size(), records.size() == 1 ? "" : "s", ran, skipped, failed, validated - invalid, invalid,
               solves, skipped_note);
  for (const RunRecord& r : records)
    if (speak && r.validated && !r.comparison.pattern_message.empty())
      fmt::print(stderr, "fluxjac: {} on {}: {}\n", r.variant.name, r.mesh.name, r.comparison.pattern_message);

  if (invalid > 0) {
    if (speak) std::fprintf(stderr, "fluxjac: validation FAILED in at least one case\n");
    return static_cast<int>(ExitCode::kValidationFailed);
  }
  // As `fluxjac solve` does: a solve that does not reach its tolerance is exit code 1.
  if (unconverged > 0) {
    if (speak)
      std::fprintf(stderr, "fluxjac: %d solve%s did not reach the tolerance (the table's converged column)\n",
                   static_cast<int>(unconverged), unconverged == 1 ? "" : "s");
    return static_cast<int>(ExitCode::kValidationFailed);
  }
  if (failed > 0) {
    if (speak) std::fprintf(stderr, "fluxjac: at least one case failed with a run-time error\n");
    return static_cast<int>(ExitCode::kRuntime);
  }
  if (config.named_cases_must_run) {
    for (std::size_t i = 0; i < records.size(); ++i)
      if (records[i].status == CaseStatus::kSkipped && plan.cases[i].named) {
        if (speak)
          print_error_line(fmt::format("{} could not run: {}", case_label(plan, plan.cases[i]), records[i].reason));
        return static_cast<int>(ExitCode::kUsage);
      }
  }
  // A sweep that measured nothing has not done what it was asked, whichever command ran it.
  if (ran == 0) {
    if (speak) print_error_line(fmt::format("no case ran{}", why_skipped));
    return static_cast<int>(ExitCode::kUsage);
  }
  return 0;
}

}  // namespace fluxjac
