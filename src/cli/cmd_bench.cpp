// fluxjac bench: a sweep of variants x meshes x assembly x edges per block x modes, from flags or a TOML
// config (configs/bench-*.toml), with progress on stderr, tables on stdout and one CSV/JSON row per case.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "bench/report.hpp"
#include "bench/sweep.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

struct BenchOptions {
  SweepConfig sweep;
  std::string csv, json;
  bool dry_run = false;
  bool quiet = false;
};

std::string outcome_text(const RunRecord& r) {
  if (r.status != CaseStatus::kOk) return fmt::format("{}: {}", to_string(r.status), r.reason);
  const std::string validation =
      r.validated ? (r.comparison.passed ? "PASS" : "validation FAILED") : std::string("not validated");
  return fmt::format("{:.4f} ms median, {:.3f} ns/edge, {}", r.assembly_ms.median, r.ns_per_edge, validation);
}

int print_plan(const SweepPlan& plan) {
  for (const MeshSource& mesh : plan.meshes)
    fmt::print("mesh {}: {}{}\n", mesh.name, mesh.file,
               mesh.spec ? (std::filesystem::exists(mesh.file) ? " (cached)" : " (to generate)") : "");
  for (std::size_t i = 0; i < plan.cases.size(); ++i)
    fmt::print("[case {}/{}] {}\n", i + 1, plan.cases.size(), case_label(plan, plan.cases[i]));
  return 0;
}

/// Tables per mesh, in the order the meshes ran.
void print_tables(std::FILE* stream, const std::vector<RunRecord>& records) {
  std::vector<std::string> meshes;
  for (const RunRecord& r : records)
    if (std::find(meshes.begin(), meshes.end(), r.mesh.name) == meshes.end()) meshes.push_back(r.mesh.name);
  for (const std::string& name : meshes) {
    std::vector<RunRecord> of_mesh;
    std::copy_if(records.begin(), records.end(), std::back_inserter(of_mesh),
                 [&](const RunRecord& r) { return r.mesh.name == name; });
    const MeshSummary& m = of_mesh.front().mesh;
    fmt::print(stream, "\nmesh {}: {} nodes, {} edges, {} off-diagonal blocks, ordering {} (bandwidth {})\n", name,
               m.n_nodes, m.n_edges, m.n_offdiag_blocks, m.order.empty() ? "unknown" : m.order, m.ordering_bandwidth);
    fmt::print(stream, "{}", format_table(of_mesh));
  }
}

int bench(BenchOptions options) {
  const SweepPlan plan = plan_sweep(options.sweep);
  if (options.dry_run) return print_plan(plan);

  SweepObserver observer;
  if (!options.quiet) {
    observer.note = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
    observer.case_started = [total = plan.cases.size()](std::size_t index, const std::string& label) {
      fmt::print(stderr, "[case {}/{}] {} ... ", index + 1, total, label);
      std::fflush(stderr);
    };
    observer.case_finished = [](const RunRecord& record) { fmt::print(stderr, "{}\n", outcome_text(record)); };
  }
  // Files are rewritten after every case, so an interrupted sweep keeps what it measured; standard output gets
  // one document at the end.
  const auto write_outputs = [&options](const std::vector<RunRecord>& records,
                                        const std::optional<DeviceCeilings>& device, bool to_standard_output) {
    if (!options.csv.empty() && (options.csv == kStandardOutput) == to_standard_output)
      write_text_output(options.csv, format_csv(records, device));
    if (!options.json.empty() && (options.json == kStandardOutput) == to_standard_output)
      write_text_output(options.json, format_json(records, device));
  };
  observer.records_changed = [&write_outputs](const std::vector<RunRecord>& records,
                                              const std::optional<DeviceCeilings>& device) {
    write_outputs(records, device, false);
  };
  const SweepResult result = run_sweep(plan, options.sweep, observer);
  write_outputs(result.records, result.device, true);

  std::FILE* const table = options.csv == kStandardOutput || options.json == kStandardOutput ? stderr : stdout;
  print_tables(table, result.records);
  auto count = [&](auto predicate) { return std::count_if(result.records.begin(), result.records.end(), predicate); };
  const auto skipped = count([](const RunRecord& r) { return r.status == CaseStatus::kSkipped; });
  const auto failed = count([](const RunRecord& r) { return r.status == CaseStatus::kFailed; });
  const auto validated = count([](const RunRecord& r) { return r.validated; });
  const auto invalid = count([](const RunRecord& r) { return r.validated && !r.comparison.passed; });
  fmt::print(table, "\n{} cases: {} ran, {} skipped, {} failed; {} validated, {} FAILED validation\n",
             result.records.size(), result.records.size() - skipped - failed, skipped, failed, validated, invalid);
  if (invalid > 0) {
    std::fprintf(stderr, "fluxjac: validation FAILED in at least one case\n");
    return static_cast<int>(ExitCode::kValidationFailed);
  }
  if (failed > 0) {
    std::fprintf(stderr, "fluxjac: at least one case failed with a run-time error\n");
    return static_cast<int>(ExitCode::kRuntime);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<BenchOptions>();
  SweepConfig& sweep = options->sweep;
  CLI::App* bench_app = app.add_subcommand(
      "bench",
      "Run a benchmark sweep: variants x meshes x assembly strategies x edges per block x modes. Meshes are "
      "files or generator specs kind:n:order[:seed] (e.g. mixed:100:rcm), generated once into a cache "
      "folder. Every case is timed and validated (mode full) against the CPU reference, computed once per "
      "mesh; a case that cannot run is recorded as skipped with its reason. Progress goes to stderr, tables "
      "to stdout, one row per case to CSV/JSON (layout: docs/bench-json.md). Exit code 1 when a validation "
      "fails, 4 when a case fails with a run-time error.");
  add_config_option(*bench_app);
  bench_app
      ->add_option("--mesh,--meshes", sweep.meshes,
                   "mesh files or generator specs kind:n:order[:seed] (kind tet|prism|mixed, order "
                   "natural|random|rcm), comma-separated or repeated")
      ->delimiter(',');
  bench_app
      ->add_option("--variant,--variants", sweep.variants,
                   "variant names, comma-separated or repeated, or 'all' (see 'fluxjac list')")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("--mode,--modes", sweep.modes, "timed regions: full, compute-only, scatter-only (Table IV)")
      ->delimiter(',')
      ->check(CLI::IsMember({"full", "compute-only", "scatter-only"}))
      ->capture_default_str();
  bench_app->add_option("--assembly", sweep.assemblies, "GPU assembly strategies: auto, node, edge (see 'run --help')")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "node", "edge"}))
      ->capture_default_str();
  bench_app
      ->add_option("--edges-per-block", sweep.edges_per_block,
                   "GPU tuning values to sweep: edges per block (edge assembly) or incident edges per block in whole rows (node assembly); 0 = "
                   "the variant's default")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("--warmup", sweep.warmup, "untimed runs before timing, per case")->capture_default_str();
  bench_app->add_option("--reps", sweep.reps, "timed repetitions per case (min/median/max reported)")
      ->capture_default_str();
  bench_app->add_flag("--validate,!--no-validate", sweep.validate,
                      "compare mode-full results with the CPU reference, computed once per mesh (default on; slow "
                      "on big meshes)");
  bench_app->add_option("--adiag-tolerance", sweep.tolerances.adiag, "pass if max|A-R|/max|R| of Adiag is at most this")
      ->capture_default_str();
  bench_app->add_option("--aoff-tolerance", sweep.tolerances.aoff, "pass if max|A-R|/max|R| of Aoff is at most this")
      ->capture_default_str();
  bench_app->add_option("--cache", sweep.cache_dir,
                        "folder for generated meshes (default $XDG_CACHE_HOME/fluxjac or ~/.cache/fluxjac)");
  bench_app->add_option("--csv", options->csv,
                        "write one CSV row per case (rewritten after every case; '-': standard output, once at the "
                        "end, the tables then go to stderr)");
  bench_app->add_option("--json", options->json,
                        "write every case with build and device metadata as JSON (docs/bench-json.md; rewritten "
                        "after every case; '-': standard output, once at the end)");
  bench_app->add_flag("--dry-run", options->dry_run, "list the meshes and cases, run nothing");
  bench_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
  bench_app->callback([&action, options, bench_app] {
    action = [options, bench_app] {
      apply_config_file(*bench_app);
      std::vector<InputPath> inputs{{"--config", config_file_path(*bench_app)}};
      for (const std::string& mesh : options->sweep.meshes) inputs.push_back({"--mesh", mesh});
      check_output_paths(inputs, {{"--csv", options->csv, true}, {"--json", options->json, true}});
      return bench(*options);
    };
  });
}

}  // namespace fluxjac
