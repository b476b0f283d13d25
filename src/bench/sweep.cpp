#include "bench/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference/reference.hpp"
#include "util/error.hpp"
#include "util/note.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

const VariantInfo& variant_info(const std::string& name) {
  static const std::vector<VariantInfo> infos = Registry::instance().list(true);
  for (const VariantInfo& info : infos)
    if (info.name == name) return info;
  Registry::instance().create(name);  // throws the registry's message naming the known variants
  fail(ExitCode::kUsage, "unknown variant '{}'", name);
}

template <class T>
void add_unique(std::vector<T>& values, const T& value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

/// A case that did not run: skipped for usage and input limits, failed for anything else.
struct CaseFailure {
  CaseStatus status;
  std::string reason;
};

CaseFailure classify(const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  const bool limit = known && (known->code() == ExitCode::kUsage || known->code() == ExitCode::kInvalidInput);
  return {limit ? CaseStatus::kSkipped : CaseStatus::kFailed, as_error(error).what()};
}

/// \brief Runs step as part of a case, in the case's guard on comm's ranks (Communicator::agree): the failure every
/// rank then holds when it ended only the case, nothing when step succeeded; any other failure is thrown on.
std::optional<CaseFailure> run_in_case(const Communicator& comm, const std::function<void()>& step) {
  try {
    comm.agree(step, Guard::kCase);
    return std::nullopt;
  } catch (const AgreedError& error) {
    if (!error.case_only()) throw;
    return classify(error);
  }
}

RunRecord unrun_record(const PreparedMesh& mesh, const CaseRequest& request, const CaseFailure& failure) {
  RunRecord record = case_record(mesh, request);
  record.status = failure.status;
  record.reason = failure.reason;
  return record;
}

/// "variant 'hd' needs a GPU: no CUDA device (...); select ...": why GPU variants cannot run, and what to do.
std::string needs_gpu(const std::vector<std::string>& variants, const GpuUnavailable& no_gpu) {
  std::vector<std::string> quoted;
  for (const std::string& name : variants) quoted.push_back("'" + name + "'");
  return fmt::format(
      "variant{} {} need{} a GPU: {}; select CPU variants (e.g. --variant reference, or {}{}, the CPU emulation; "
      "'fluxjac list') or run on a GPU node",
      variants.size() == 1 ? "" : "s", fmt::join(quoted, ", "), variants.size() == 1 ? "s" : "", no_gpu.detail,
      variants.front(), kEmulationSuffix);
}

}  // namespace

SweepPlan plan_sweep(const SweepConfig& config) {
  const CaseOptions& options = config.cases;
  check_case_options(options);
  if (config.meshes.empty())
    fail(ExitCode::kUsage,
         "no mesh: give --mesh FILE.h5 or a generator spec such as mixed:20:rcm (or 'mesh' in "
         "the --config file)");
  std::vector<std::string> mesh_names;
  for (const std::string& mesh : config.meshes) add_unique(mesh_names, mesh);
  if ((!config.state.empty() || !config.reference.empty()) && mesh_names.size() != 1)
    fail(ExitCode::kUsage, "--state and --reference belong to one mesh, and {} are given", mesh_names.size());

  // ---- variants: named ones must be able to run; "all" is what this build and machine can run ----------------
  const std::vector<std::string> variants = Registry::instance().resolve(options.variants);
  std::vector<std::string> named_items;
  bool all_asked = false;
  for (const std::string& item : options.variants)
    for (const std::string& name : split_list(item)) {
      if (name == "all")
        all_asked = true;
      else
        named_items.push_back(name);
    }
  const std::vector<std::string> named =
      named_items.empty() ? std::vector<std::string>{} : Registry::instance().resolve(named_items);
  for (const std::string& name : named)
    if (!variant_info(name).available) Registry::instance().create(name);  // throws: how to get a CUDA build
  const auto is_gpu = [](const std::string& name) { return variant_info(name).backend == Backend::kCuda; };
  const bool any_gpu = std::any_of(variants.begin(), variants.end(), is_gpu);
  const GpuUnavailable no_gpu = any_gpu ? gpu_unavailable() : GpuUnavailable{};
  std::vector<std::string> gpu_variants, named_gpu_variants;
  std::copy_if(variants.begin(), variants.end(), std::back_inserter(gpu_variants), is_gpu);
  std::copy_if(named.begin(), named.end(), std::back_inserter(named_gpu_variants), is_gpu);
  if (!no_gpu.brief.empty() && config.named_cases_must_run && !named_gpu_variants.empty())
    fail(ExitCode::kUsage, "{}", needs_gpu(named_gpu_variants, no_gpu));

  std::vector<AssemblyMode> modes;
  for (const std::string& mode : options.modes) add_unique(modes, parse_assembly_mode(mode));
  std::vector<AssemblyStrategy> strategies;
  for (const std::string& assembly : options.assemblies) add_unique(strategies, parse_assembly_strategy(assembly));
  std::vector<int> units_per_block;
  for (int units : options.edges_per_block) add_unique(units_per_block, units);
  std::vector<AoffPrecision> precisions;
  for (const std::string& precision : options.aoff_precisions)
    add_unique(precisions, parse_assembly_precision(precision));

  // ---- options that contradict each other are refused; options without effect are noted ---------------------
  SweepPlan plan;
  const bool any_full = std::find(modes.begin(), modes.end(), AssemblyMode::kFull) != modes.end();
  if (!config.reference.empty() && !options.validate)
    fail(ExitCode::kUsage, "--reference {} with --no-validate: a stored reference serves only to validate; drop one",
         config.reference);
  if (!config.reference.empty() && !any_full)
    fail(ExitCode::kUsage, "--reference {}: validation needs mode full, and it is not among the modes asked for",
         config.reference);
  if (options.validate && !any_full)
    plan.notes.push_back("validation needs mode full, which is not among the modes asked for: nothing is validated");
  const Tolerances defaults;
  if (!options.validate && (options.tolerances.adiag != defaults.adiag || options.tolerances.aoff != defaults.aoff))
    plan.notes.push_back("--adiag-tolerance and --aoff-tolerance have no effect with --no-validate");
  const bool tuned = strategies != std::vector{AssemblyStrategy::kAuto} || units_per_block != std::vector{0};
  const auto has_strategies = [&](const std::string& name) {
    return is_gpu(name) || !variant_info(name).emulates.empty();
  };
  if (tuned && !std::any_of(variants.begin(), variants.end(), has_strategies))
    plan.notes.push_back(fmt::format("--assembly and --edges-per-block tune GPU variants only: no effect on {}",
                                     fmt::join(variants, ", ")));
  if (all_asked) {
    std::vector<std::string> not_built;
    for (const VariantInfo& info : Registry::instance().list())
      if (!info.available) not_built.push_back(info.name);
    if (!not_built.empty())
      plan.notes.push_back(
          fmt::format("'all' means the variants this build can run: {} (built without CUDA, so not {})",
                      fmt::join(variants, ", "), fmt::join(not_built, ", ")));
  }
  std::vector<std::string> emulations;
  std::copy_if(variants.begin(), variants.end(), std::back_inserter(emulations),
               [](const std::string& name) { return !variant_info(name).emulates.empty(); });
  if (!emulations.empty())
    plan.notes.push_back(fmt::format(
        "{}: CPU emulation{} of the GPU variant{}, {} lanes one by one in the kernels' assembly order on the CPU; "
        "validated like the GPU runs, but {} times say nothing of GPU performance",
        fmt::join(emulations, ", "), emulations.size() == 1 ? "" : "s", emulations.size() == 1 ? "" : "s",
        emulations.size() == 1 ? "its" : "their", emulations.size() == 1 ? "its" : "their"));
  // ---- solves: the solve command's options and rules; A, validated, with its residual --------------------------
  const std::vector<SolveOptions> solves = solve_cases(config.solves);
  if (!solves.empty() && options.transpose)
    fail(ExitCode::kUsage,
         "--transpose with --solve: the solve needs A = dR/dQ, not A^T: run the solves in a sweep without "
         "--transpose");
  const bool any_f64 = std::any_of(solves.begin(), solves.end(),
                                   [](const SolveOptions& s) { return s.aoff_precision == AoffPrecision::kF64; });
  if (any_f64 && std::find(variants.begin(), variants.end(), "reference") == variants.end())
    fail(ExitCode::kUsage, "--solve-aoff-precision f64: {}",
         aoff_precision_refusal(variants.front(), AoffPrecision::kF64));
  if (any_f64 && variants.size() > 1)
    plan.notes.push_back(
        "--solve-aoff-precision f64: only the CPU reference assembles Aoff in float64, so the f64 "
        "solves of the other variants are skipped");
  const bool any_mcgs = std::any_of(solves.begin(), solves.end(),
                                    [](const SolveOptions& s) { return s.preconditioner == kMulticolorGaussSeidel; });
  if (any_mcgs && Communicator::world().distributed()) plan.notes.push_back(mcgs_on_ranks_note("more than one rank"));
  if (!solves.empty() && !options.validate)
    plan.notes.push_back(
        "--no-validate: the solve cases still validate their assembly (and its residual) against "
        "the CPU reference before they solve, as 'fluxjac solve' does");
  const SolveOptions solve_defaults;
  const SolveOptions& asked = config.solves.options;
  if (solves.empty() &&
      (asked.sweeps != solve_defaults.sweeps || asked.krylov.restart != solve_defaults.krylov.restart ||
       asked.krylov.tolerance != solve_defaults.krylov.tolerance ||
       asked.krylov.max_iterations != solve_defaults.krylov.max_iterations))
    plan.notes.push_back(
        "--solve-sweeps, --solve-restart, --solve-tolerance and --solve-max-iterations have no effect without "
        "--solve");
  // Said once here; each skipped case's row carries the brief reason.
  if (!no_gpu.brief.empty())
    plan.notes.push_back(
        fmt::format("GPU variants skipped here ({}): {}", fmt::join(gpu_variants, ", "), no_gpu.detail));

  // ---- the cases -------------------------------------------------------------------------------------------------
  const std::string cache = config.cache_dir.empty() ? default_mesh_cache() : config.cache_dir;
  for (const std::string& mesh : mesh_names) plan.meshes.push_back(resolve_mesh_source(mesh, cache));
  for (std::size_t m = 0; m < plan.meshes.size(); ++m)
    for (const std::string& variant : variants) {
      const bool gpu = is_gpu(variant);
      const bool is_named = std::find(named.begin(), named.end(), variant) != named.end();
      // CPU variants have no assembly strategy or block size: one case per mode.
      // `auto` becomes the variant's preferred strategy; a strategy asked for twice runs once.
      std::vector<AssemblyStrategy> variant_strategies;
      for (AssemblyStrategy strategy : strategies)
        add_unique(variant_strategies, resolve_strategy(strategy, variant_info(variant)));
      if (!has_strategies(variant)) variant_strategies.resize(1);
      const std::vector<int> variant_units = gpu ? units_per_block : std::vector{0};
      for (AoffPrecision precision : precisions)
        for (AssemblyStrategy strategy : variant_strategies)
          for (int units : variant_units)
            for (AssemblyMode mode : modes) {
              SweepCase sweep_case;
              sweep_case.mesh = m;
              sweep_case.variant = variant;
              sweep_case.timing.warmup = options.warmup;
              sweep_case.timing.reps = options.reps;
              sweep_case.assembly.mode = mode;
              sweep_case.assembly.edges_per_block = units;
              sweep_case.assembly.strategy = strategy;
              sweep_case.assembly.orientation = options.transpose ? Orientation::kTransposed : Orientation::kA;
              sweep_case.assembly.residual = options.residual;
              sweep_case.assembly.aoff_precision = precision;
              sweep_case.named = is_named;
              if (gpu) sweep_case.skip_reason = no_gpu.brief;
              plan.cases.push_back(std::move(sweep_case));
            }
      // The variant's solve cases: its own assembly strategy (auto), validated, with the residual.
      for (const SolveOptions& solve : solves) {
        SweepCase sweep_case;
        sweep_case.mesh = m;
        sweep_case.variant = variant;
        sweep_case.timing.warmup = options.warmup;
        sweep_case.timing.reps = options.reps;
        sweep_case.assembly.mode = AssemblyMode::kFull;
        sweep_case.assembly.strategy = resolve_strategy(AssemblyStrategy::kAuto, variant_info(variant));
        sweep_case.assembly.orientation = Orientation::kA;
        sweep_case.assembly.residual = true;
        sweep_case.assembly.aoff_precision = assembly_precision(solve.aoff_precision);
        sweep_case.named = is_named;
        sweep_case.solve = solve;
        const std::string refusal = aoff_precision_refusal(variant, solve.aoff_precision);
        sweep_case.skip_reason = gpu && !no_gpu.brief.empty() ? no_gpu.brief : refusal.empty() ? "" : "f64: " + refusal;
        plan.cases.push_back(std::move(sweep_case));
      }
    }
  return plan;
}

void check_some_case_runs(const SweepPlan& plan) {
  std::vector<std::string> skipped;
  for (const SweepCase& sweep_case : plan.cases) {
    if (sweep_case.skip_reason.empty()) return;
    add_unique(skipped, sweep_case.variant);
  }
  if (!skipped.empty()) fail(ExitCode::kUsage, "no case can run here: {}", needs_gpu(skipped, gpu_unavailable()));
}

std::string case_label(const SweepPlan& plan, const SweepCase& sweep_case) {
  std::string label = fmt::format("{} {} {}", plan.meshes[sweep_case.mesh].name, sweep_case.variant,
                                  to_string(sweep_case.assembly.mode));
  if (sweep_case.solve) {
    // A solve case: its solve's key; its assembly is always full, A and with the residual.
    const SolveOptions& solve = *sweep_case.solve;
    label = fmt::format("{} {} solve cfl={:g} {}", plan.meshes[sweep_case.mesh].name, sweep_case.variant, solve.cfl,
                        solve.preconditioner);
    if (solve.preconditioner == kMulticolorGaussSeidel) label += fmt::format(" sweeps={}", solve.sweeps);
    label += fmt::format(" {}", to_string(solve.aoff_precision));
    if (variant_info(sweep_case.variant).backend == Backend::kCuda)
      label += fmt::format(" {}", to_string(sweep_case.assembly.strategy));
    return label;
  }
  if (sweep_case.assembly.orientation == Orientation::kTransposed) label += " A^T";
  if (sweep_case.assembly.residual) label += " +R";
  if (sweep_case.assembly.aoff_precision == AoffPrecision::kBf16) label += " bf16";
  if (!variant_info(sweep_case.variant).emulates.empty())
    label += fmt::format(" {}", to_string(sweep_case.assembly.strategy));
  if (variant_info(sweep_case.variant).backend == Backend::kCuda) {
    const int units = sweep_case.assembly.edges_per_block;
    label += fmt::format(" {} epb={}", to_string(sweep_case.assembly.strategy),
                         units > 0 ? std::to_string(units) : std::string("default"));
  }
  return label;
}

std::string scale_mesh_spec(const std::string& spec, int ranks) {
  if (!looks_like_mesh_spec(spec))
    fail(ExitCode::kUsage,
         "weak scaling grows a generator spec with the rank count, and {} is a file: give specs such as "
         "mixed:160:rcm",
         spec);
  BoxMeshSpec box = parse_mesh_spec(spec);
  const int n = static_cast<int>(std::lround(box.n * std::cbrt(static_cast<double>(ranks))));
  // kind:n:order[:seed] with n replaced
  const std::size_t first = spec.find(':'), second = spec.find(':', first + 1);
  return spec.substr(0, first + 1) + std::to_string(n) + spec.substr(second);
}

void set_scaling_efficiency(std::vector<RunRecord>& records, std::size_t cases_per_count, const std::string& scaling) {
  // Per GPU and edge for weak scaling (the meshes grow with the ranks), the whole mesh's time for strong scaling.
  const auto cost = [&scaling](const RunRecord& r, double ms) {
    return scaling == "strong" ? ms * r.parallel.ranks
                               : ms * r.parallel.ranks / static_cast<double>(std::max<std::int64_t>(1, r.mesh.n_edges));
  };
  for (std::size_t i = 0; i < records.size(); ++i) {
    RunRecord& record = records[i];
    record.parallel.scaling = scaling;
    const RunRecord& one = records[i % cases_per_count];
    if (record.status != CaseStatus::kOk || one.status != CaseStatus::kOk || one.parallel.ranks != 1) continue;
    const double base = cost(one, one.assembly_ms.median);
    record.parallel.efficiency = base / cost(record, record.assembly_ms.median);
    record.parallel.efficiency_with_halo =
        base / cost(record, record.assembly_ms.median + record.parallel.halo_ms.median);
  }
}

namespace {

/// The step of a solve case, with the Jacobian its assembly made: solved when the assembly passed validation (as
/// `fluxjac solve` refuses to solve otherwise), else left unsolved with the reason in the record.
SolveFigures solve_case(const PreparedMesh& mesh, RunRecord& record, Jacobian& jacobian, const SolveOptions& options) {
  SolveFigures figures{options, record.variant.backend == Backend::kCuda};
  if (!record.validated || !record.comparison.passed) {
    record.reason = "the assembled Jacobian fails validation against the CPU reference: nothing solved";
    return figures;
  }
  figures.take(solve_assembled(mesh, record.variant, jacobian, options));
  return figures;
}

/// The sweep's cases on comm's ranks, each case in a guard of its own (Communicator::agree): a failure inside a case
/// is recorded on every rank and the sweep goes on; any other ends the sweep.
SweepResult sweep_cases(const SweepPlan& plan, const SweepConfig& config, const SweepObserver& observer,
                        const Communicator& comm) {
  SweepResult result;
  const auto runs = [](const SweepCase& c) { return c.skip_reason.empty(); };
  const bool any_gpu = std::any_of(plan.cases.begin(), plan.cases.end(), [&](const SweepCase& c) {
    return runs(c) && variant_info(c.variant).backend == Backend::kCuda;
  });
  // The device is measured once its first case is about to run, after the mesh and the reference are read: a sweep
  // refused for its input never touches the GPU (on a busy node, the probe waits for its share of the GPU).
  bool probed = false;
  const auto probe_once = [&] {
    if (probed || !any_gpu) return;
    probed = true;
    result.device = probe_device();
    if (result.device)
      say(observer.note,
          fmt::format("device: {}, copy {:.0f} GB/s, FP64 {:.0f} GFLOP/s (measured)", result.device->name,
                      result.device->copy_bandwidth_gbs, result.device->fp64_gflops));
  };
  const int threads = set_cpu_threads(config.cases.threads);
  const bool any_cpu_work =
      config.cases.validate || std::any_of(plan.cases.begin(), plan.cases.end(), [](const SweepCase& c) {
        return variant_info(c.variant).backend == Backend::kCpu;
      });
  if (any_cpu_work)
    say(observer.note, fmt::format("CPU reference: {} thread{} (--threads)", threads, threads == 1 ? "" : "s"));

  const Orientation orientation = config.cases.transpose ? Orientation::kTransposed : Orientation::kA;
  std::optional<PreparedMesh> mesh;
  std::optional<ReferenceJacobian> reference;
  std::unique_ptr<Variant> variant;
  std::optional<CaseFailure> setup_failure;
  std::size_t mesh_index = plan.meshes.size();
  std::string variant_name;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const SweepCase& sweep_case = plan.cases[i];
    if (sweep_case.mesh != mesh_index) {
      // Free the previous mesh's device and host memory before the next one is read.
      variant.reset();
      reference.reset();
      mesh.reset();
      mesh = prepare_mesh_source(plan.meshes[sweep_case.mesh], config.state, observer.note, comm);
      const bool any_full = std::any_of(plan.cases.begin(), plan.cases.end(), [&](const SweepCase& c) {
        return c.mesh == sweep_case.mesh && c.assembly.mode == AssemblyMode::kFull && runs(c);
      });
      // A solve case validates its assembly whatever --no-validate says.
      const bool any_solve = std::any_of(plan.cases.begin(), plan.cases.end(), [&](const SweepCase& c) {
        return c.mesh == sweep_case.mesh && c.solve && runs(c);
      });
      if ((config.cases.validate && any_full) || any_solve) {
        if (config.reference.empty()) {
          reference = compute_reference(*mesh, orientation, observer.note);
        } else {
          reference = read_reference(config.reference, *mesh, orientation, observer.note);
        }
      }
      mesh_index = sweep_case.mesh;
      variant_name.clear();
    }
    if (runs(sweep_case)) probe_once();
    if (observer.case_started) observer.case_started(i, case_label(plan, sweep_case));
    const bool validates = reference && (config.cases.validate || sweep_case.solve);
    CaseRequest request{sweep_case.variant, sweep_case.assembly, sweep_case.timing, validates ? &*reference : nullptr,
                        config.cases.tolerances};
    request.timing.progress = observer.repetition_done;
    RunRecord record;
    if (!sweep_case.skip_reason.empty()) {
      record = unrun_record(*mesh, request, {CaseStatus::kSkipped, sweep_case.skip_reason});
    } else {
      if (sweep_case.variant != variant_name) {
        variant.reset();
        setup_failure.reset();
        variant_name = sweep_case.variant;
        setup_failure = run_in_case(comm, [&] { variant = setup_variant(variant_name, *mesh); });
      }
      const bool keep = observer.assembled && sweep_case.assembly.mode == AssemblyMode::kFull && !sweep_case.solve;
      Jacobian assembled;
      const std::optional<CaseFailure> failure = setup_failure ? setup_failure : run_in_case(comm, [&] {
        record = run_case(*variant, *mesh, request, result.device, keep || sweep_case.solve ? &assembled : nullptr);
        if (sweep_case.solve) record.solve = solve_case(*mesh, record, assembled, *sweep_case.solve);
      });
      if (failure) record = unrun_record(*mesh, request, *failure);
      if (keep && record.status == CaseStatus::kOk) observer.assembled(sweep_case, *mesh, assembled);
    }
    // A solve case that did not run still names its solve, for the table and compare's key.
    if (sweep_case.solve && !record.solve)
      record.solve = SolveFigures{*sweep_case.solve, variant_info(sweep_case.variant).backend == Backend::kCuda};
    if (observer.case_finished) observer.case_finished(record);
    result.records.push_back(std::move(record));
    relate_to_hd(result.records);
    if (observer.records_changed) observer.records_changed(result.records, result.device);
  }
  return result;
}

}  // namespace

SweepResult run_sweep(const SweepPlan& plan, const SweepConfig& config, const SweepObserver& observer,
                      const Communicator& comm) {
  SweepResult result;
  comm.agree([&] { result = sweep_cases(plan, config, observer, comm); });  // the sweep's guard, on its ranks
  return result;
}

}  // namespace fluxjac
