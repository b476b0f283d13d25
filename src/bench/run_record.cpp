#include "bench/run_record.hpp"

#include <algorithm>
#include <ctime>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench/build_info.hpp"
#include "bench/work_model.hpp"
#include "mesh/mesh_digest.hpp"

namespace fluxjac {
namespace {

using nlohmann::ordered_json;

/// The work of one GPU: on many ranks, the mean share of the whole mesh.
WorkCase work_case_of(const RunRecord& record) {
  const std::int64_t ranks = std::max(1, record.parallel.ranks);
  return {record.variant.name,
          record.assembly ? to_string(*record.assembly) : "",
          record.mesh.n_nodes / ranks,
          record.mesh.n_edges / ranks,
          record.mesh.n_offdiag_blocks / ranks,
          record.aoff_precision};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

ordered_json stats_json(const Stats& s) { return {{"min", s.min}, {"median", s.median}, {"max", s.max}}; }

ordered_json spread_json(const Spread& s) { return {{"min", s.min}, {"mean", s.mean}, {"max", s.max}}; }

ordered_json build_json() {
  const BuildInfo& b = build_info();
  return {{"version", b.version},
          {"git_revision", b.git_revision},
          {"cxx_compiler", b.cxx_compiler},
          {"cxx_flags", b.cxx_flags},
          {"cuda_compiler", b.cuda_compiler},
          {"cuda_flags", b.cuda_flags},
          {"build_type", b.build_type},
          {"cuda_architectures", b.cuda_architectures}};
}

ordered_json device_json(const std::optional<DeviceCeilings>& device) {
  if (!device) return nullptr;
  return {{"name", device->name},
          {"sm_count", device->sm_count},
          {"sm_clock_mhz", device->sm_clock_mhz},
          {"memory_clock_mhz", device->memory_clock_mhz},
          {"memory_gib", device->memory_gib},
          {"l2_mib", device->l2_mib},
          {"cuda_runtime", device->runtime_version},
          {"cuda_driver", device->driver_version},
          {"copy_bandwidth_gbs", device->copy_bandwidth_gbs},
          {"fp64_gflops", device->fp64_gflops}};
}

/// The work model of every variant the document's runs use: per strategy its FP64 flops and instructions per edge
/// and its bytes per edge, per off-diagonal block and per node (src/registry/variant_work.hpp).
ordered_json model_json(const std::vector<RunRecord>& records) {
  ordered_json model = ordered_json::object();
  for (const RunRecord& r : records) {
    if (r.variant.name.empty() || model.contains(r.variant.name)) continue;
    ordered_json strategies = ordered_json::object();
    for (const auto& [name, work] : r.variant.work.strategies)
      strategies[name] = {{"fp64_flops_per_edge", work.fp64_flops_per_edge()},
                          {"fp64_instructions_per_edge", work.fp64_instructions_per_edge()},
                          {"bytes_per_edge", work.bytes.per_edge},
                          {"bytes_per_block", work.bytes.per_block},
                          {"bytes_per_node", work.bytes.per_node},
                          {"zeroing_bytes_per_node", work.bytes.zeroing_per_node}};
    model[r.variant.name] = std::move(strategies);
  }
  return model;
}

/// The steps that made the ranks' parts, each with its time and peak memory per rank (min / mean / max).
ordered_json steps_json(const std::vector<SetupStep>& steps) {
  ordered_json list = ordered_json::array();
  const auto range = [](const RankRange& r) { return ordered_json{{"min", r.min}, {"mean", r.mean}, {"max", r.max}}; };
  for (const SetupStep& step : steps)
    list.push_back({{"step", step.name}, {"seconds", range(step.seconds)}, {"peak_bytes", range(step.peak_bytes)}});
  return list;
}

/// The solve of a solve case, null for an assembly case; its figures null until it solved.
ordered_json solve_json(const RunRecord& r) {
  if (!r.solve) return nullptr;
  const SolveFigures& s = *r.solve;
  auto if_solved = [&s](ordered_json value) { return s.solved ? std::move(value) : ordered_json(); };
  return {{"cfl", s.options.cfl},
          {"preconditioner", s.options.preconditioner},
          {"sweeps", s.sweeps()},
          {"restart", s.options.krylov.restart},
          {"tolerance", s.options.krylov.tolerance},
          {"max_iterations", s.options.krylov.max_iterations},
          {"aoff_precision", to_string(s.options.aoff_precision)},
          {"solved_on", s.on_device ? "gpu" : "cpu"},
          {"iterations", if_solved(s.iterations)},
          {"converged", if_solved(s.converged)},
          {"setup_ms", if_solved(s.setup_ms)},
          {"solve_ms", if_solved(s.solve_ms)},
          {"ms_per_iteration", if_solved(s.ms_per_iteration())},
          {"product_ms", if_solved(s.product_ms)},
          {"exchange_ms", if_solved(s.exchange_ms)},
          {"reduction_ms", if_solved(s.reduction_ms)},
          {"relative_residual", if_solved(s.relative_residual)}};
}

/// The many-rank figures of a record, null for a single process (unless its mesh was generated in parts).
ordered_json parallel_json(const RunRecord& r) {
  const ParallelFigures& p = r.parallel;
  if (p.ranks <= 1 && p.scaling.empty() && p.partition.steps.empty()) return nullptr;
  const bool ok = r.status == CaseStatus::kOk;
  const PartitionRecord& part = p.partition;
  const PartitionStatistics& statistics = part.statistics;
  return {{"halo_ms", ok && p.ranks > 1 ? stats_json(p.halo_ms) : ordered_json()},
          {"halo_transport", p.halo_transport},
          {"rank_assembly_ms", ok && p.ranks > 1 ? spread_json(p.rank_assembly_ms) : ordered_json()},
          {"ns_per_edge_per_gpu", ok ? ordered_json(r.ns_per_edge * p.ranks) : ordered_json()},
          {"partition", p.ranks > 1 || !part.steps.empty() ? ordered_json{{"source", part.source},
                                                                          {"edge_cut", statistics.edge_cut},
                                                                          {"ghosts_min", statistics.ghosts_min()},
                                                                          {"ghosts_max", statistics.ghosts_max()},
                                                                          {"ghosts_total", statistics.total_ghosts},
                                                                          {"edge_imbalance", statistics.edge_imbalance},
                                                                          {"node_imbalance", statistics.node_imbalance},
                                                                          {"steps", steps_json(part.steps)}}
                                                           : ordered_json()},
          {"scaling", p.scaling.empty() ? ordered_json() : ordered_json(p.scaling)},
          {"efficiency", p.efficiency > 0 ? ordered_json(p.efficiency) : ordered_json()},
          {"efficiency_with_halo", p.efficiency_with_halo > 0 ? ordered_json(p.efficiency_with_halo) : ordered_json()}};
}

}  // namespace

Stats Stats::of(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return {samples.front(), median, samples.back()};
}

Spread Spread::of(const std::vector<double>& values) {
  if (values.empty()) return {};
  double sum = 0.0;
  for (const double value : values) sum += value;
  return {*std::min_element(values.begin(), values.end()), sum / static_cast<double>(values.size()),
          *std::max_element(values.begin(), values.end())};
}

void SolveFigures::take(const SolveOutcome& outcome) {
  solved = true;
  iterations = outcome.krylov.iterations;
  converged = outcome.krylov.converged;
  setup_ms = outcome.setup_ms;
  solve_ms = outcome.solve_ms;
  product_ms = outcome.product_ms;
  exchange_ms = outcome.exchange_ms;
  reduction_ms = outcome.reduction_ms;
  relative_residual = outcome.relative_residual;
}

void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device) {
  const double seconds = record.assembly_ms.median * 1e-3;
  if (record.status != CaseStatus::kOk || seconds <= 0.0 || record.mesh.n_edges <= 0) return;
  // Only a GPU case is held against the GPU's ceilings.
  const bool gpu = record.variant.backend == Backend::kCuda;
  const WorkEstimate work = estimate_work(work_case_of(record), gpu ? device : std::nullopt);
  record.ns_per_edge = seconds * 1e9 / static_cast<double>(record.mesh.n_edges);
  if (!record.variant.emulates.empty()) return;  // a CPU emulation's time is held against nothing
  record.gbytes_per_s = work.bytes / seconds / 1e9;
  record.gflops_per_s = work.flops / seconds / 1e9;
  // The work model is that of the whole assembly: a Table IV mode that leaves out a stage has no floor of its own.
  record.roofline_fraction =
      record.mode == AssemblyMode::kFull ? work.fraction_of_floor(record.assembly_ms.median) : 0.0;
}

void relate_to_hd(std::vector<RunRecord>& records) {
  for (RunRecord& r : records) {
    r.time_relative_to_hd = 0.0;
    if (r.status != CaseStatus::kOk) continue;
    double hd_ms = 0.0;
    for (const RunRecord& hd : records)
      if (hd.variant.seeding == Seeding::kAnalytic && hd.variant.emulates.empty() && r.variant.emulates.empty() &&
          hd.status == CaseStatus::kOk && hd.mesh.name == r.mesh.name && hd.mode == r.mode &&
          hd.orientation == r.orientation && hd.residual == r.residual && hd.aoff_precision == r.aoff_precision &&
          hd.assembly_ms.median > 0.0 && (hd_ms == 0.0 || hd.assembly_ms.median < hd_ms))
        hd_ms = hd.assembly_ms.median;
    if (hd_ms > 0.0) r.time_relative_to_hd = r.assembly_ms.median / hd_ms;
  }
}

void to_json(ordered_json& run, const RunRecord& r) {
  const bool ok = r.status == CaseStatus::kOk;
  const WorkEstimate work = estimate_work(work_case_of(r), std::nullopt);
  // Figures that do not apply are null, never 0: a reader cannot mistake them for measurements.
  auto if_ok = [ok](ordered_json value) { return ok ? std::move(value) : ordered_json(); };
  ordered_json resources;
  if (r.resources)
    resources = {{"registers", r.resources->registers},
                 {"local_bytes", r.resources->local_bytes},
                 {"shared_bytes", r.resources->shared_bytes},
                 {"block_threads", r.resources->block_threads},
                 {"edges_per_block", r.resources->edges_per_block},
                 {"max_block_threads", r.resources->max_block_threads},
                 {"node_traversal",
                  r.resources->node_traversal.empty() ? ordered_json() : ordered_json(r.resources->node_traversal)}};
  ordered_json validation;
  if (r.validated)
    validation = {{"adiag_error", r.comparison.adiag_error},       {"aoff_error", r.comparison.aoff_error},
                  {"residual_error", r.comparison.residual_error}, {"adiag_tolerance", r.tolerances.adiag},
                  {"aoff_tolerance", r.tolerances.aoff},           {"residual_tolerance", r.tolerances.residual},
                  {"same_pattern", r.comparison.same_pattern},     {"passed", r.comparison.passed}};
  run = {{"mesh", r.mesh.name},
         {"mesh_file", r.mesh.file},
         {"mesh_order", r.mesh.order},
         {"n_nodes", r.mesh.n_nodes},
         {"n_edges", r.mesh.n_edges},
         {"n_offdiag_blocks", r.mesh.n_offdiag_blocks},
         {"ordering_bandwidth", r.mesh.ordering_bandwidth},
         {"mean_edge_span", r.mesh.mean_edge_span},
         {"mesh_digest", r.mesh.digest ? ordered_json(digest_text(*r.mesh.digest)) : ordered_json()},
         {"variant", r.variant.name},
         {"backend", to_string(r.variant.backend)},
         {"emulates", r.variant.emulates.empty() ? ordered_json() : ordered_json(r.variant.emulates)},
         {"mode", to_string(r.mode)},
         {"orientation", to_string(r.orientation)},
         {"residual", r.residual},
         {"aoff_precision", to_string(r.aoff_precision)},
         {"assembly", r.assembly ? ordered_json(to_string(*r.assembly)) : ordered_json()},
         {"threads_per_edge", r.variant.threads_per_edge},
         {"threads_per_side", r.variant.threads_per_side},
         {"edges_per_block", r.resources ? ordered_json(r.resources->edges_per_block) : ordered_json()},
         {"edges_per_block_requested", r.edges_per_block_requested},
         {"warmup", r.warmup},
         {"reps", r.reps},
         {"status", to_string(r.status)},
         {"reason", r.reason},
         {"assembly_ms", if_ok(stats_json(r.assembly_ms))},
         {"zero_ms", if_ok(stats_json(r.zero_ms))},
         {"ns_per_edge", if_ok(r.ns_per_edge)},
         {"model_bytes", work.bytes},
         {"model_flops", work.flops},
         {"model_fp64_instructions", work.fp64_instructions},
         {"gb_per_s", r.variant.emulates.empty() ? if_ok(r.gbytes_per_s) : ordered_json()},
         {"gflop_per_s", r.variant.emulates.empty() ? if_ok(r.gflops_per_s) : ordered_json()},
         {"roofline_fraction", r.roofline_fraction > 0 ? ordered_json(r.roofline_fraction) : ordered_json()},
         {"time_relative_to_hd", r.time_relative_to_hd > 0 ? ordered_json(r.time_relative_to_hd) : ordered_json()},
         {"resources", resources},
         {"validation", validation},
         {"ranks", r.parallel.ranks},
         {"parallel", parallel_json(r)},
         {"solve", solve_json(r)}};
}

ordered_json results_document(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  ordered_json runs = ordered_json::array();
  for (const RunRecord& r : records) runs.push_back(r);
  return {{"schema", kResultSchema},       {"schema_version", kResultSchemaVersion},
          {"fluxjac", build_json()},       {"host", {{"name", host_name()}, {"created_utc", utc_now()}}},
          {"device", device_json(device)}, {"model", model_json(records)},
          {"runs", std::move(runs)}};
}

}  // namespace fluxjac
