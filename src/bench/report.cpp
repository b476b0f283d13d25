#include "bench/report.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

#include "bench/build_info.hpp"
#include "bench/json.hpp"

namespace fluxjac {

WorkModel WorkModel::of(std::int64_t n_nodes, std::int64_t n_edges) {
  const double per_edge = 2 * 4.0          // node ids (int32)
                          + 3 * 8.0        // normal
                          + 8.0            // area
                          + 2 * 4.0        // Aoff slots (int32)
                          + 2 * 25 * 4.0;  // Aoff[L,R] and Aoff[R,L] written (float32)
  const double per_node = 5 * 8.0          // state read once
                          + 2 * 25 * 8.0;  // Adiag read and written once
  return {per_edge * n_edges + per_node * n_nodes, kFlopsPerEdge * n_edges};
}

Stats Stats::of(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return {samples.front(), median, samples.back()};
}

const char* to_string(CaseStatus status) {
  switch (status) {
    case CaseStatus::kOk:
      return "ok";
    case CaseStatus::kSkipped:
      return "skipped";
    case CaseStatus::kFailed:
      return "failed";
  }
  return "?";
}

void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device) {
  const double seconds = record.assembly_ms.median * 1e-3;
  if (record.status != CaseStatus::kOk || seconds <= 0.0 || record.mesh.n_edges <= 0) return;
  const WorkModel work = WorkModel::of(record.mesh.n_nodes, record.mesh.n_edges);
  record.ns_per_edge = seconds * 1e9 / static_cast<double>(record.mesh.n_edges);
  record.gbytes_per_s = work.bytes / seconds / 1e9;
  record.gflops_per_s = work.flops / seconds / 1e9;
  if (device && record.backend == "cuda" && device->copy_bandwidth_gbs > 0 && device->fp64_gflops > 0) {
    const double floor_seconds =
        std::max(work.bytes / (device->copy_bandwidth_gbs * 1e9), work.flops / (device->fp64_gflops * 1e9));
    record.roofline_fraction = floor_seconds / seconds;
  }
}

namespace {

std::string validation_text(const RunRecord& r) {
  if (!r.validated) return "n/a";
  return r.comparison.passed ? "PASS" : "FAIL";
}

std::string error_text(double error, bool validated) {
  return validated ? fmt::format("{:.2e}", error) : std::string("-");
}

/// The edges per block a case used (the kernel's report), else the one asked for; empty for CPU variants.
std::string edges_per_block_text(const RunRecord& r) {
  if (r.resources) return std::to_string(r.resources->edges_per_block);
  return r.edges_per_block_requested > 0 ? std::to_string(r.edges_per_block_requested) : "";
}

/// One CSV field, quoted (RFC 4180) when it holds a separator, quote or line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
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

Json stats_json(const Stats& s) { return Json::object().set("min", s.min).set("median", s.median).set("max", s.max); }

Json build_json() {
  const BuildInfo& b = build_info();
  return Json::object()
      .set("version", b.version)
      .set("git_revision", b.git_revision)
      .set("cxx_compiler", b.cxx_compiler)
      .set("cxx_flags", b.cxx_flags)
      .set("cuda_compiler", b.cuda_compiler)
      .set("cuda_flags", b.cuda_flags)
      .set("build_type", b.build_type)
      .set("cuda_architectures", b.cuda_architectures);
}

Json device_json(const std::optional<DeviceCeilings>& device) {
  if (!device) return Json();
  return Json::object()
      .set("name", device->name)
      .set("sm_count", device->sm_count)
      .set("sm_clock_mhz", device->sm_clock_mhz)
      .set("memory_clock_mhz", device->memory_clock_mhz)
      .set("memory_gib", device->memory_gib)
      .set("l2_mib", device->l2_mib)
      .set("cuda_runtime", device->runtime_version)
      .set("cuda_driver", device->driver_version)
      .set("copy_bandwidth_gbs", device->copy_bandwidth_gbs)
      .set("fp64_gflops", device->fp64_gflops);
}

Json model_json() {
  const WorkModel edge = WorkModel::of(0, 1), node = WorkModel::of(1, 0);
  return Json::object()
      .set("bytes_per_edge", edge.bytes)
      .set("bytes_per_node", node.bytes)
      .set("flops_per_edge", edge.flops);
}

Json run_json(const RunRecord& r) {
  const bool ok = r.status == CaseStatus::kOk;
  const WorkModel work = WorkModel::of(r.mesh.n_nodes, r.mesh.n_edges);
  Json resources;
  if (r.resources)
    resources = Json::object()
                    .set("registers", r.resources->registers)
                    .set("local_bytes", r.resources->local_bytes)
                    .set("shared_bytes", r.resources->shared_bytes)
                    .set("block_threads", r.resources->block_threads)
                    .set("edges_per_block", r.resources->edges_per_block)
                    .set("max_block_threads", r.resources->max_block_threads);
  Json validation;
  if (r.validated)
    validation = Json::object()
                     .set("adiag_error", r.comparison.adiag_error)
                     .set("aoff_error", r.comparison.aoff_error)
                     .set("adiag_tolerance", r.tolerances.adiag)
                     .set("aoff_tolerance", r.tolerances.aoff)
                     .set("same_pattern", r.comparison.same_pattern)
                     .set("passed", r.comparison.passed);
  auto if_ok = [ok](Json value) { return ok ? std::move(value) : Json(); };
  return Json::object()
      .set("mesh", r.mesh.name)
      .set("mesh_file", r.mesh.file)
      .set("mesh_order", r.mesh.order)
      .set("n_nodes", r.mesh.n_nodes)
      .set("n_edges", r.mesh.n_edges)
      .set("n_offdiag_blocks", r.mesh.n_offdiag_blocks)
      .set("ordering_bandwidth", r.mesh.ordering_bandwidth)
      .set("mean_edge_span", r.mesh.mean_edge_span)
      .set("variant", r.variant)
      .set("backend", r.backend)
      .set("mode", r.mode)
      .set("assembly", r.assembly.empty() ? Json() : Json(r.assembly))
      .set("threads_per_edge", r.threads_per_edge)
      .set("threads_per_side", r.threads_per_side)
      .set("edges_per_block", r.resources ? Json(r.resources->edges_per_block) : Json())
      .set("edges_per_block_requested", r.edges_per_block_requested)
      .set("warmup", r.warmup)
      .set("reps", r.reps)
      .set("status", to_string(r.status))
      .set("reason", r.reason)
      .set("assembly_ms", if_ok(stats_json(r.assembly_ms)))
      .set("zero_ms", if_ok(stats_json(r.zero_ms)))
      .set("ns_per_edge", if_ok(r.ns_per_edge))
      .set("model_bytes", work.bytes)
      .set("model_flops", work.flops)
      .set("gb_per_s", if_ok(r.gbytes_per_s))
      .set("gflop_per_s", if_ok(r.gflops_per_s))
      .set("roofline_fraction", r.roofline_fraction > 0 ? Json(r.roofline_fraction) : Json())
      .set("resources", resources)
      .set("validation", validation);
}

}  // namespace

std::string format_table(const std::vector<RunRecord>& records) {
  std::string out =
      fmt::format("{:<10} {:<13} {:<8} {:>4} {:>10} {:>10} {:>10} {:>9} {:>8} {:>8} {:>10} {:>10} {:>6}\n", "variant",
                  "mode", "assembly", "epb", "min ms", "median ms", "max ms", "ns/edge", "GB/s", "roofline",
                  "Adiag err", "Aoff err", "valid");
  for (const RunRecord& r : records) {
    const std::string epb = edges_per_block_text(r);
    if (r.status != CaseStatus::kOk) {
      out += fmt::format("{:<10} {:<13} {:<8} {:>4} {}: {}\n", r.variant, r.mode, r.assembly.empty() ? "-" : r.assembly,
                         epb.empty() ? "-" : epb, to_string(r.status), r.reason);
      continue;
    }
    out += fmt::format(
        "{:<10} {:<13} {:<8} {:>4} {:>10.4f} {:>10.4f} {:>10.4f} {:>9.4f} {:>8.1f} {:>8} {:>10} {:>10} {:>6}\n",
        r.variant, r.mode, r.assembly.empty() ? "-" : r.assembly, epb.empty() ? "-" : epb, r.assembly_ms.min,
        r.assembly_ms.median, r.assembly_ms.max, r.ns_per_edge, r.gbytes_per_s,
        r.roofline_fraction > 0 ? fmt::format("{:.1f}%", 100 * r.roofline_fraction) : "-",
        error_text(r.comparison.adiag_error, r.validated), error_text(r.comparison.aoff_error, r.validated),
        validation_text(r));
  }
  return out;
}

std::string format_csv(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  std::string out =
      "mesh,mesh_file,mesh_order,n_nodes,n_edges,n_offdiag_blocks,ordering_bandwidth,variant,backend,mode,assembly,"
      "threads_per_edge,threads_per_side,edges_per_block,edges_per_block_requested,warmup,reps,status,min_ms,median_ms,"
      "max_ms,"
      "zero_median_ms,ns_per_edge,gb_per_s,gflop_per_s,roofline_fraction,registers,local_bytes,shared_bytes,"
      "block_threads,adiag_error,aoff_error,validation,reason,fluxjac_version,git_revision,cxx_compiler,build_type,"
      "device,sm_count,sm_clock_mhz,memory_clock_mhz,cuda_runtime,cuda_driver,copy_gb_per_s,fp64_gflop_per_s\n";
  const BuildInfo& b = build_info();
  const std::string build = fmt::format("{},{},{},{}", csv_field(b.version), csv_field(b.git_revision),
                                        csv_field(b.cxx_compiler), csv_field(b.build_type));
  const std::string machine =
      device ? fmt::format("{},{},{},{},{},{},{:.1f},{:.1f}", csv_field(device->name), device->sm_count,
                           device->sm_clock_mhz, device->memory_clock_mhz, device->runtime_version,
                           device->driver_version, device->copy_bandwidth_gbs, device->fp64_gflops)
             : std::string(",,,,,,,");
  for (const RunRecord& r : records) {
    const bool ok = r.status == CaseStatus::kOk;
    auto number = [ok](const char* format, double x) { return ok ? fmt::format(fmt::runtime(format), x) : ""; };
    const auto& k = r.resources;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(r.mesh.name),
                       csv_field(r.mesh.file), r.mesh.order, r.mesh.n_nodes, r.mesh.n_edges, r.mesh.n_offdiag_blocks,
                       r.mesh.ordering_bandwidth, r.variant, r.backend, r.mode, r.assembly, r.threads_per_edge,
                       r.threads_per_side, edges_per_block_text(r), r.edges_per_block_requested, r.warmup, r.reps,
                       to_string(r.status));
    out += fmt::format("{},{},{},{},{},{},{},{},", number("{:.6f}", r.assembly_ms.min),
                       number("{:.6f}", r.assembly_ms.median), number("{:.6f}", r.assembly_ms.max),
                       number("{:.6f}", r.zero_ms.median), number("{:.6f}", r.ns_per_edge),
                       number("{:.3f}", r.gbytes_per_s), number("{:.3f}", r.gflops_per_s),
                       r.roofline_fraction > 0 ? fmt::format("{:.6f}", r.roofline_fraction) : "");
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", k ? std::to_string(k->registers) : "",
                       k ? std::to_string(k->local_bytes) : "", k ? std::to_string(k->shared_bytes) : "",
                       k ? std::to_string(k->block_threads) : "",
                       r.validated ? fmt::format("{:.3e}", r.comparison.adiag_error) : "",
                       r.validated ? fmt::format("{:.3e}", r.comparison.aoff_error) : "", validation_text(r),
                       csv_field(r.reason), build, machine);
  }
  return out;
}

std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  Json runs = Json::array();
  for (const RunRecord& r : records) runs.push(run_json(r));
  return Json::object()
      .set("schema", "fluxjac-bench")
      .set("schema_version", kResultSchemaVersion)
      .set("fluxjac", build_json())
      .set("host", Json::object().set("name", host_name()).set("created_utc", utc_now()))
      .set("device", device_json(device))
      .set("model", model_json())
      .set("runs", std::move(runs))
      .dump();
}

}  // namespace fluxjac
