// fluxjac — benchmark sweeps: variants x meshes x assembly strategies x edges per block x modes.
//
// `fluxjac bench` plans the cases up front (plan_sweep checks every name, spec and file before anything
// runs), then runs them mesh by mesh: each mesh is generated or read once, the CPU reference is computed
// once per mesh, each variant is set up once per mesh, and a case that cannot run is recorded with its
// reason instead of ending the sweep.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_probe.hpp"
#include "bench/mesh_source.hpp"
#include "bench/report.hpp"
#include "jacobian/compare.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// \brief What to sweep; every list is one axis of the cross product.
struct SweepConfig {
  std::vector<std::string> variants{"all"};     ///< names, comma lists or "all" (Registry::resolve)
  std::vector<std::string> meshes;              ///< files or generator specs (mesh_source.hpp)
  std::vector<std::string> modes{"full"};       ///< full, compute-only, scatter-only
  std::vector<std::string> assemblies{"auto"};  ///< GPU assembly strategies: auto, node, edge
  std::vector<int> edges_per_block{0};          ///< GPU work units per block; 0 = the variant's default
  int warmup = 3;
  int reps = 20;
  bool validate = true;  ///< against the CPU reference, computed once per mesh (mode full only)
  Tolerances tolerances;
  std::string cache_dir;  ///< where generator specs are cached (default_mesh_cache() when empty)
};

/// \brief One case: a variant on a mesh with timing options.
struct SweepCase {
  std::size_t mesh = 0;  ///< index into SweepPlan::meshes
  std::string variant;
  TimingOptions timing;
};

/// \brief The resolved meshes and every case in run order (mesh, variant, assembly, edges per block, mode).
/// CPU variants have no assembly strategy or edges per block, so they get one case per mode.
struct SweepPlan {
  std::vector<MeshSource> meshes;
  std::vector<SweepCase> cases;
};

/// \brief Checks the configuration (Error(kUsage) naming what to fix) and lists the cases. Generates nothing.
SweepPlan plan_sweep(const SweepConfig& config);

/// \brief "mixed:100:rcm hd full node epb=16": how progress lines name a case.
std::string case_label(const SweepPlan& plan, const SweepCase& sweep_case);

/// \brief Hooks through which a sweep reports; any may be empty.
struct SweepObserver {
  Note note;  ///< progress lines (mesh, reference, device)
  std::function<void(std::size_t index, const std::string& label)> case_started;  ///< index from 0
  std::function<void(const RunRecord& record)> case_finished;
  /// After every case, with all records so far (lets the caller rewrite its output files).
  std::function<void(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device)>
      records_changed;
};

struct SweepResult {
  std::vector<RunRecord> records;        ///< one per case, in plan order
  std::optional<DeviceCeilings> device;  ///< measured when a GPU variant is in the sweep
};

/// \brief Runs every case of the plan. Errors of a case (Error with kUsage or kInvalidInput: skipped;
/// anything else: failed) are recorded and the sweep goes on; errors reading or generating a mesh end it.
SweepResult run_sweep(const SweepPlan& plan, const SweepConfig& config, const SweepObserver& observer);

}  // namespace fluxjac
