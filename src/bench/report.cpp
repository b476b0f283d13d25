#include "bench/report.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/atomic_output.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

using nlohmann::ordered_json;

/// \brief One column of the CSV, and of the table where it has a heading. Its value is a key the record's
/// to_json writes: a JSON pointer into the run, else into the document (the build and the device).
struct Column {
  const char* header;               ///< CSV header
  const char* key;                  ///< JSON pointer
  const char* number = "{}";        ///< fmt format of a fractional number in the CSV (integers print whole)
  bool verdict = false;             ///< a boolean shown as PASS / FAIL, and n/a when absent
  const char* heading = nullptr;    ///< table heading; nullptr: CSV only
  int width = 0;                    ///< table width; negative: left-aligned
  const char* table_number = "{}";  ///< fmt format of a fractional number in the table
  double table_scale = 1.0;         ///< 100 shows a fraction as a percentage
  bool names_case = false;          ///< kept on the table line of a case that did not run
  bool many_ranks = false;          ///< in the table only when a record ran on many ranks (or in a scaling sweep)
  bool transposed = false;          ///< in the table only when a record assembled A^T
  bool residual = false;            ///< in the table only when a record assembled the residual
  bool bf16 = false;                ///< in the table only when a record stored Aoff in bf16
  /// The solve cases' table (bench --solve): its heading there; nullptr: not in it. Solve columns have no heading
  /// in the assembly table.
  const char* solve_heading = nullptr;
  bool yes_no = false;  ///< a boolean shown as yes / NO in the table

  Column in_table(const char* table_heading, int table_width, const char* format = "{}", double scale = 1.0) const {
    Column c = *this;
    c.heading = table_heading;
    c.width = table_width;
    c.table_number = format;
    c.table_scale = scale;
    return c;
  }
  Column naming_case(const char* table_heading, int table_width) const {
    Column c = in_table(table_heading, table_width);
    c.names_case = true;
    return c;
  }
  Column of_many_ranks() const {
    Column c = *this;
    c.many_ranks = true;
    return c;
  }
  Column of_transposed() const {
    Column c = *this;
    c.transposed = true;
    return c;
  }
  Column of_bf16() const {
    Column c = *this;
    c.bf16 = true;
    return c;
  }
  Column of_residual() const {
    Column c = *this;
    c.residual = true;
    return c;
  }
  /// Also in the solve cases' table, under `solve_table_heading` (the assembly table's heading when nullptr).
  Column in_solves(const char* solve_table_heading = nullptr) const {
    Column c = *this;
    c.solve_heading = solve_table_heading ? solve_table_heading : heading;
    return c;
  }
  /// In the solve cases' table only.
  Column of_solve(const char* solve_table_heading, int table_width, const char* format = "{}") const {
    Column c = in_table(nullptr, table_width, format);
    c.solve_heading = solve_table_heading;
    return c;
  }
  Column kept_when_not_run() const {
    Column c = *this;
    c.names_case = true;
    return c;
  }
  Column as_yes_no() const {
    Column c = *this;
    c.yes_no = true;
    return c;
  }
  Column as_verdict() const {
    Column c = *this;
    c.verdict = true;
    return c;
  }
};

/// Every column, in CSV order; the table keeps the same order. A new column is one line here.
const std::vector<Column>& columns() {
  static const std::vector<Column> list = {
      {"mesh", "/mesh"},
      {"mesh_file", "/mesh_file"},
      {"mesh_order", "/mesh_order"},
      {"n_nodes", "/n_nodes"},
      {"n_edges", "/n_edges"},
      {"n_offdiag_blocks", "/n_offdiag_blocks"},
      {"ordering_bandwidth", "/ordering_bandwidth"},
      Column{"variant", "/variant"}.naming_case("variant", -10).in_solves(),
      {"backend", "/backend"},
      Column{"mode", "/mode"}.naming_case("mode", -13),
      Column{"orientation", "/orientation"}.naming_case("matrix", -6).of_transposed(),
      {"residual", "/residual"},
      Column{"aoff_precision", "/aoff_precision"}.naming_case("aoff", -4).of_bf16(),
      Column{"assembly", "/assembly"}.naming_case("assembly", -8),
      {"threads_per_edge", "/threads_per_edge"},
      {"threads_per_side", "/threads_per_side"},
      Column{"edges_per_block", "/edges_per_block"}.naming_case("epb", 4),
      {"edges_per_block_requested", "/edges_per_block_requested"},
      {"warmup", "/warmup"},
      {"reps", "/reps"},
      {"status", "/status"},
      Column{"min_ms", "/assembly_ms/min", "{:.6f}"}.in_table("min ms", 10, "{:.4f}"),
      Column{"median_ms", "/assembly_ms/median", "{:.6f}"}.in_table("median ms", 10, "{:.4f}").in_solves("assembly ms"),
      Column{"max_ms", "/assembly_ms/max", "{:.6f}"}.in_table("max ms", 10, "{:.4f}"),
      {"zero_median_ms", "/zero_ms/median", "{:.6f}"},
      Column{"ns_per_edge", "/ns_per_edge", "{:.6f}"}.in_table("ns/edge", 9, "{:.4f}"),
      Column{"gb_per_s", "/gb_per_s", "{:.3f}"}.in_table("GB/s", 8, "{:.1f}"),
      {"gflop_per_s", "/gflop_per_s", "{:.3f}"},
      Column{"roofline_fraction", "/roofline_fraction", "{:.6f}"}.in_table("roofline", 8, "{:.1f}%", 100.0),
      Column{"time_relative_to_hd", "/time_relative_to_hd", "{:.6f}"}.in_table("x hd", 6, "{:.2f}"),
      {"registers", "/resources/registers"},
      {"local_bytes", "/resources/local_bytes"},
      {"shared_bytes", "/resources/shared_bytes"},
      {"block_threads", "/resources/block_threads"},
      Column{"ranks", "/ranks"}.in_table("ranks", 5).of_many_ranks().in_solves(),
      Column{"halo_median_ms", "/parallel/halo_ms/median", "{:.6f}"}.in_table("halo ms", 9, "{:.4f}").of_many_ranks(),
      {"rank_max_ms", "/parallel/rank_assembly_ms/max", "{:.6f}"},
      {"rank_min_ms", "/parallel/rank_assembly_ms/min", "{:.6f}"},
      {"halo_transport", "/parallel/halo_transport"},
      {"edge_cut", "/parallel/partition/edge_cut"},
      {"scaling", "/parallel/scaling"},
      Column{"efficiency", "/parallel/efficiency", "{:.4f}"}.in_table("eff", 6, "{:.1f}%", 100.0).of_many_ranks(),
      Column{"efficiency_with_halo", "/parallel/efficiency_with_halo", "{:.4f}"}
          .in_table("eff+halo", 8, "{:.1f}%", 100.0)
          .of_many_ranks(),
      Column{"adiag_error", "/validation/adiag_error", "{:.3e}"}.in_table("Adiag err", 10, "{:.2e}"),
      Column{"aoff_error", "/validation/aoff_error", "{:.3e}"}.in_table("Aoff err", 10, "{:.2e}"),
      Column{"residual_error", "/validation/residual_error", "{:.3e}"}.in_table("R err", 10, "{:.2e}").of_residual(),
      Column{"validation", "/validation/passed"}.as_verdict().in_table("valid", 6).in_solves(),
      Column{"solve_cfl", "/solve/cfl"}.of_solve("cfl", 7, "{:g}").kept_when_not_run(),
      Column{"solve_preconditioner", "/solve/preconditioner"}.of_solve("pc", -8).kept_when_not_run(),
      Column{"solve_sweeps", "/solve/sweeps"}.of_solve("sweeps", 6).kept_when_not_run(),
      Column{"solve_aoff_precision", "/solve/aoff_precision"}.of_solve("aoff", -4).kept_when_not_run(),
      {"solve_restart", "/solve/restart"},
      {"solve_tolerance", "/solve/tolerance", "{:g}"},
      {"solve_max_iterations", "/solve/max_iterations"},
      {"solved_on", "/solve/solved_on"},
      Column{"solve_setup_ms", "/solve/setup_ms", "{:.6f}"}.of_solve("setup ms", 9, "{:.3f}"),
      Column{"solve_iterations", "/solve/iterations"}.of_solve("iterations", 10),
      Column{"solve_ms_per_iteration", "/solve/ms_per_iteration", "{:.6f}"}.of_solve("ms/iter", 9, "{:.3f}"),
      Column{"solve_product_ms", "/solve/product_ms", "{:.6f}"}.of_solve("product ms", 10, "{:.4f}"),
      Column{"solve_ms", "/solve/solve_ms", "{:.6f}"}.of_solve("solve ms", 10, "{:.3f}"),
      {"solve_exchange_ms", "/solve/exchange_ms", "{:.6f}"},
      {"solve_reduction_ms", "/solve/reduction_ms", "{:.6f}"},
      Column{"solve_relative_residual", "/solve/relative_residual", "{:.6e}"}.of_solve("rel. res.", 10, "{:.2e}"),
      Column{"solve_converged", "/solve/converged"}.of_solve("converged", 9).as_yes_no(),
      {"reason", "/reason"},
      {"fluxjac_version", "/fluxjac/version"},
      {"git_revision", "/fluxjac/git_revision"},
      {"cxx_compiler", "/fluxjac/cxx_compiler"},
      {"build_type", "/fluxjac/build_type"},
      {"device", "/device/name"},
      {"sm_count", "/device/sm_count"},
      {"sm_clock_mhz", "/device/sm_clock_mhz"},
      {"memory_clock_mhz", "/device/memory_clock_mhz"},
      {"cuda_runtime", "/device/cuda_runtime"},
      {"cuda_driver", "/device/cuda_driver"},
      {"copy_gb_per_s", "/device/copy_bandwidth_gbs", "{:.1f}"},
      {"fp64_gflop_per_s", "/device/fp64_gflops", "{:.1f}"},
  };
  return list;
}

/// The value of `column` for one run: the run's member, else the document's; nullptr when absent or null.
const ordered_json* lookup(const Column& column, const ordered_json& run, const ordered_json* document) {
  const ordered_json::json_pointer key(column.key);
  const ordered_json* value = nullptr;
  if (run.contains(key))
    value = &run.at(key);
  else if (document && document->contains(key))
    value = &document->at(key);
  return value && !value->is_null() ? value : nullptr;
}

/// A cell's text; std::nullopt when the value is absent (shown "" in the CSV, "-" in the table).
std::optional<std::string> cell(const ordered_json* value, bool verdict, const char* number, double scale) {
  if (verdict) return value && value->is_boolean() ? (value->get<bool>() ? "PASS" : "FAIL") : "n/a";
  if (!value) return std::nullopt;
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_float()) return fmt::format(fmt::runtime(number), scale * value->get<double>());
  if (value->is_number_unsigned()) return std::to_string(value->get<std::uint64_t>());
  if (value->is_number_integer()) return std::to_string(value->get<std::int64_t>());
  return value->dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

/// Text padded to a table column's width.
std::string padded(const std::string& text, int width) {
  return width < 0 ? fmt::format("{:<{}}", text, -width) : fmt::format("{:>{}}", text, width);
}

std::string table_cell(const Column& column, const ordered_json& run, int width) {
  const ordered_json* value = lookup(column, run, nullptr);
  if (column.yes_no && value && value->is_boolean()) return padded(value->get<bool>() ? "yes" : "NO", width);
  const std::optional<std::string> text = cell(value, column.verdict, column.table_number, column.table_scale);
  return padded(text ? *text : "-", width);
}

/// \brief One table of records: the columns `shown` says, under the heading `heading_of` gives, each as wide as its
/// heading at least; a case that did not run keeps the columns that name it, then its status and reason.
template <class Shown, class Heading>
std::string table_of(const std::vector<const RunRecord*>& records, Shown shown, Heading heading_of) {
  std::vector<std::pair<const Column*, int>> table;  // column, width (negative: left-aligned)
  for (const Column& column : columns())
    if (shown(column)) {
      const int wide = std::max(std::abs(column.width), static_cast<int>(std::string(heading_of(column)).size()));
      table.emplace_back(&column, column.width < 0 ? -wide : wide);
    }
  std::string out;
  for (const auto& [column, width] : table) {
    if (!out.empty()) out += ' ';
    out += padded(heading_of(*column), width);
  }
  out += '\n';
  for (const RunRecord* record : records) {
    const ordered_json run = *record;
    const bool ran = record->status == CaseStatus::kOk;
    std::string line;
    for (const auto& [column, width] : table) {
      if (!ran && !column->names_case) continue;
      if (!line.empty()) line += ' ';
      line += table_cell(*column, run, width);
    }
    if (!ran) line += fmt::format(" {}: {}", run.at("status").get<std::string>(), run.at("reason").get<std::string>());
    out += line + '\n';
  }
  return out;
}

/// One CSV field, quoted (RFC 4180) when it holds a separator, quote or line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// Two-space indentation down to `expand_depth`, deeper containers on one line, so that a result file shows
/// one run per line. A string that is not UTF-8 (a file name) is written with U+FFFD, never thrown on.
void dump_to(std::string& out, const ordered_json& value, int depth, int expand_depth) {
  constexpr auto kReplace = ordered_json::error_handler_t::replace;
  if (!value.is_structured() || value.empty()) {
    out += value.dump(-1, ' ', false, kReplace);
    return;
  }
  const bool expand = depth < expand_depth;
  const std::string inner = expand ? "\n" + std::string(2 * (depth + 1), ' ') : "";
  out += value.is_array() ? '[' : '{';
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += expand ? "," : ", ";
    out += inner;
    if (value.is_object()) out += ordered_json(it.key()).dump(-1, ' ', false, kReplace) + ": ";
    dump_to(out, *it, depth + 1, expand_depth);
  }
  if (expand) out += "\n" + std::string(2 * depth, ' ');
  out += value.is_array() ? ']' : '}';
}

}  // namespace

std::string format_table(const std::vector<RunRecord>& records) {
  const bool many_ranks = std::any_of(records.begin(), records.end(), [](const RunRecord& r) {
    return r.parallel.ranks > 1 || !r.parallel.scaling.empty();
  });
  std::vector<const RunRecord*> assemblies, solves;
  for (const RunRecord& r : records) (r.solve ? solves : assemblies).push_back(&r);
  const bool transposed = std::any_of(assemblies.begin(), assemblies.end(),
                                      [](const RunRecord* r) { return r->orientation == Orientation::kTransposed; });
  const bool residual =
      std::any_of(assemblies.begin(), assemblies.end(), [](const RunRecord* r) { return r->residual; });
  const bool bf16 = std::any_of(assemblies.begin(), assemblies.end(),
                                [](const RunRecord* r) { return r->aoff_precision == AoffPrecision::kBf16; });
  std::string out;
  if (!assemblies.empty())
    out += table_of(
        assemblies,
        [many_ranks, transposed, residual, bf16](const Column& column) {
          return column.heading && (many_ranks || !column.many_ranks) && (transposed || !column.transposed) &&
                 (residual || !column.residual) && (bf16 || !column.bf16);
        },
        [](const Column& column) { return column.heading; });
  // The solve cases (bench --solve): their assembly in brief, then the step.
  if (!solves.empty())
    out += (out.empty() ? "" : "\n") + table_of(
                                           solves,
                                           [many_ranks](const Column& column) {
                                             return column.solve_heading && (many_ranks || !column.many_ranks);
                                           },
                                           [](const Column& column) { return column.solve_heading; });
  return out;
}

std::string format_csv(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  const ordered_json document = results_document(records, device);
  std::string out;
  for (const Column& column : columns()) out += std::string(out.empty() ? "" : ",") + column.header;
  out += '\n';
  for (const ordered_json& run : document.at("runs")) {
    std::string row;
    for (const Column& column : columns()) {
      if (&column != &columns().front()) row += ',';
      const std::optional<std::string> text = cell(lookup(column, run, &document), column.verdict, column.number, 1.0);
      if (text) row += csv_field(*text);
    }
    out += row + '\n';
  }
  return out;
}

std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device) {
  std::string out;
  dump_to(out, results_document(records, device), 0, 2);
  return out + '\n';
}

}  // namespace fluxjac
