#include "bench/sweep.hpp"

#include <algorithm>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "util/error.hpp"

namespace fluxjac {
namespace {

const VariantInfo& variant_info(const std::string& name) {
  static const std::vector<VariantInfo> infos = Registry::instance().list();
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
  return {limit ? CaseStatus::kSkipped : CaseStatus::kFailed, error.what()};
}

RunRecord unrun_record(const PreparedMesh& mesh, const CaseRequest& request, const CaseFailure& failure) {
  RunRecord record = case_record(mesh, request);
  record.status = failure.status;
  record.reason = failure.reason;
  return record;
}

void say(const Note& note, const std::string& line) {
  if (note) note(line);
}

}  // namespace

SweepPlan plan_sweep(const SweepConfig& config) {
  if (config.meshes.empty())
    fail(ExitCode::kUsage,
         "no mesh: give --mesh FILE.h5 or a generator spec such as mixed:20:rcm (or 'mesh' in "
         "the --config file)");
  if (config.reps < 1) fail(ExitCode::kUsage, "--reps must be at least 1");
  if (config.warmup < 0) fail(ExitCode::kUsage, "--warmup must not be negative");

  const std::vector<std::string> variants = Registry::instance().resolve(config.variants);
  for (const std::string& name : variants)
    if (!variant_info(name).available) Registry::instance().create(name);  // throws: how to get a CUDA build
  std::vector<AssemblyMode> modes;
  for (const std::string& mode : config.modes) add_unique(modes, parse_assembly_mode(mode));
  std::vector<AssemblyStrategy> strategies;
  for (const std::string& assembly : config.assemblies) add_unique(strategies, parse_assembly_strategy(assembly));
  std::vector<int> units_per_block;
  for (int units : config.edges_per_block) {
    if (units < 0) fail(ExitCode::kUsage, "--edges-per-block {}: must be 0 (the default) or positive", units);
    add_unique(units_per_block, units);
  }
  if (modes.empty() || strategies.empty() || units_per_block.empty())
    fail(ExitCode::kUsage, "--mode, --assembly and --edges-per-block each need at least one value");

  SweepPlan plan;
  const std::string cache = config.cache_dir.empty() ? default_mesh_cache() : config.cache_dir;
  std::vector<std::string> mesh_names;
  for (const std::string& mesh : config.meshes) add_unique(mesh_names, mesh);
  for (const std::string& mesh : mesh_names) plan.meshes.push_back(resolve_mesh_source(mesh, cache));

  for (std::size_t m = 0; m < plan.meshes.size(); ++m)
    for (const std::string& variant : variants) {
      const bool gpu = variant_info(variant).backend == Backend::kCuda;
      // CPU variants have no assembly strategy or block size: one case per mode.
      // `auto` becomes the variant's preferred strategy; a strategy asked for twice runs once.
      std::vector<AssemblyStrategy> variant_strategies;
      for (AssemblyStrategy strategy : strategies) add_unique(variant_strategies, resolve_strategy(strategy, variant_info(variant)));
      if (!gpu) variant_strategies.resize(1);
      const std::vector<int> variant_units = gpu ? units_per_block : std::vector{0};
      for (AssemblyStrategy strategy : variant_strategies)
        for (int units : variant_units)
          for (AssemblyMode mode : modes) {
            TimingOptions timing;
            timing.warmup = config.warmup;
            timing.reps = config.reps;
            timing.mode = mode;
            timing.edges_per_block = units;
            timing.strategy = strategy;
            plan.cases.push_back({m, variant, timing});
          }
    }
  return plan;
}

std::string case_label(const SweepPlan& plan, const SweepCase& sweep_case) {
  std::string label =
      fmt::format("{} {} {}", plan.meshes[sweep_case.mesh].name, sweep_case.variant, to_string(sweep_case.timing.mode));
  if (variant_info(sweep_case.variant).backend == Backend::kCuda) {
    const int units = sweep_case.timing.edges_per_block;
    label += fmt::format(" {} epb={}", to_string(sweep_case.timing.strategy),
                         units > 0 ? std::to_string(units) : std::string("default"));
  }
  return label;
}

SweepResult run_sweep(const SweepPlan& plan, const SweepConfig& config, const SweepObserver& observer) {
  SweepResult result;
  const bool any_gpu = std::any_of(plan.cases.begin(), plan.cases.end(), [](const SweepCase& c) {
    return variant_info(c.variant).backend == Backend::kCuda;
  });
  if (any_gpu) result.device = probe_device();
  if (result.device)
    say(observer.note, fmt::format("device: {}, copy {:.0f} GB/s, FP64 {:.0f} GFLOP/s (measured)", result.device->name,
                                   result.device->copy_bandwidth_gbs, result.device->fp64_gflops));

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
      const MeshSource& source = plan.meshes[sweep_case.mesh];
      ensure_mesh_file(source, observer.note);
      mesh = prepare_mesh(source.name, source.file, "", source.order, observer.note);
      const bool any_full = std::any_of(plan.cases.begin(), plan.cases.end(), [&](const SweepCase& c) {
        return c.mesh == sweep_case.mesh && c.timing.mode == AssemblyMode::kFull;
      });
      if (config.validate && any_full) reference = compute_reference(*mesh, observer.note);
      mesh_index = sweep_case.mesh;
      variant_name.clear();
    }
    if (sweep_case.variant != variant_name) {
      variant.reset();
      setup_failure.reset();
      variant_name = sweep_case.variant;
      try {
        variant = setup_variant(variant_name, *mesh);
      } catch (const std::exception& error) {
        setup_failure = classify(error);
      }
    }

    if (observer.case_started) observer.case_started(i, case_label(plan, sweep_case));
    const CaseRequest request{sweep_case.variant, sweep_case.timing, reference ? &*reference : nullptr,
                              config.tolerances};
    RunRecord record;
    if (setup_failure) {
      record = unrun_record(*mesh, request, *setup_failure);
    } else {
      try {
        record = run_case(*variant, *mesh, request, result.device);
      } catch (const std::exception& error) {
        record = unrun_record(*mesh, request, classify(error));
      }
    }
    if (observer.case_finished) observer.case_finished(record);
    result.records.push_back(std::move(record));
    if (observer.records_changed) observer.records_changed(result.records, result.device);
  }
  return result;
}

}  // namespace fluxjac
