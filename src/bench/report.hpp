// fluxjac — per-case results: the performance model (bytes, flops, roofline) and table/CSV/JSON output.
//
// The JSON layout is documented in docs/bench-json.md; `fluxjac compare` and scripts/plot_bench.py read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_probe.hpp"
#include "jacobian/compare.hpp"
#include "variants/registry.hpp"

namespace fluxjac {

/// \brief Minimum traffic and arithmetic of one assembly (DESIGN.md 6).
///
/// Bytes: per edge its two node ids (int32), normal (3 float64), area, two Aoff slots (int32) and two
/// Aoff blocks written (2 x 25 float32); per node its state (5 float64) read once and its Adiag block
/// read and written once (2 x 25 float64). Zeroing Adiag is timed and counted apart.
/// Flops: about 2,700 FP64 operations per edge for the multivariate-dual flux derivative (DESIGN.md 6).
struct WorkModel {
  double bytes = 0.0;
  double flops = 0.0;
  static WorkModel of(std::int64_t n_nodes, std::int64_t n_edges);
};

inline constexpr double kFlopsPerEdge = 2700.0;
/// Version of the result JSON layout (docs/bench-json.md); bump on incompatible changes.
inline constexpr int kResultSchemaVersion = 1;

/// \brief min / median / max of a sample (zeros when empty).
struct Stats {
  double min = 0.0, median = 0.0, max = 0.0;
  static Stats of(std::vector<double> samples);
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
};

/// Whether a case ran: skipped cases could not run as asked (a usage or input limit, e.g. too many edges per
/// block for a kernel); failed ones hit a run-time error.
enum class CaseStatus { kOk, kSkipped, kFailed };
const char* to_string(CaseStatus status);

/// \brief One variant run on one mesh with one mode and tuning: everything the table, CSV and JSON show.
struct RunRecord {
  MeshSummary mesh;
  std::string variant, backend, mode;
  std::string assembly;      ///< GPU assembly strategy: "edge" or "node"; empty for CPU variants
  int threads_per_edge = 0;  ///< the variant's lanes per edge (edge assembly)
  int threads_per_side = 0;  ///< the variant's lanes per (node, incident edge) (node assembly)
  /// Work units per block as asked: edges (edge assembly) or incident edges in whole rows (node assembly); 0 = the variant's
  /// default. resources->edges_per_block has the number used.
  int edges_per_block_requested = 0;
  int warmup = 0, reps = 0;
  CaseStatus status = CaseStatus::kOk;
  std::string reason;  ///< why a case was skipped or failed
  Stats assembly_ms, zero_ms;
  double ns_per_edge = 0.0;        ///< median assembly time per edge
  double gbytes_per_s = 0.0;       ///< WorkModel bytes over median time
  double gflops_per_s = 0.0;       ///< WorkModel flops over median time
  double roofline_fraction = 0.0;  ///< max(bytes/copy bandwidth, flops/FP64 rate) over median time
  std::optional<KernelResources> resources;
  bool validated = false;  ///< validation ran (mode full with validation on)
  Tolerances tolerances;   ///< what validation passed against
  Comparison comparison;
};

/// \brief Fills the derived figures (ns/edge, GB/s, GFLOP/s, roofline fraction) of a record.
void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device);

/// \brief Human-readable table (fmt) of the runs of one mesh; skipped and failed cases show their reason.
std::string format_table(const std::vector<RunRecord>& records);

/// \brief CSV with a header row, one row per case, build and device metadata repeated in every row.
std::string format_csv(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device);

/// \brief JSON document of docs/bench-json.md: {"schema", "fluxjac": build, "host", "device" | null,
/// "model", "runs": [...]}.
std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device);

}  // namespace fluxjac
