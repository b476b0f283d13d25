// fluxjac — benchmark sweeps: variants x meshes x assembly strategies x edges per block x modes, and solve cases
// (variants x meshes x CFL numbers x preconditioners x Aoff precisions).
//
// `fluxjac bench` and `fluxjac run` (a sweep of one mesh) plan the cases up front (plan_sweep checks every
// option, name, spec and file before anything runs), then run them mesh by mesh: each mesh is generated or read once,
// the CPU reference is computed once per mesh, each variant is set up once per mesh, and a case that cannot run is
// recorded with its reason instead of ending the sweep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/case_options.hpp"
#include "bench/device_probe.hpp"
#include "bench/mesh_source.hpp"
#include "bench/report.hpp"
#include "bench/run_case.hpp"
#include "bench/solve_case.hpp"
#include "jacobian/compare.hpp"
#include "ranks/communicator.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// \brief What to sweep: the case options (one axis per list) over one or more meshes. `fluxjac run` is the
/// sweep of one mesh, with a state file, a stored reference and the assembled Jacobian as extras.
struct SweepConfig {
  CaseOptions cases;
  std::vector<std::string> meshes;  ///< files or generator specs (mesh_source.hpp)
  std::string state;                ///< state file of a one-mesh sweep; empty: each mesh file's own state
  std::string reference;            ///< stored Jacobian (.h5) to validate a one-mesh sweep against; empty: CPU
  std::string cache_dir;            ///< where generator specs are cached (default_mesh_cache() when empty)
  SolveSweep solves;                ///< solve cases besides the assembly cases (bench --solve); none by default
  /// Whether the variants named explicitly must run (run) or may be skipped (bench). When true, a named variant
  /// that cannot run on this machine (no GPU) is refused up front, before any work, and the command's exit code
  /// says when one of their cases was skipped; when false, such cases are recorded as skipped with the reason.
  /// Variants brought in by "all" are always skipped quietly where they cannot run.
  bool named_cases_must_run = false;
};

/// \brief One case: a variant on a mesh with assembly and timing options.
struct SweepCase {
  std::size_t mesh = 0;  ///< index into SweepPlan::meshes
  std::string variant;
  AssemblyOptions assembly;  ///< mode, strategy, edges per block, orientation
  TimingOptions timing;      ///< warm-up and repetitions (progress: SweepObserver::repetition_done)
  bool named = false;        ///< the variant was asked for by name, not brought in by "all"
  std::string skip_reason;   ///< why the case cannot run here, briefly ("no CUDA device"; skipped); empty: it runs
  /// A solve case: the assembly (mode full, A, with the residual) validated, then the step solved with it
  /// (solve_assembled); none for an assembly case.
  std::optional<SolveOptions> solve;
};

/// \brief The resolved meshes and every case in run order (mesh, variant, assembly, edges per block, mode; then the
/// variant's solve cases on the mesh, each assembling with the variant's own strategy). CPU variants have no assembly
/// strategy or edges per block, so they get one case per mode.
struct SweepPlan {
  std::vector<MeshSource> meshes;
  std::vector<SweepCase> cases;
  std::vector<std::string> notes;  ///< options without effect on these cases, and what "all" stood for
};

/// \brief Checks the configuration (check_case_options, then options that contradict each other or cannot run
/// here: Error(kUsage) naming what to fix) and lists the cases. Generates and reads nothing.
SweepPlan plan_sweep(const SweepConfig& config);

/// \brief Error(kUsage) when every case of the plan is skipped up front (GPU variants only, and no usable CUDA
/// device), naming the variants and why, once: a sweep that would run nothing fails before any work. `run` and
/// `bench` call it after plan_sweep (`bench --dry-run` does not: it lists the skipped cases).
void check_some_case_runs(const SweepPlan& plan);

/// \brief "mixed:100:rcm hd full node epb=16", "mixed:100:rcm hd solve cfl=100 mcgs sweeps=2 f32 node": how progress
/// lines name a case.
std::string case_label(const SweepPlan& plan, const SweepCase& sweep_case);

/// \brief Hooks through which a sweep reports; any may be empty.
struct SweepObserver {
  Note note;  ///< progress lines (mesh, reference, device)
  std::function<void(std::size_t index, const std::string& label)> case_started;  ///< index from 0
  /// After each repetition of a running case (TimingOptions::progress).
  std::function<void(std::int64_t done, std::int64_t total)> repetition_done;
  std::function<void(const RunRecord& record)> case_finished;
  /// When set, receives the Jacobian of every case of mode full that ran (fetched from the variant).
  std::function<void(const SweepCase& sweep_case, const PreparedMesh& mesh, const Jacobian& jacobian)> assembled;
  /// After every case, with all records so far (lets the caller rewrite its output files).
  std::function<void(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device)>
      records_changed;
};

struct SweepResult {
  std::vector<RunRecord> records;        ///< one per case, in plan order
  std::optional<DeviceCeilings> device;  ///< measured when a GPU variant is in the sweep
};

/// \brief Runs every case of the plan on the ranks of comm (one: the single-process path; many: each case on the
/// ranks' parts of the mesh, docs/design.md, "Many GPUs"). Errors of a case (Error with kUsage or kInvalidInput:
/// skipped; anything else: failed) are recorded and the sweep goes on; errors reading or generating a mesh, and a
/// stored reference of another mesh (checked before any case runs), end it.
SweepResult run_sweep(const SweepPlan& plan, const SweepConfig& config, const SweepObserver& observer,
                      const Communicator& comm = Communicator::world());

/// \brief The generator spec of about `ranks` times the edges of spec (n scaled by the cube root): the mesh of
/// one point of a weak-scaling sweep. Files cannot be scaled: Error(kUsage).
std::string scale_mesh_spec(const std::string& spec, int ranks);

/// \brief Sets the parallel efficiency of every record of a scaling sweep from the one-rank record of the same
/// case (the same position in its rank count's plan: `cases_per_count` records per rank count, one-rank first):
/// strong scaling t1 / (P tP); weak scaling (ns per edge per GPU at 1) / (ns per edge per GPU at P); and the same with
/// each time the assembly plus the halo exchange before it (efficiency_with_halo).
void set_scaling_efficiency(std::vector<RunRecord>& records, std::size_t cases_per_count, const std::string& scaling);

}  // namespace fluxjac
