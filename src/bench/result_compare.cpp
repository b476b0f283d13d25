#include "bench/result_compare.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "bench/json.hpp"
#include "bench/report.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

std::string read_whole_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) fail(ExitCode::kInvalidInput, "{}: no such result file", path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) fail(ExitCode::kInvalidInput, "{}: could not read the file", path);
  return text.str();
}

/// A run's member that must be a string.
std::string required_string(const Json& run, const std::string& key, const std::string& where) {
  const Json* value = run.find(key);
  if (!value || !value->is_string()) fail(ExitCode::kInvalidInput, "{}: \"{}\" missing or not a string", where, key);
  return value->as_string();
}

ResultRun parse_run(const Json& run, const std::string& where) {
  if (!run.is_object()) fail(ExitCode::kInvalidInput, "{}: not an object", where);
  ResultRun r;
  r.mesh = required_string(run, "mesh", where);
  r.variant = required_string(run, "variant", where);
  r.mode = required_string(run, "mode", where);
  r.assembly = run.string_or("assembly", "");
  r.edges_per_block_requested = static_cast<int>(run.number_or("edges_per_block_requested", 0.0));
  r.status = run.string_or("status", "ok");
  r.reason = run.string_or("reason", "");
  if (const Json* times = run.find("assembly_ms"); times && times->is_object()) {
    const double median = times->number_or("median", -1.0);
    if (median >= 0.0) r.median_ms = median;
  }
  if (r.status == "ok" && !r.median_ms)
    fail(ExitCode::kInvalidInput, "{}: status ok but no \"assembly_ms\": {{\"median\": ...}}", where);
  if (const Json* validation = run.find("validation"); validation && validation->is_object()) {
    const Json* passed = validation->find("passed");
    if (!passed || passed->type() != Json::Type::kBool)
      fail(ExitCode::kInvalidInput, "{}: \"validation\" without a boolean \"passed\"", where);
    r.passed = passed->as_bool();
    r.adiag_error = validation->number_or("adiag_error", NAN);
    r.aoff_error = validation->number_or("aoff_error", NAN);
  }
  return r;
}

std::string validation_detail(const ResultRun& r) {
  return fmt::format("Adiag err {:.2e}, Aoff err {:.2e}", r.adiag_error, r.aoff_error);
}

/// Fills change, regression and detail of a case both files have.
void classify(const ResultRun& before, const ResultRun& after, const CompareOptions& options, CaseChange& c) {
  const bool ran_before = before.status == "ok", ran_after = after.status == "ok";
  if (ran_before && !ran_after) {
    c.change = Change::kNoLongerRuns;
    c.detail = fmt::format("{}: {}", after.status, after.reason);
  } else if (!ran_before && !ran_after) {
    c.change = Change::kNotComparable;
    c.detail = fmt::format("{}: {}", after.status, after.reason);
  } else if (!ran_before) {
    c.change = Change::kRunsNow;
  } else if (after.passed == false && before.passed != false) {
    c.change = Change::kValidationFailed;
    c.detail = validation_detail(after);
  } else if (before.passed == false && after.passed == true) {
    c.change = Change::kValidationFixed;
    c.detail = validation_detail(after);
  } else if (*after.median_ms > *before.median_ms * (1.0 + options.time_tolerance)) {
    c.change = Change::kSlower;
  } else if (*after.median_ms * (1.0 + options.time_tolerance) < *before.median_ms) {
    c.change = Change::kFaster;
  }
  if (after.passed == false && c.detail.empty()) c.detail = "validation still FAILS: " + validation_detail(after);
  c.regression =
      c.change == Change::kNoLongerRuns || c.change == Change::kValidationFailed || c.change == Change::kSlower;
}

}  // namespace

std::string ResultRun::key() const {
  std::string key = fmt::format("{} {} {}", mesh, variant, mode);
  if (!assembly.empty())
    key += fmt::format(" {} epb={}", assembly,
                       edges_per_block_requested > 0 ? std::to_string(edges_per_block_requested) : "default");
  return key;
}

ResultFile read_result_file(const std::string& path) {
  const Json root = Json::parse(read_whole_file(path), path);
  if (!root.is_object())
    fail(ExitCode::kInvalidInput, "{}: not a fluxjac result file (the top level is no object)", path);
  const std::string schema = root.string_or("schema", "fluxjac-bench");
  if (schema != "fluxjac-bench")
    fail(ExitCode::kInvalidInput, "{}: schema '{}' is not a fluxjac result file (expected fluxjac-bench)", path,
         schema);
  const double version = root.number_or("schema_version", 1.0);
  if (version > kResultSchemaVersion)
    fail(ExitCode::kInvalidInput, "{}: schema version {} is newer than this fluxjac reads ({}): update fluxjac", path,
         version, kResultSchemaVersion);
  const Json* runs = root.find("runs");
  if (!runs || !runs->is_array()) fail(ExitCode::kInvalidInput, "{}: no \"runs\" array (docs/bench-json.md)", path);

  ResultFile file;
  file.path = path;
  const Json* device = root.find("device");
  file.device = device && device->is_object() ? device->string_or("name", "unknown device") : "CPU only";
  if (const Json* build = root.find("fluxjac"))
    file.build =
        fmt::format("fluxjac {} ({})", build->string_or("version", "?"), build->string_or("git_revision", "?"));
  for (std::size_t i = 0; i < runs->items().size(); ++i)
    file.runs.push_back(parse_run(runs->items()[i], fmt::format("{}: runs[{}]", path, i)));
  return file;
}

const char* to_string(Change change) {
  switch (change) {
    case Change::kSame:
      return "same";
    case Change::kFaster:
      return "faster";
    case Change::kSlower:
      return "SLOWER";
    case Change::kValidationFailed:
      return "VALIDATION FAILED";
    case Change::kValidationFixed:
      return "validation fixed";
    case Change::kNoLongerRuns:
      return "NO LONGER RUNS";
    case Change::kRunsNow:
      return "runs now";
    case Change::kMissing:
      return "MISSING";
    case Change::kNew:
      return "new";
    case Change::kNotComparable:
      return "not run";
  }
  return "?";
}

ComparisonReport compare_results(const ResultFile& base, const ResultFile& candidate, const CompareOptions& options) {
  ComparisonReport report;
  if (base.device != candidate.device)
    report.warnings.push_back(fmt::format("the files come from different devices ({} and {}): times may not compare",
                                          base.device, candidate.device));
  // A key seen twice in one file (a mesh listed twice) keeps its last run.
  std::map<std::string, const ResultRun*> after_by_key;
  for (const ResultRun& run : candidate.runs) after_by_key[run.key()] = &run;
  std::map<std::string, bool> seen;
  for (const ResultRun& before : base.runs) {
    const std::string key = before.key();
    if (seen[key]) continue;
    seen[key] = true;
    CaseChange c;
    c.key = key;
    c.base_ms = before.median_ms;
    const auto found = after_by_key.find(key);
    if (found == after_by_key.end()) {
      c.change = Change::kMissing;
      c.regression = !options.allow_missing && before.status == "ok";
    } else {
      c.new_ms = found->second->median_ms;
      classify(before, *found->second, options, c);
    }
    report.cases.push_back(c);
  }
  for (const ResultRun& after : candidate.runs) {
    const std::string key = after.key();
    if (seen[key]) continue;
    seen[key] = true;
    CaseChange c;
    c.key = key;
    c.change = Change::kNew;
    c.new_ms = after.median_ms;
    report.cases.push_back(c);
  }
  for (const CaseChange& c : report.cases) report.regressions += c.regression ? 1 : 0;
  return report;
}

std::string format_comparison(const ResultFile& base, const ResultFile& candidate, const ComparisonReport& report,
                              const CompareOptions& options, bool changes_only) {
  std::string out = fmt::format("base: {} — {}, {}\nnew:  {} — {}, {}\n", base.path, base.device, base.build,
                                candidate.path, candidate.device, candidate.build);
  for (const std::string& warning : report.warnings) out += "warning: " + warning + "\n";
  std::size_t width = 4;
  for (const CaseChange& c : report.cases) width = std::max(width, c.key.size());
  out += fmt::format("\n{:<{}} {:>11} {:>11} {:>8}  {}\n", "case", width, "base ms", "new ms", "change", "verdict");
  std::map<Change, int> counts;
  for (const CaseChange& c : report.cases) {
    ++counts[c.change];
    if (changes_only && (c.change == Change::kSame)) continue;
    auto ms = [](const std::optional<double>& t) { return t ? fmt::format("{:.4f}", *t) : std::string("-"); };
    const std::string change =
        c.base_ms && c.new_ms && *c.base_ms > 0 ? fmt::format("{:+.1f}%", 100.0 * (*c.new_ms / *c.base_ms - 1.0)) : "-";
    out += fmt::format("{:<{}} {:>11} {:>11} {:>8}  {}{}\n", c.key, width, ms(c.base_ms), ms(c.new_ms), change,
                       to_string(c.change), c.detail.empty() ? "" : " (" + c.detail + ")");
  }
  std::string summary;
  for (const auto& [change, n] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, to_string(change));
  out += fmt::format("\n{} cases ({}); time tolerance {:.0f}%: {} regression{}\n", report.cases.size(), summary,
                     100.0 * options.time_tolerance, report.regressions, report.regressions == 1 ? "" : "s");
  return out;
}

}  // namespace fluxjac
