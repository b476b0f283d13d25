// fluxjac bench: a sweep of variants x meshes x assembly x edges per block x modes, and with --solve the implicit
// step's solves (CFL x preconditioner x Aoff precision), from flags or a TOML config (configs/bench-*.toml), with
// progress on stderr, tables on stdout and one CSV/JSON row per case.
#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/sweep_command.hpp"
#include "ranks/communicator.hpp"
#include "util/error.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

struct BenchOptions {
  SweepConfig sweep;
  ReportFiles reports;
  bool dry_run = false;
  bool quiet = false;
  std::vector<int> ranks;        ///< rank counts to run on (the first ranks of the job); empty: all of them
  std::string scaling = "none";  ///< none, strong or weak
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

/// The rank counts of the sweep, checked against the job's ranks.
std::vector<int> rank_counts(const BenchOptions& options, const Communicator& world) {
  std::vector<int> counts = options.ranks.empty() ? std::vector<int>{world.size()} : options.ranks;
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (const int count : counts) {
    if (count < 1) fail(ExitCode::kUsage, "--ranks {}: rank counts must be 1 or more (e.g. --ranks 1,2,4)", count);
    if (count > world.size())
      fail(ExitCode::kUsage, "--ranks {}: this job has {} rank{}; start it with 'mpirun -np {} fluxjac bench ...'",
           count, world.size(), world.size() == 1 ? "" : "s", count);
  }
  if (options.scaling != "none" && counts.front() != 1)
    fail(ExitCode::kUsage, "--scaling {} measures against one rank: include 1 in --ranks (e.g. --ranks 1,2,4)",
         options.scaling);
  return counts;
}

int bench(const BenchOptions& options) {
  const Communicator& world = Communicator::world();
  const std::vector<int> counts = rank_counts(options, world);
  // One plan per rank count (weak scaling grows the meshes with it), run on the job's first ranks; the others wait.
  SweepPlan all_plans;
  std::vector<RunRecord> records;
  std::optional<DeviceCeilings> device;
  for (const int count : counts) {
    SweepConfig config = options.sweep;
    if (options.scaling == "weak")
      for (std::string& mesh : config.meshes) mesh = scale_mesh_spec(mesh, count);
    // The plan reads the file system (meshes, the cache), which ranks may see differently: a rank that fails here
    // meets the others in their next collective (ranks/communicator.hpp).
    const SweepPlan plan = plan_sweep(config);
    if (!options.dry_run) check_some_case_runs(plan);  // a dry run lists the skipped cases
    if (count == counts.front()) print_notes(plan);
    for (SweepCase sweep_case : plan.cases) {
      sweep_case.mesh += all_plans.meshes.size();
      all_plans.cases.push_back(std::move(sweep_case));
    }
    all_plans.meshes.insert(all_plans.meshes.end(), plan.meshes.begin(), plan.meshes.end());
    if (options.dry_run) continue;
    if (world.is_root() && counts.size() > 1) fmt::print(stderr, "---- {} rank{} ----\n", count, count == 1 ? "" : "s");
    const Communicator ranks = world.split(world.rank() < count ? 0 : -1);
    // The others wait in the next collective; an error on any rank of the count (a failed report write, a mesh it
    // cannot read) is every rank's, and the job ends at once.
    if (ranks.size() > 0) {
      SweepObserver observer = progress_observer(plan, options.quiet, options.reports, ranks);
      // Reports are rewritten with every record so far, across rank counts.
      if (observer.records_changed)
        observer.records_changed = [&, inner = observer.records_changed](const std::vector<RunRecord>& so_far,
                                                                         const std::optional<DeviceCeilings>& d) {
          std::vector<RunRecord> combined = records;
          combined.insert(combined.end(), so_far.begin(), so_far.end());
          inner(combined, d);
        };
      SweepResult result = run_sweep(plan, config, observer, ranks);
      records.insert(records.end(), result.records.begin(), result.records.end());
      if (result.device) device = result.device;
    }
  }
  if (options.dry_run) return print_plan(all_plans);
  // The first rank ran every count: it reports, and every rank exits with its code (or its error, when a write fails).
  std::int64_t code = 0;
  if (world.is_root()) {
    if (options.scaling != "none") {
      set_scaling_efficiency(records, records.size() / counts.size(), options.scaling);
      write_report_files(options.reports, records, device);  // once more, with the efficiencies
    }
    code = report_sweep(all_plans, SweepResult{records, device}, options.sweep, options.reports);
  }
  world.broadcast_bytes(&code, sizeof code);
  return static_cast<int>(code);
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<BenchOptions>();
  SweepConfig& sweep = options->sweep;
  sweep.cases.variants = {"all"};
  sweep.cases.warmup = 3;
  sweep.cases.reps = 20;
  CLI::App* bench_app = add_command(
      app,
      {"bench",
       "Run a benchmark sweep: variants x meshes x assembly strategies x edges per block x modes. Meshes are "
       "files or generator specs kind:n:order[:seed] (e.g. mixed:100:rcm), generated once into a cache "
       "folder. Every case is timed and validated (mode full) against the CPU reference, computed once per "
       "mesh; a case that cannot run (e.g. a GPU variant on a machine without a GPU) is recorded as skipped with "
       "its reason. With --solve (or any --solve-* list) each variant also runs solve cases on each mesh, one per "
       "CFL x preconditioner x Aoff precision: the assembly with the residual, validated, then one implicit "
       "pseudo-time step solved with it as 'fluxjac solve' does (on the GPU for a GPU variant). Progress goes to "
       "stderr, tables to stdout, one row per case to CSV/JSON (layout: docs/bench-json.md). Exit code 1 when a "
       "validation fails or a solve does not converge, 3 when no case can run here (e.g. only GPU variants and no "
       "CUDA device), 4 when a case fails with a run-time error.",
       "Examples:\n"
       "  fluxjac bench --mesh mixed:40:rcm,tet:30:random --mode full,compute-only --json r.json\n"
       "  fluxjac bench --config configs/paper.toml --json paper.json\n"
       "  fluxjac bench --config configs/paper.toml --dry-run\n"
       "  fluxjac bench --mesh mixed:40:rcm --variant hd --solve-cfl 10,100 --solve-preconditioner mcgs\n"
       "  mpirun -np 4 fluxjac bench --config configs/weak-scaling.toml --json weak.json    # 1, 2, 4 GPUs"},
      action, [options](const CLI::App& command) {  // its --config file is applied already (cli/command_intent.hpp)
        std::vector<InputPath> inputs{{"--config", config_file_path(command)}};
        for (const std::string& mesh : options->sweep.meshes) inputs.push_back({"--mesh", mesh});
        check_output_paths(inputs, {{"--csv", options->reports.csv, true}, {"--json", options->reports.json, true}});
        return bench(*options);
      });
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
  bench_app
      ->add_option("--ranks", options->ranks,
                   "under mpirun: the rank counts to run every case on (the job's first ranks, one GPU each), e.g. "
                   "1,2,4; default: all the job's ranks")
      ->delimiter(',');
  bench_app
      ->add_option("--scaling", options->scaling,
                   "with --ranks: strong (the same meshes on every rank count; efficiency t1 / (P tP)) or weak (each "
                   "generator spec grown to about P times its edges; efficiency = ns per edge per GPU at 1 over that "
                   "at P); none reports the runs only")
      ->check(CLI::IsMember({"none", "strong", "weak"}))
      ->capture_default_str();
  // The solve cases: `fluxjac solve`'s options, named --solve-NAME, the CFL, preconditioner and precision as lists.
  SolveSweep& solves = sweep.solves;
  bench_app->add_flag("--solve", solves.enabled,
                      "add solve cases: per variant and mesh, the assembly with its residual, validated, then one "
                      "implicit pseudo-time step (V/dt + A) dQ = -R solved with FGMRES where the variant assembled, "
                      "as 'fluxjac solve' does; one case per --solve-cfl x --solve-preconditioner x "
                      "--solve-aoff-precision (any of them given adds the solves too)");
  bench_app
      ->add_option(
          "--solve-cfl", solves.cfls,
          fmt::format("CFL numbers of the solve cases' local time step (positive; default {:g})", solves.options.cfl))
      ->delimiter(',');
  bench_app
      ->add_option("--solve-preconditioner", solves.preconditioners,
                   fmt::format("preconditioners of the solve cases: {} (block Jacobi), {} (multicolor block "
                               "Gauss-Seidel, --solve-sweeps sweeps); default {}",
                               kBlockJacobi, kMulticolorGaussSeidel, solves.options.preconditioner))
      ->delimiter(',');
  bench_app
      ->add_option("--solve-aoff-precision", solves.aoff_precisions,
                   "the precisions Aoff enters M in: f32 as assembled (default), bf16 assembled in bfloat16, f64 the "
                   "CPU reference's values before rounding (variant reference only; the other variants' f64 cases "
                   "are skipped)")
      ->delimiter(',');
  bench_app
      ->add_option("--solve-sweeps", solves.options.sweeps, "Gauss-Seidel sweeps per application of mcgs (1 to 100)")
      ->capture_default_str();
  bench_app->add_option("--solve-restart", solves.options.krylov.restart, "FGMRES restart length m (1 or more)")
      ->capture_default_str();
  bench_app
      ->add_option("--solve-tolerance", solves.options.krylov.tolerance,
                   "relative residual each solve must reach, in (0, 1)")
      ->capture_default_str();
  bench_app->add_option("--solve-max-iterations", solves.options.krylov.max_iterations, "FGMRES iterations at most")
      ->capture_default_str();
  bench_app->add_flag("--dry-run", options->dry_run, "list the meshes and cases, run nothing");
  bench_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
}

}  // namespace fluxjac
