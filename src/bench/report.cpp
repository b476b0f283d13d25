#include "bench/report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "version.hpp"

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

void finish_record(RunRecord& record, const std::optional<DeviceCeilings>& device) {
  const double seconds = record.assembly_ms.median * 1e-3;
  if (seconds <= 0.0) return;
  const WorkModel work = WorkModel::of(record.n_nodes, record.n_edges);
  record.ns_per_edge = seconds * 1e9 / static_cast<double>(record.n_edges);
  record.gbytes_per_s = work.bytes / seconds / 1e9;
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

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += c;
    }
  }
  return out + "\"";
}

/// JSON number; non-finite values (a failed comparison) become null.
std::string json_number(double x) { return std::isfinite(x) ? fmt::format("{:.9g}", x) : "null"; }

}  // namespace

std::string format_table(const std::vector<RunRecord>& records) {
  std::string out = fmt::format("{:<10} {:<13} {:>10} {:>10} {:>10} {:>9} {:>8} {:>8} {:>10} {:>10} {:>6}\n",
                                "variant", "mode", "min ms", "median ms", "max ms", "ns/edge", "GB/s",
                                "roofline", "Adiag err", "Aoff err", "valid");
  for (const RunRecord& r : records) {
    out += fmt::format("{:<10} {:<13} {:>10.4f} {:>10.4f} {:>10.4f} {:>9.4f} {:>8.1f} {:>8} {:>10} {:>10} {:>6}\n",
                       r.variant, r.mode, r.assembly_ms.min, r.assembly_ms.median, r.assembly_ms.max, r.ns_per_edge,
                       r.gbytes_per_s,
                       r.roofline_fraction > 0 ? fmt::format("{:.1f}%", 100 * r.roofline_fraction) : "-",
                       error_text(r.comparison.adiag_error, r.validated),
                       error_text(r.comparison.aoff_error, r.validated), validation_text(r));
  }
  return out;
}

std::string format_csv(const std::vector<RunRecord>& records) {
  std::string out =
      "mesh,n_nodes,n_edges,variant,backend,mode,threads_per_edge,reps,min_ms,median_ms,max_ms,zero_median_ms,"
      "ns_per_edge,gb_per_s,roofline_fraction,registers,local_bytes,shared_bytes,block_threads,adiag_error,"
      "aoff_error,validation\n";
  for (const RunRecord& r : records) {
    const auto& k = r.resources;
    out += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f},{:.6f},{},{},{},{},{},{},{}\n",
                       r.mesh, r.n_nodes, r.n_edges, r.variant, r.backend, r.mode, r.threads_per_edge, r.reps,
                       r.assembly_ms.min, r.assembly_ms.median, r.assembly_ms.max, r.zero_ms.median, r.ns_per_edge,
                       r.gbytes_per_s, r.roofline_fraction, k ? std::to_string(k->registers) : "",
                       k ? std::to_string(k->local_bytes) : "", k ? std::to_string(k->shared_bytes) : "",
                       k ? std::to_string(k->block_threads) : "",
                       r.validated ? fmt::format("{:.3e}", r.comparison.adiag_error) : "",
                       r.validated ? fmt::format("{:.3e}", r.comparison.aoff_error) : "", validation_text(r));
  }
  return out;
}

std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  std::string out = "{\n";
  out += fmt::format(
      "  \"fluxjac\": {{\"version\": {}, \"git_revision\": {}, \"cxx_compiler\": {}, \"cuda_compiler\": {}, "
      "\"build_type\": {}, \"cuda_architectures\": {}}},\n",
      json_string(kVersion), json_string(kGitRevision), json_string(kCxxCompiler), json_string(kCudaCompiler),
      json_string(kBuildType), json_string(kCudaArchitectures));
  if (device) {
    out += fmt::format(
        "  \"device\": {{\"name\": {}, \"sm_count\": {}, \"sm_clock_mhz\": {}, \"memory_clock_mhz\": {}, "
        "\"memory_gib\": {}, \"l2_mib\": {}, \"cuda_runtime\": {}, \"cuda_driver\": {}, "
        "\"copy_bandwidth_gbs\": {}, \"fp64_gflops\": {}}},\n",
        json_string(device->name), device->sm_count, device->sm_clock_mhz, device->memory_clock_mhz,
        json_number(device->memory_gib), json_number(device->l2_mib), device->runtime_version, device->driver_version,
        json_number(device->copy_bandwidth_gbs), json_number(device->fp64_gflops));
  } else {
    out += "  \"device\": null,\n";
  }
  out += "  \"runs\": [";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RunRecord& r = records[i];
    const WorkModel work = WorkModel::of(r.n_nodes, r.n_edges);
    std::string resources = "null";
    if (r.resources)
      resources = fmt::format(
          "{{\"registers\": {}, \"local_bytes\": {}, \"shared_bytes\": {}, \"block_threads\": {}, "
          "\"edges_per_block\": {}}}",
          r.resources->registers, r.resources->local_bytes, r.resources->shared_bytes, r.resources->block_threads,
          r.resources->edges_per_block);
    std::string validation = "null";
    if (r.validated)
      validation = fmt::format("{{\"adiag_error\": {}, \"aoff_error\": {}, \"passed\": {}}}",
                               json_number(r.comparison.adiag_error), json_number(r.comparison.aoff_error),
                               r.comparison.passed ? "true" : "false");
    out += fmt::format(
        "{}\n    {{\"mesh\": {}, \"n_nodes\": {}, \"n_edges\": {}, \"variant\": {}, \"backend\": {}, \"mode\": {}, "
        "\"threads_per_edge\": {}, \"reps\": {}, \"assembly_ms\": {{\"min\": {}, \"median\": {}, \"max\": {}}}, "
        "\"zero_ms\": {{\"min\": {}, \"median\": {}, \"max\": {}}}, \"ns_per_edge\": {}, \"model_bytes\": {}, "
        "\"model_flops\": {}, \"gb_per_s\": {}, \"roofline_fraction\": {}, \"resources\": {}, \"validation\": {}}}",
        i ? "," : "", json_string(r.mesh), r.n_nodes, r.n_edges, json_string(r.variant), json_string(r.backend),
        json_string(r.mode), r.threads_per_edge, r.reps, json_number(r.assembly_ms.min),
        json_number(r.assembly_ms.median), json_number(r.assembly_ms.max), json_number(r.zero_ms.min),
        json_number(r.zero_ms.median), json_number(r.zero_ms.max), json_number(r.ns_per_edge),
        json_number(work.bytes), json_number(work.flops), json_number(r.gbytes_per_s),
        json_number(r.roofline_fraction), resources, validation);
  }
  out += "\n  ]\n}\n";
  return out;
}

void write_text_file(const std::string& path, const std::string& text) {
  AtomicOutput output(path);
  {
    std::ofstream file(output.temporary_path());
    file << text;
    if (!file) fail(ExitCode::kRuntime, "{}: could not write the file", path);
  }
  output.commit();
}

}  // namespace fluxjac
