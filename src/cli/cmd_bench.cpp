// fluxjac bench: a sweep of variants x meshes x assembly x edges per block x modes, from flags or a TOML
// config (configs/bench-*.toml), with progress on stderr, tables on stdout and one CSV/JSON row per case.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/sweep_command.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

struct BenchOptions {
  SweepConfig sweep;
  ReportFiles reports;
  bool dry_run = false;
  bool quiet = false;
};

int print_plan(const SweepPlan& plan) {
  for (const MeshSource& mesh : plan.meshes)
    fmt::print("mesh {}: {}{}\n", mesh.name, mesh.file,
               mesh.spec ? (std::filesystem::exists(mesh.file) ? " (cached)" : " (to generate)") : "");
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const SweepCase& sweep_case = plan.cases[i];
    fmt::print("[case {}/{}] {}{}\n", i + 1, plan.cases.size(), case_label(plan, sweep_case),
               sweep_case.skip_reason.empty() ? "" : " (skipped: " + sweep_case.skip_reason + ")");
  }
  return 0;
}

int bench(const BenchOptions& options) {
  const SweepPlan plan = plan_sweep(options.sweep);
  print_notes(plan);
  if (options.dry_run) return print_plan(plan);
  const SweepResult result = run_sweep(plan, options.sweep, progress_observer(plan, options.quiet, options.reports));
  return report_sweep(plan, result, options.sweep, options.reports);
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<BenchOptions>();
  SweepConfig& sweep = options->sweep;
  sweep.cases.variants = {"all"};
  sweep.cases.warmup = 3;
  sweep.cases.reps = 20;
  CLI::App* bench_app = app.add_subcommand(
      "bench",
      "Run a benchmark sweep: variants x meshes x assembly strategies x edges per block x modes. Meshes are "
      "files or generator specs kind:n:order[:seed] (e.g. mixed:100:rcm), generated once into a cache "
      "folder. Every case is timed and validated (mode full) against the CPU reference, computed once per "
      "mesh; a case that cannot run (e.g. a GPU variant on a machine without a GPU) is recorded as skipped with "
      "its reason. Progress goes to stderr, tables to stdout, one row per case to CSV/JSON (layout: "
      "docs/bench-json.md). Exit code 1 when a validation fails, 4 when a case fails with a run-time error.");
  add_config_option(*bench_app);
  bench_app
      ->add_option("--mesh,--meshes", sweep.meshes,
                   "mesh files or generator specs kind:n:order[:seed] (kind tet|prism|mixed, order "
                   "natural|random|rcm), comma-separated or repeated")
      ->delimiter(',');
  add_case_options(*bench_app, sweep.cases);
  bench_app->add_option("--cache", sweep.cache_dir,
                        "folder for generated meshes (default $XDG_CACHE_HOME/fluxjac or ~/.cache/fluxjac)");
  bench_app->add_option("--csv", options->reports.csv,
                        "write one CSV row per case (rewritten after every case; '-': standard output, once at the "
                        "end, the tables then go to stderr)");
  bench_app->add_option("--json", options->reports.json,
                        "write every case with build and device metadata as JSON (docs/bench-json.md; rewritten "
                        "after every case; '-': standard output, once at the end)");
  bench_app->add_flag("--dry-run", options->dry_run, "list the meshes and cases, run nothing");
  bench_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
  bench_app->footer(
      "Examples:\n"
      "  fluxjac bench --mesh mixed:40:rcm,tet:30:random --mode full,compute-only --json r.json\n"
      "  fluxjac bench --config configs/paper.toml --json paper.json\n"
      "  fluxjac bench --config configs/paper.toml --dry-run");
  bench_app->callback([&action, options, bench_app] {
    action = [options, bench_app] {
      apply_config_file(*bench_app);
      std::vector<InputPath> inputs{{"--config", config_file_path(*bench_app)}};
      for (const std::string& mesh : options->sweep.meshes) inputs.push_back({"--mesh", mesh});
      check_output_paths(inputs, {{"--csv", options->reports.csv, true}, {"--json", options->reports.json, true}});
      return bench(*options);
    };
  });
}

}  // namespace fluxjac
