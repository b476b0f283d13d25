#include "bench/result_compare.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/run_record.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

// Reading uses nlohmann::json (members in a std::map), not ordered_json, whose linear member lookup makes
// parsing an object of n keys take n^2 steps.
using nlohmann::json;

/// Text from a file as ASCII with JSON escapes, so that an error line stays one line of plain text.
std::string printable(const std::string& text) {
  const std::string quoted = json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

std::string read_whole_file(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found)
    fail(ExitCode::kInvalidInput, "{}: no such result file", path);
  if (error) fail(ExitCode::kInvalidInput, "{}: {}", path, error.message());
  // Checked before opening: reading a FIFO would wait for a writer, a directory reads as empty.
  if (!std::filesystem::is_regular_file(status)) fail(ExitCode::kInvalidInput, "{} is not a regular file", path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) fail(ExitCode::kInvalidInput, "{}: could not read the file", path);
  return text.str();
}

/// \brief A SAX pass over a document that stops at the first syntax error or repeated key.
///
/// nlohmann's parser keeps only the last of repeated keys, silently: a file merged or edited by hand could
/// then compare other numbers than the ones a reader sees in it.
class DocumentCheck final : public json::json_sax_t {
 public:
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    open_.emplace_back();
    return true;
  }
  bool key(string_t& name) override {
    Level& object = open_.back();
    if (!object.keys.insert(name).second) {
      open_.pop_back();
      duplicate_ = fmt::format("{}duplicate key \"{}\"", path().empty() ? "" : path() + ": ", printable(name));
      return false;
    }
    object.key = name;
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    value();
    open_.emplace_back();
    open_.back().is_array = true;
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const json::exception& error) override {
    error_position_ = position;
    // nlohmann reports the same position for a bad last byte and for a text that stops inside a value.
    ends_early_ = std::string(error.what()).find("unexpected end of input") != std::string::npos;
    return false;
  }

  const std::string& duplicate() const { return duplicate_; }
  std::size_t error_position() const { return error_position_; }
  bool ends_early() const { return ends_early_; }

 private:
  struct Level {
    bool is_array = false;
    std::int64_t index = -1;  ///< of the current element of an array
    std::string key;          ///< the current member of an object
    std::unordered_set<std::string> keys;
  };

  bool value() {
    if (!open_.empty() && open_.back().is_array) ++open_.back().index;
    return true;
  }

  /// Where the innermost open container sits: "runs[2]", "runs[2].validation"; empty for the top level.
  std::string path() const {
    std::string out;
    for (const Level& level : open_)
      out += level.is_array ? fmt::format("[{}]", level.index) : (out.empty() ? "" : ".") + printable(level.key);
    return out;
  }

  std::vector<Level> open_;
  std::string duplicate_;
  std::size_t error_position_ = 0;
  bool ends_early_ = false;
};

/// The document of a results file. Errors name the file and where, never echo its bytes (a binary file given
/// by mistake would put them on the terminal).
json parse_document(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    fail(ExitCode::kInvalidInput, "{}: empty file, not a JSON results file", path);
  DocumentCheck check;
  if (!json::sax_parse(text, &check)) {
    if (!check.duplicate().empty()) fail(ExitCode::kInvalidInput, "{}: {}", path, check.duplicate());
    // nlohmann counts bytes read from 1: `at` is the offending byte, or the end of the text.
    const std::size_t at =
        check.ends_early() ? text.size() : std::min(text.size(), std::max<std::size_t>(check.error_position(), 1) - 1);
    const std::size_t line_start = at == 0 ? 0 : text.rfind('\n', at - 1) + 1;  // npos + 1 == 0
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    fail(ExitCode::kInvalidInput, "{}: not a JSON results file ({} at line {}, column {})", path,
         check.ends_early() ? "it ends early" : "invalid JSON", line, at - line_start + 1);
  }
  return json::parse(text);
}

const char* type_name(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  return "an object";
}

/// \brief Typed members of one object of a results file. An absent or null member is "not given"; a member of
/// another type is an error naming the file, the object ("runs[2].validation") and the key.
class Members {
 public:
  Members(const json& object, std::string file, std::string path)
      : object_(object), file_(std::move(file)), path_(std::move(path)) {}

  /// "FILE: runs[2]", or "FILE" for the top level.
  std::string where() const { return path_.empty() ? file_ : file_ + ": " + path_; }

  std::optional<std::string> text(const char* key) const {
    const json* value = typed(key, &json::is_string, "a string");
    return value ? std::optional<std::string>(value->get<std::string>()) : std::nullopt;
  }
  std::string required_text(const char* key) const {
    const std::optional<std::string> value = text(key);
    if (!value) fail(ExitCode::kInvalidInput, "{}: \"{}\" is missing (docs/bench-json.md)", where(), key);
    return *value;
  }
  std::optional<double> number(const char* key) const {
    const json* value = typed(key, &json::is_number, "a number");
    return value ? std::optional<double>(value->get<double>()) : std::nullopt;
  }
  /// A whole number in [low, high] (high >= 0); a fraction or a number out of range is an error.
  std::optional<std::int64_t> whole_number(const char* key, std::int64_t low, std::int64_t high) const {
    const json* value = typed(key, &json::is_number, "a number");
    if (!value) return std::nullopt;
    // nlohmann holds a non-negative integer as unsigned, a negative one as signed, a fraction as a double.
    std::optional<std::int64_t> whole;
    if (value->is_number_unsigned()) {
      if (value->get<std::uint64_t>() <= static_cast<std::uint64_t>(high)) whole = value->get<std::int64_t>();
    } else if (value->is_number_integer()) {
      whole = value->get<std::int64_t>();
    }
    if (!whole || *whole < low || *whole > high)
      fail(ExitCode::kInvalidInput, "{}: \"{}\" is {}, expected a whole number from {} to {}", where(), key,
           value->dump(), low, high);
    return whole;
  }
  std::optional<bool> flag(const char* key) const {
    const json* value = typed(key, &json::is_boolean, "a boolean");
    return value ? std::optional<bool>(value->get<bool>()) : std::nullopt;
  }
  /// The members of an object member; std::nullopt when absent or null.
  std::optional<Members> object(const char* key) const {
    const json* value = typed(key, &json::is_object, "an object");
    if (!value) return std::nullopt;
    return Members(*value, file_, path_.empty() ? key : path_ + "." + key);
  }
  const json& required_array(const char* key) const {
    const json* value = typed(key, &json::is_array, "an array");
    if (!value) fail(ExitCode::kInvalidInput, "{}: no \"{}\" array (docs/bench-json.md)", where(), key);
    return *value;
  }

 private:
  const json* typed(const char* key, bool (json::*is)() const noexcept, const char* expected) const {
    const auto found = object_.find(key);
    if (found == object_.end() || found->is_null()) return nullptr;
    if (!((*found).*is)())
      fail(ExitCode::kInvalidInput, "{}: \"{}\" is {}, expected {}", where(), key, type_name(*found), expected);
    return &*found;
  }

  const json& object_;
  std::string file_, path_;
};

std::string run_status(const Members& run) {
  const std::string status = run.text("status").value_or(to_string(CaseStatus::kOk));
  for (CaseStatus known : {CaseStatus::kOk, CaseStatus::kSkipped, CaseStatus::kFailed})
    if (status == to_string(known)) return status;
  fail(ExitCode::kInvalidInput, "{}: \"status\" is '{}', expected ok, skipped or failed", run.where(),
       printable(status));
}

ResultRun parse_run(const json& value, const std::string& file, std::size_t index) {
  const std::string path = fmt::format("runs[{}]", index);
  if (!value.is_object())
    fail(ExitCode::kInvalidInput, "{}: {} is {}, expected an object", file, path, type_name(value));
  const Members run(value, file, path);
  ResultRun r;
  r.mesh = run.required_text("mesh");
  r.variant = run.required_text("variant");
  r.mode = run.required_text("mode");
  r.assembly = run.text("assembly").value_or("");
  // What `--edges-per-block` (an int, 0 = the default) can ask for.
  r.edges_per_block_requested = static_cast<int>(run.whole_number("edges_per_block_requested", 0, INT_MAX).value_or(0));
  r.ranks = static_cast<int>(run.whole_number("ranks", 1, INT_MAX).value_or(1));
  r.status = run_status(run);
  r.reason = run.text("reason").value_or("");
  if (const std::optional<Members> times = run.object("assembly_ms")) {
    r.median_ms = times->number("median");
    if (r.median_ms && !(*r.median_ms >= 0.0))
      fail(ExitCode::kInvalidInput, "{}: \"median\" is {}, expected a time >= 0", times->where(), *r.median_ms);
  }
  if (r.status == "ok" && !r.median_ms)
    fail(ExitCode::kInvalidInput, "{}: status ok but no \"assembly_ms\": {{\"median\": ...}}", run.where());
  if (const std::optional<Members> validation = run.object("validation")) {
    r.passed = validation->flag("passed");
    if (!r.passed) fail(ExitCode::kInvalidInput, "{}: \"validation\" without \"passed\"", run.where());
    // A non-finite error is written as null.
    r.adiag_error = validation->number("adiag_error").value_or(NAN);
    r.aoff_error = validation->number("aoff_error").value_or(NAN);
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
  if (ranks > 1) key += fmt::format(" ranks={}", ranks);  // a many-rank case is its own case
  return key;
}

ResultFile read_result_file(const std::string& path) {
  const json root = parse_document(read_whole_file(path), path);
  if (!root.is_object())
    fail(ExitCode::kInvalidInput, "{}: not a fluxjac result file (the top level is {}, not an object)", path,
         type_name(root));
  const Members top(root, path, "");
  const std::string schema = top.text("schema").value_or(kResultSchema);
  if (schema != kResultSchema)
    fail(ExitCode::kInvalidInput, "{}: schema '{}' is not a fluxjac result file (expected {})", path, printable(schema),
         kResultSchema);
  const std::int64_t version = top.whole_number("schema_version", 1, INT_MAX).value_or(1);
  if (version > kResultSchemaVersion)
    fail(ExitCode::kInvalidInput, "{}: schema version {} is newer than this fluxjac reads ({}): update fluxjac", path,
         version, kResultSchemaVersion);
  const json& runs = top.required_array("runs");

  ResultFile file;
  file.path = path;
  const std::optional<Members> device = top.object("device");
  file.device = device ? device->text("name").value_or("unknown device") : "CPU only";
  if (const std::optional<Members> build = top.object("fluxjac"))
    file.build =
        fmt::format("fluxjac {} ({})", build->text("version").value_or("?"), build->text("git_revision").value_or("?"));
  for (std::size_t i = 0; i < runs.size(); ++i) file.runs.push_back(parse_run(runs[i], path, i));
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
