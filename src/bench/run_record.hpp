// fluxjac — the result model: one record per case, and the JSON document of a sweep (docs/bench-json.md).
//
// A record becomes JSON in exactly one place, to_json below; the table and CSV printers (bench/report.hpp)
// and `fluxjac compare` (bench/result_compare.hpp) read the keys it writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/device_probe.hpp"
#include "jacobian/compare.hpp"
#include "part/local_part.hpp"
#include "registry/registry.hpp"
#include "solve/solve_step.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// Version of the result JSON layout (docs/bench-json.md); bump on incompatible changes. Version 4: solve cases
/// (`solve`), which a reader of version 3 would take for repeated assembly cases.
inline constexpr int kResultSchemaVersion = 4;
/// The `schema` member of every result file.
inline constexpr const char* kResultSchema = "fluxjac-bench";

/// \brief min / median / max of a sample (zeros when empty).
struct Stats {
  double min = 0.0, median = 0.0, max = 0.0;
  static Stats of(std::vector<double> samples);
};

/// \brief min / mean / max of values, one per rank (zeros when empty): how evenly the ranks shared the work.
struct Spread {
  double min = 0.0, mean = 0.0, max = 0.0;
  static Spread of(const std::vector<double>& values);
};

/// \brief What every record says about the mesh it ran on.
struct MeshSummary {
  std::string name;   ///< as the user gave it: a file path or a generator spec such as "mixed:100:rcm"
  std::string file;   ///< the file read (for a generator spec: the cached file)
  std::string order;  ///< node ordering of a generator spec (natural, random, rcm); empty for files
  std::int64_t n_nodes = 0, n_edges = 0;
  std::int64_t n_offdiag_blocks = 0;    ///< nnz of the block-CSR Aoff
  std::int64_t ordering_bandwidth = 0;  ///< max over edges of |L - R|
  double mean_edge_span = 0.0;          ///< mean over edges of |L - R|
  /// The mesh's content (mesh/mesh_digest.hpp): what `fluxjac compare` matches meshes by; none when unknown.
  std::optional<std::uint64_t> digest;
};

/// Whether a case ran: skipped cases could not run as asked (a usage or input limit, e.g. too many edges per
/// block for a kernel); failed ones hit a run-time error.
enum class CaseStatus { kOk, kSkipped, kFailed };
inline constexpr NamedValue<CaseStatus> kCaseStatusNames[] = {
    {CaseStatus::kOk, "ok"}, {CaseStatus::kSkipped, "skipped"}, {CaseStatus::kFailed, "failed"}};
constexpr const auto& names_of(CaseStatus) { return kCaseStatusNames; }

/// \brief How a run on many ranks shared the work (docs/design.md, "Many GPUs"); ranks == 1 for a single process.
struct ParallelFigures {
  int ranks = 1;
  Stats halo_ms;               ///< the slowest rank's ghost exchange, per repetition
  Spread rank_assembly_ms;     ///< each rank's median assembly time: min, mean and max over the ranks
  std::string halo_transport;  ///< "MPI", "NCCL" or "MPI via host"
  PartitionRecord partition;
  std::string scaling;                ///< "weak" or "strong" in a scaling sweep, else empty
  double efficiency = 0.0;            ///< parallel efficiency against the one-rank case of the scaling sweep (0: none)
  double efficiency_with_halo = 0.0;  ///< the same with each time the assembly plus the halo exchange before it
};

/// \brief The implicit step of a solve case (docs/design.md, "The solve"): the options it solved with, and its figures
/// once it solved (SolveOutcome without its vectors).
struct SolveFigures {
  SolveOptions options;    ///< CFL, preconditioner, sweeps, Aoff's precision, FGMRES's restart, tolerance, iterations
  bool on_device = false;  ///< solved on the GPU (a GPU variant's Jacobian), else on the host
  bool solved = false;     ///< the solve ran: the case ran and its assembly passed validation
  int iterations = 0;
  bool converged = false;
  double setup_ms = 0.0, solve_ms = 0.0, product_ms = 0.0;  ///< as SolveOutcome's
  double exchange_ms = 0.0, reduction_ms = 0.0;             ///< many ranks, rank 0's (SolveOutcome)
  double relative_residual = 0.0;                           ///< |M dQ + R| / |R|, recomputed in float64

  /// \brief Takes the figures of a solve's outcome and marks the step solved.
  void take(const SolveOutcome& outcome);
  double ms_per_iteration() const { return iterations > 0 ? solve_ms / iterations : 0.0; }
  /// \brief The Gauss-Seidel sweeps that count: mcgs's, 0 for block Jacobi (which has none).
  int sweeps() const { return options.preconditioner == kMulticolorGaussSeidel ? options.sweeps : 0; }
};

/// \brief One variant run on one mesh with one mode and tuning: everything the table, CSV and JSON show.
struct RunRecord {
  MeshSummary mesh;
  /// The registered variant: its name, backend, lanes per edge and per side, and work model.
  VariantInfo variant;
  AssemblyMode mode = AssemblyMode::kFull;
  /// The matrix assembled: A, or A^T (docs/design.md, "The adjoint orientation").
  Orientation orientation = Orientation::kA;
  bool residual = false;                               ///< the residual assembled in the same pass
  AoffPrecision aoff_precision = AoffPrecision::kF32;  ///< what Aoff was stored in: f32 or bf16
  /// The GPU assembly strategy that ran, edge or node (`auto` resolved: never kAuto); none for CPU variants.
  std::optional<AssemblyStrategy> assembly;
  /// Work units per block as asked: edges (edge assembly) or incident edges in whole rows (node assembly); 0 = the
  /// variant's default. resources->edges_per_block has the number used.
  int edges_per_block_requested = 0;
  int warmup = 0, reps = 0;
  CaseStatus status = CaseStatus::kOk;
  std::string reason;                ///< why a case was skipped or failed
  Stats assembly_ms, zero_ms;        ///< on many ranks: the slowest rank's, per repetition
  double ns_per_edge = 0.0;          ///< median assembly time per edge
  double gbytes_per_s = 0.0;         ///< work model bytes over median time
  double gflops_per_s = 0.0;         ///< work model flops over median time
  double roofline_fraction = 0.0;    ///< the variant's own floor time (its work model) over median time; mode full
                                     ///< only
  double time_relative_to_hd = 0.0;  ///< median time over hd's on the same mesh and mode (0: no hd case to compare)
  std::optional<KernelResources> resources;
  bool validated = false;  ///< validation ran (mode full with validation on)
  Tolerances tolerances;   ///< what validation passed against (a bf16 case's Aoff one raised: validation_tolerances)
  Comparison comparison;
  ParallelFigures parallel;
  /// A solve case (bench --solve): the assembly above (mode full, A, with the residual), validated, then the step
  /// solved with it; none for an assembly case.
  std::optional<SolveFigures> solve;
};

/// \brief Fills the derived figures (ns/edge, GB/s, GFLOP/s, roofline fraction) of a record.
void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device);

/// \brief Sets time_relative_to_hd of every record that ran, from the record of the same mesh, mode, orientation,
/// residual and Aoff precision whose variant is the analytic Jacobian (Seeding::kAnalytic: hd), the yardstick of the AD
/// types as in Sacado's performance tests; with several such cases there (strategies, block sizes), the fastest.
void relate_to_hd(std::vector<RunRecord>& records);

/// \brief The run object of docs/bench-json.md: the one definition of a record's keys, in file order.
/// (nlohmann's to_json hook, so `nlohmann::ordered_json run = record;` works too.)
void to_json(nlohmann::ordered_json& run, const RunRecord& record);

/// \brief The whole result document: {"schema", "schema_version", "fluxjac": build, "host", "device" | null,
/// "model", "runs": [...]}.
nlohmann::ordered_json results_document(const std::vector<RunRecord>& records,
                                        const std::optional<DeviceCeilings>& device);

}  // namespace fluxjac
