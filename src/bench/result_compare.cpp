#include "bench/result_compare.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/run_record.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

// Reading uses nlohmann::json (members in a std::map), not ordered_json, whose linear member lookup makes
// parsing an object of n keys take n^2 steps.
using nlohmann::json;

/// The file at `path`; errors name it as `shown` (the path with its control characters escaped).
std::string read_whole_file(const std::string& path, const std::string& shown) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found)
    fail(ExitCode::kInvalidInput, "{}: no such result file", shown);
  if (error) fail(ExitCode::kInvalidInput, "{}: {}", shown, error.message());
  // Checked before opening: reading a FIFO would wait for a writer, a directory reads as empty.
  if (!std::filesystem::is_regular_file(status)) fail(ExitCode::kInvalidInput, "{} is not a regular file", shown);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) fail(ExitCode::kInvalidInput, "{}: could not read the file", shown);
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
  if (find_named<CaseStatus>(status)) return status;
  fail(ExitCode::kInvalidInput, "{}: \"status\" is '{}', expected {}", run.where(), quoted_file_text(status),
       name_list<CaseStatus>());
}

/// The "mesh_digest" of a run: 16 hexadecimal digits.
std::optional<std::uint64_t> mesh_digest_of(const Members& run) {
  const std::optional<std::string> text = run.text("mesh_digest");
  if (!text) return std::nullopt;
  if (text->size() != 16 || text->find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    fail(ExitCode::kInvalidInput, "{}: \"mesh_digest\" is '{}', expected 16 hexadecimal digits", run.where(),
         quoted_file_text(*text));
  return std::stoull(*text, nullptr, 16);
}

MeshIdentity mesh_identity(const Members& run) {
  MeshIdentity mesh;
  mesh.name = run.required_text("mesh");
  const std::optional<std::int64_t> n_nodes = run.whole_number("n_nodes", 0, INT64_MAX);
  const std::optional<std::int64_t> n_edges = run.whole_number("n_edges", 0, INT64_MAX);
  const std::optional<std::int64_t> blocks = run.whole_number("n_offdiag_blocks", 0, INT64_MAX);
  const std::optional<std::int64_t> bandwidth = run.whole_number("ordering_bandwidth", 0, INT64_MAX);
  const std::optional<double> span = run.number("mean_edge_span");
  if (n_nodes && n_edges && blocks && bandwidth && span)
    mesh.figures = MeshIdentity::Figures{*n_nodes, *n_edges, *blocks, *bandwidth, *span};
  mesh.digest = mesh_digest_of(run);
  return mesh;
}

ResultRun parse_run(const json& value, const std::string& file, std::size_t index) {
  const std::string path = fmt::format("runs[{}]", index);
  if (!value.is_object())
    fail(ExitCode::kInvalidInput, "{}: {} is {}, expected an object", file, path, type_name(value));
  const Members run(value, file, path);
  ResultRun r;
  r.mesh = mesh_identity(run);
  r.variant = run.required_text("variant");
  r.mode = run.required_text("mode");
  r.assembly = run.text("assembly").value_or("");
  r.orientation = run.text("orientation").value_or("A");
  if (!find_named<Orientation>(r.orientation))
    fail(ExitCode::kInvalidInput, "{}: \"orientation\" is \"{}\", expected \"A\" or \"A^T\"", run.where(),
         quoted_file_text(r.orientation));
  r.residual = run.flag("residual").value_or(false);
  r.aoff_precision = run.text("aoff_precision").value_or("f32");
  if (r.aoff_precision != "f32" && r.aoff_precision != "bf16")
    fail(ExitCode::kInvalidInput, "{}: \"aoff_precision\" is \"{}\", expected \"f32\" or \"bf16\"", run.where(),
         quoted_file_text(r.aoff_precision));
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
  if (const std::optional<Members> solve = run.object("solve")) {
    ResultSolve step;
    step.cfl = solve->number("cfl").value_or(NAN);
    if (!(step.cfl > 0.0))
      fail(ExitCode::kInvalidInput, "{}: \"cfl\" is missing or not positive (docs/bench-json.md)", solve->where());
    step.preconditioner = solve->required_text("preconditioner");
    step.aoff_precision = solve->required_text("aoff_precision");
    step.sweeps = static_cast<int>(solve->whole_number("sweeps", 0, INT_MAX).value_or(0));
    if (const std::optional<std::int64_t> iterations = solve->whole_number("iterations", 0, INT_MAX))
      step.iterations = static_cast<int>(*iterations);
    step.converged = solve->flag("converged");
    step.solve_ms = solve->number("solve_ms");
    if (step.solve_ms && !(*step.solve_ms >= 0.0))
      fail(ExitCode::kInvalidInput, "{}: \"solve_ms\" is {}, expected a time >= 0", solve->where(), *step.solve_ms);
    r.solve = step;
  }
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

/// The change of a solve case that ran in both files, by its solve: convergence first, then iterations (an iteration
/// more is a regression, whatever the time), then the solve time against the time tolerance.
void classify_solve(const ResultSolve& before, const ResultSolve& after, const CompareOptions& options, CaseChange& c) {
  if (!before.iterations || !after.iterations) return;  // one side did not solve (its validation says why)
  c.detail = fmt::format("iterations {} in BASE, {} in NEW", *before.iterations, *after.iterations);
  if (before.converged == true && after.converged == false) {
    c.change = Change::kNoLongerConverges;
  } else if (before.converged == false && after.converged == true) {
    c.change = Change::kConvergesNow;
  } else if (*after.iterations > *before.iterations) {
    c.change = Change::kMoreIterations;
  } else if (!before.solve_ms || !after.solve_ms) {
    c.change = *after.iterations < *before.iterations ? Change::kFewerIterations : Change::kSame;
  } else if (*after.solve_ms > *before.solve_ms * (1.0 + options.time_tolerance)) {
    c.change = Change::kSlower;
  } else if (*after.iterations < *before.iterations) {
    c.change = Change::kFewerIterations;
  } else if (*after.solve_ms * (1.0 + options.time_tolerance) < *before.solve_ms) {
    c.change = Change::kFaster;
  }
  if (c.change == Change::kSame) c.detail.clear();
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
  } else if (before.solve && after.solve) {
    classify_solve(*before.solve, *after.solve, options, c);
  } else if (*after.median_ms > *before.median_ms * (1.0 + options.time_tolerance)) {
    c.change = Change::kSlower;
  } else if (*after.median_ms * (1.0 + options.time_tolerance) < *before.median_ms) {
    c.change = Change::kFaster;
  }
  if (after.passed == false && c.detail.empty()) c.detail = "validation still FAILS: " + validation_detail(after);
  c.regression = c.change == Change::kNoLongerRuns || c.change == Change::kValidationFailed ||
                 c.change == Change::kSlower || c.change == Change::kNoLongerConverges ||
                 c.change == Change::kMoreIterations;
}

/// What a case is besides its mesh and ranks: variant, mode, orientation, residual, assembly, edges per block as
/// requested, Aoff precision; for a solve case (marked by the bool) the variant and the solve's CFL, preconditioner,
/// sweeps and Aoff precision, its assembly's members left empty (a solve case's assembly is its variant's own, full,
/// A, with R, its Aoff precision the solve's).
using CaseSetup = std::tuple<std::string, std::string, std::string, bool, std::string, int, std::string, bool, double,
                             std::string, int, std::string>;

CaseSetup setup_without_ranks(const ResultRun& r) {
  if (r.solve)
    return {r.variant,
            "",
            "",
            false,
            "",
            0,
            "",
            true,
            r.solve->cfl,
            r.solve->preconditioner,
            r.solve->sweeps,
            r.solve->aoff_precision};
  return {r.variant,        r.mode, r.orientation, r.residual, r.assembly, r.edges_per_block_requested,
          r.aoff_precision, false,  0.0,           "",         0,          ""};
}

using CaseKey = std::pair<CaseSetup, int>;  // and the ranks

CaseKey setup_of(const ResultRun& r) { return {setup_without_ranks(r), r.ranks}; }

/// Whether two runs differ in their ranks only.
bool differ_in_ranks_only(const ResultRun& a, const ResultRun& b) {
  return a.ranks != b.ranks && setup_without_ranks(a) == setup_without_ranks(b) && same_mesh(a.mesh, b.mesh);
}

/// Whether two runs differ in their orientation only.
bool differ_in_orientation_only(const ResultRun& a, const ResultRun& b) {
  return a.orientation != b.orientation && !a.solve && !b.solve && a.variant == b.variant && a.mode == b.mode &&
         a.residual == b.residual && a.assembly == b.assembly && a.aoff_precision == b.aoff_precision &&
         a.edges_per_block_requested == b.edges_per_block_requested && a.ranks == b.ranks && same_mesh(a.mesh, b.mesh);
}

/// How two meshes of one name differ, the first in file `mine_in`, the other in `theirs_in`: the first figure that
/// differs, else their content.
std::string mesh_difference(const MeshIdentity& mine, const MeshIdentity& theirs, const char* mine_in,
                            const char* theirs_in) {
  if (mine.figures && theirs.figures) {
    const MeshIdentity::Figures &a = *mine.figures, &b = *theirs.figures;
    for (const auto& [name, x, y] :
         {std::tuple<const char*, std::int64_t, std::int64_t>{"n_nodes", a.n_nodes, b.n_nodes},
          {"n_edges", a.n_edges, b.n_edges},
          {"n_offdiag_blocks", a.n_offdiag_blocks, b.n_offdiag_blocks},
          {"ordering_bandwidth", a.ordering_bandwidth, b.ordering_bandwidth}})
      if (x != y) return fmt::format("{} {} in {}, {} in {}", name, x, mine_in, y, theirs_in);
    if (mine.digest && theirs.digest) return "the same counts, other content (mesh_digest)";
    return fmt::format("mean_edge_span {} in {}, {} in {}", a.mean_edge_span, mine_in, b.mean_edge_span, theirs_in);
  }
  return "other content (mesh_digest)";
}

/// \brief Why `run` of file `mine` ("BASE" or "NEW") has no match among the `others` of the other file, where a run
/// there is the same case but for one part of the key; empty when none is.
std::string nearest_case(const ResultRun& run, const std::vector<const ResultRun*>& others, const char* mine) {
  const char* const other = std::string(mine) == "BASE" ? "NEW" : "BASE";
  std::vector<int> ranks;
  for (const ResultRun* candidate : others)
    if (differ_in_ranks_only(run, *candidate)) ranks.push_back(candidate->ranks);
  if (!ranks.empty()) {
    std::sort(ranks.begin(), ranks.end());
    std::string counts;
    for (std::size_t i = 0; i < ranks.size(); ++i)
      counts += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
    return fmt::format("differs only in ranks: {} ran it on {} rank{}", other, counts,
                       ranks.size() == 1 && ranks[0] == 1 ? "" : "s");
  }
  for (const ResultRun* candidate : others)
    if (differ_in_orientation_only(run, *candidate))
      return fmt::format(
          "differs only in orientation: {} assembled {}, {} assembled {} (bench --transpose assembles "
          "A^T)",
          other, candidate->orientation, mine, run.orientation);
  for (const ResultRun* candidate : others)
    if (setup_of(*candidate) == setup_of(run) && candidate->mesh.name == run.mesh.name &&
        !same_mesh(run.mesh, candidate->mesh))
      return fmt::format("{}'s mesh '{}' is another mesh: {}", other, run.mesh.name,
                         mesh_difference(run.mesh, candidate->mesh, mine, other));
  return {};
}

/// The note on a file whose runs lack mesh digests: how their meshes are matched instead.
std::optional<std::string> evidence_note(const ResultFile& file) {
  std::size_t by_figures = 0, by_name = 0;
  for (const ResultRun& run : file.runs)
    if (!run.mesh.digest) ++(run.mesh.figures ? by_figures : by_name);
  if (by_figures + by_name == 0) return std::nullopt;
  const char* const figures = "their counts and ordering figures";
  const char* const name = "the mesh's name (no counts recorded)";
  const std::string how = by_name == 0 ? std::string(figures)
                          : by_figures == 0
                              ? std::string(name)
                              : fmt::format("{} ({} runs), else {} ({} runs)", figures, by_figures, name, by_name);
  return fmt::format("{}: {} of {} run{} no \"mesh_digest\" (written by an older fluxjac or by hand): matched by {}",
                     file.path, by_figures + by_name, file.runs.size(), file.runs.size() == 1 ? " has" : "s have", how);
}

/// Refuses a file that holds one case more than once, naming the runs (the first three repeats, and how many more).
void refuse_repeated_cases(const std::vector<ResultRun>& runs, const std::string& shown) {
  std::map<CaseKey, std::vector<std::size_t>> by_setup;
  std::vector<std::string> repeats;
  for (std::size_t j = 0; j < runs.size(); ++j) {
    std::vector<std::size_t>& earlier = by_setup[setup_of(runs[j])];
    const auto first = std::find_if(earlier.begin(), earlier.end(),
                                    [&](std::size_t i) { return same_mesh(runs[i].mesh, runs[j].mesh); });
    if (first != earlier.end())
      repeats.push_back(fmt::format("runs[{}] and runs[{}] ({})", *first, j, printable(runs[j].key())));
    earlier.push_back(j);
  }
  if (repeats.empty()) return;
  std::string named;
  for (std::size_t k = 0; k < std::min<std::size_t>(repeats.size(), 3); ++k) named += (k == 0 ? "" : "; ") + repeats[k];
  if (repeats.size() > 3) named += fmt::format("; and {} more", repeats.size() - 3);
  fail(ExitCode::kInvalidInput,
       "{}: the same case more than once: {}. A result file holds each case once (docs/bench-json.md, \"The case "
       "key\"): compare the sweeps' files one by one, or keep one run of each case",
       shown, named);
}

/// The time the comparison shows for a run: a solve case's solve time, an assembly case's median.
std::optional<double> case_ms(const ResultRun& r) { return r.solve ? r.solve->solve_ms : r.median_ms; }

std::string with_detail(std::string detail, const std::string& more) {
  if (more.empty()) return detail;
  return detail.empty() ? more : detail + "; " + more;
}

}  // namespace

MeshEvidence mesh_evidence(const MeshIdentity& a, const MeshIdentity& b) {
  if (a.digest && b.digest) return MeshEvidence::kDigest;
  if (a.figures && b.figures) return MeshEvidence::kFigures;
  return MeshEvidence::kName;
}

bool same_mesh(const MeshIdentity& a, const MeshIdentity& b) {
  switch (mesh_evidence(a, b)) {
    case MeshEvidence::kDigest:
      return *a.digest == *b.digest;
    case MeshEvidence::kFigures: {
      const MeshIdentity::Figures &x = *a.figures, &y = *b.figures;
      // The mean span is a sum over ranks on many ranks: its last bits depend on how the mesh was split.
      return x.n_nodes == y.n_nodes && x.n_edges == y.n_edges && x.n_offdiag_blocks == y.n_offdiag_blocks &&
             x.ordering_bandwidth == y.ordering_bandwidth &&
             std::abs(x.mean_edge_span - y.mean_edge_span) <=
                 1e-9 * std::max(std::abs(x.mean_edge_span), std::abs(y.mean_edge_span));
    }
    case MeshEvidence::kName:
      return a.name == b.name;
  }
  return false;
}

bool same_case(const ResultRun& a, const ResultRun& b) {
  return setup_of(a) == setup_of(b) && same_mesh(a.mesh, b.mesh);
}

std::string ResultRun::key() const {
  if (solve) {
    std::string key = fmt::format("{} {} solve cfl={:g} {}", mesh.name, variant, solve->cfl, solve->preconditioner);
    if (solve->sweeps > 0) key += fmt::format(" sweeps={}", solve->sweeps);
    key += " " + solve->aoff_precision;
    if (ranks > 1) key += fmt::format(" ranks={}", ranks);
    return key;
  }
  std::string key = fmt::format("{} {} {}", mesh.name, variant, mode);
  if (orientation != "A") key += " " + orientation;          // an A^T case is its own case
  if (residual) key += " +R";                                // so is one that assembles the residual too
  if (aoff_precision != "f32") key += " " + aoff_precision;  // and one of Aoff in bf16
  if (!assembly.empty())
    key += fmt::format(" {} epb={}", assembly,
                       edges_per_block_requested > 0 ? std::to_string(edges_per_block_requested) : "default");
  if (ranks > 1) key += fmt::format(" ranks={}", ranks);  // a many-rank case is its own case
  return key;
}

ResultFile read_result_file(const std::string& path) {
  const std::string shown = printable(path);
  const json root = parse_document(read_whole_file(path, shown), shown);
  if (!root.is_object())
    fail(ExitCode::kInvalidInput, "{}: not a fluxjac result file (the top level is {}, not an object)", shown,
         type_name(root));
  const Members top(root, shown, "");
  const std::string schema = top.text("schema").value_or(kResultSchema);
  if (schema != kResultSchema)
    fail(ExitCode::kInvalidInput, "{}: schema '{}' is not a fluxjac result file (expected {})", shown,
         quoted_file_text(schema), kResultSchema);
  const std::int64_t version = top.whole_number("schema_version", 1, INT_MAX).value_or(1);
  if (version > kResultSchemaVersion)
    fail(ExitCode::kInvalidInput, "{}: schema version {} is newer than this fluxjac reads ({}): update fluxjac", shown,
         version, kResultSchemaVersion);
  const json& runs = top.required_array("runs");

  ResultFile file;
  file.path = path;
  const std::optional<Members> device = top.object("device");
  file.device = device ? device->text("name").value_or("unknown device") : "CPU only";
  if (const std::optional<Members> build = top.object("fluxjac"))
    file.build =
        fmt::format("fluxjac {} ({})", build->text("version").value_or("?"), build->text("git_revision").value_or("?"));
  for (std::size_t i = 0; i < runs.size(); ++i) file.runs.push_back(parse_run(runs[i], shown, i));
  refuse_repeated_cases(file.runs, shown);
  return file;
}

ComparisonReport compare_results(const ResultFile& base, const ResultFile& candidate, const CompareOptions& options) {
  ComparisonReport report;
  if (base.device != candidate.device)
    report.warnings.push_back(fmt::format("the files come from different devices ({} and {}): times may not compare",
                                          base.device, candidate.device));
  for (const ResultFile* file : {&base, &candidate}) {
    const std::optional<std::string> note = evidence_note(*file);
    if (note && std::find(report.notes.begin(), report.notes.end(), *note) == report.notes.end())
      report.notes.push_back(*note);
  }

  // Each run of NEW answers at most one run of BASE (read_result_file refuses files that repeat a case).
  std::map<CaseKey, std::vector<std::size_t>> new_by_setup;
  for (std::size_t j = 0; j < candidate.runs.size(); ++j) new_by_setup[setup_of(candidate.runs[j])].push_back(j);
  std::vector<bool> answered(candidate.runs.size(), false);
  std::vector<std::optional<std::size_t>> match(base.runs.size());
  for (std::size_t i = 0; i < base.runs.size(); ++i) {
    const auto bucket = new_by_setup.find(setup_of(base.runs[i]));
    if (bucket == new_by_setup.end()) continue;
    for (const std::size_t j : bucket->second)
      if (!answered[j] && same_mesh(base.runs[i].mesh, candidate.runs[j].mesh)) {
        match[i] = j;
        answered[j] = true;
        break;
      }
  }
  std::vector<const ResultRun*> base_unmatched, new_unmatched;
  for (std::size_t i = 0; i < base.runs.size(); ++i)
    if (!match[i]) base_unmatched.push_back(&base.runs[i]);
  for (std::size_t j = 0; j < candidate.runs.size(); ++j)
    if (!answered[j]) new_unmatched.push_back(&candidate.runs[j]);

  for (std::size_t i = 0; i < base.runs.size(); ++i) {
    const ResultRun& before = base.runs[i];
    CaseChange c;
    c.key = before.key();
    c.base_ms = case_ms(before);
    if (!match[i]) {
      c.change = Change::kMissing;
      c.regression = !options.allow_missing && before.status == "ok";
      c.detail = nearest_case(before, new_unmatched, "BASE");
    } else {
      const ResultRun& after = candidate.runs[*match[i]];
      c.new_ms = case_ms(after);
      classify(before, after, options, c);
      if (after.mesh.name != before.mesh.name)
        c.detail = with_detail(c.detail, fmt::format("NEW names the mesh '{}'", after.mesh.name));
    }
    report.cases.push_back(c);
  }
  for (const ResultRun* after : new_unmatched) {
    CaseChange c;
    c.key = after->key();
    c.change = Change::kNew;
    c.new_ms = case_ms(*after);
    c.detail = nearest_case(*after, base_unmatched, "NEW");
    report.cases.push_back(c);
  }
  for (const CaseChange& c : report.cases) report.regressions += c.regression ? 1 : 0;
  return report;
}

std::string format_comparison(const ResultFile& base, const ResultFile& candidate, const ComparisonReport& report,
                              const CompareOptions& options, bool changes_only) {
  const auto origin = [](const ResultFile& file) {
    return printable(file.path) + " — " + printable(file.device) +
           (file.build.empty() ? "" : ", " + printable(file.build));
  };
  std::string out = fmt::format("base: {}\nnew:  {}\n", origin(base), origin(candidate));
  for (const std::string& warning : report.warnings) out += "warning: " + printable(warning) + "\n";
  for (const std::string& note : report.notes) out += "note: " + printable(note) + "\n";
  std::vector<std::string> keys;
  std::size_t width = 4;
  for (const CaseChange& c : report.cases) {
    keys.push_back(printable(c.key));
    width = std::max(width, keys.back().size());
  }
  out += fmt::format("\n{:<{}} {:>11} {:>11} {:>8}  {}\n", "case", width, "base ms", "new ms", "change", "verdict");
  std::map<Change, int> counts;
  for (std::size_t k = 0; k < report.cases.size(); ++k) {
    const CaseChange& c = report.cases[k];
    ++counts[c.change];
    if (changes_only && (c.change == Change::kSame)) continue;
    auto ms = [](const std::optional<double>& t) { return t ? fmt::format("{:.4f}", *t) : std::string("-"); };
    const std::string change =
        c.base_ms && c.new_ms && *c.base_ms > 0 ? fmt::format("{:+.1f}%", 100.0 * (*c.new_ms / *c.base_ms - 1.0)) : "-";
    out += fmt::format("{:<{}} {:>11} {:>11} {:>8}  {}{}{}\n", keys[k], width, ms(c.base_ms), ms(c.new_ms), change,
                       to_string(c.change), c.regression ? " [regression]" : "",
                       c.detail.empty() ? "" : " (" + printable(c.detail) + ")");
  }
  std::string summary;
  for (const auto& [change, n] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, to_string(change));
  out += fmt::format("\n{} cases ({}); time tolerance {:.3g}%: {} regression{}{}\n", report.cases.size(), summary,
                     100.0 * options.time_tolerance, report.regressions, report.regressions == 1 ? "" : "s",
                     report.regressions > 0 ? " (marked [regression])" : "");
  return out;
}

}  // namespace fluxjac
