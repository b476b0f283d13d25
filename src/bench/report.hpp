// fluxjac — per-run results: the performance model (bytes, flops, roofline) and table/CSV/JSON output.
#pragma once

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

/// \brief min / median / max of a sample (zeros when empty).
struct Stats {
  double min = 0.0, median = 0.0, max = 0.0;
  static Stats of(std::vector<double> samples);
};

/// \brief One variant run on one mesh: everything the table, CSV and JSON show.
struct RunRecord {
  std::string mesh;
  std::int64_t n_nodes = 0, n_edges = 0;
  std::string variant, backend, mode;
  int threads_per_edge = 0;
  int reps = 0;
  Stats assembly_ms, zero_ms;
  double ns_per_edge = 0.0;         ///< median assembly time per edge
  double gbytes_per_s = 0.0;        ///< WorkModel bytes over median time
  double roofline_fraction = 0.0;   ///< max(bytes/copy bandwidth, flops/FP64 rate) over median time
  std::optional<KernelResources> resources;
  bool validated = false;           ///< validation ran (mode full with --validate)
  Comparison comparison;
};

/// \brief Fills the derived figures (ns/edge, GB/s, roofline fraction) of a record.
void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device);

/// \brief Human-readable table (fmt) of the runs.
std::string format_table(const std::vector<RunRecord>& records);

/// \brief CSV with a header row, one row per run.
std::string format_csv(const std::vector<RunRecord>& records);

/// \brief JSON document: {"fluxjac": {...build...}, "device": {...} | null, "runs": [...]}.
std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device);

/// \brief Writes text to a file atomically (temporary name, then rename).
void write_text_file(const std::string& path, const std::string& text);

}  // namespace fluxjac
