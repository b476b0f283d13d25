// fluxjac — regression checks between two result files (`fluxjac compare BASE.json NEW.json`).
//
// Cases are matched by (mesh, variant, mode, assembly, edges per block as requested). A regression is a
// validation that failed in NEW but not in BASE, a case that ran in BASE but is skipped, failed or missing
// in NEW, or a median time above BASE x (1 + time tolerance).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fluxjac {

/// \brief What compare reads of one run of a result file (docs/bench-json.md).
struct ResultRun {
  std::string mesh, variant, mode, assembly;
  int edges_per_block_requested = 0;
  int ranks = 1;              ///< MPI ranks (absent in files of one process: 1)
  std::string status = "ok";  ///< ok, skipped, failed
  std::string reason;
  std::optional<double> median_ms;  ///< absent unless the case ran
  std::optional<bool> passed;       ///< absent when not validated
  double adiag_error = 0.0, aoff_error = 0.0;

  /// \brief "mixed:100:rcm hd full node epb=16": the matching key, as people read it.
  std::string key() const;
};

/// \brief A parsed result file.
struct ResultFile {
  std::string path;
  std::string device;  ///< device name, or "CPU only" when the file has no device
  std::string build;   ///< "fluxjac 0.1.0 (9eb4f95)"
  std::vector<ResultRun> runs;
};

/// \brief Reads a result JSON file of `fluxjac bench --json` or `run --json`; Error(kInvalidInput) naming
/// the file and what is wrong (or that it does not exist).
ResultFile read_result_file(const std::string& path);

/// How one case changed.
enum class Change {
  kSame,
  kFaster,
  kSlower,            ///< regression
  kValidationFailed,  ///< regression
  kValidationFixed,
  kNoLongerRuns,  ///< regression
  kRunsNow,
  kMissing,  ///< regression unless allowed
  kNew,
  kNotComparable,  ///< neither side ran (both skipped or failed)
};
const char* to_string(Change change);

struct CaseChange {
  std::string key;
  Change change = Change::kSame;
  bool regression = false;
  std::optional<double> base_ms, new_ms;
  std::string detail;  ///< validation errors, skip reason
};

struct CompareOptions {
  double time_tolerance = 0.1;  ///< relative: slower when new > base x (1 + tolerance)
  bool allow_missing = false;   ///< cases of BASE absent from NEW are not regressions
};

struct ComparisonReport {
  std::vector<CaseChange> cases;  ///< BASE order, then cases only NEW has
  std::vector<std::string> warnings;
  int regressions = 0;
};

/// \brief Compares every case of `base` with the same case of `candidate`.
ComparisonReport compare_results(const ResultFile& base, const ResultFile& candidate, const CompareOptions& options);

/// \brief Table of the cases (all, or only those that changed) and a summary line.
std::string format_comparison(const ResultFile& base, const ResultFile& candidate, const ComparisonReport& report,
                              const CompareOptions& options, bool changes_only);

}  // namespace fluxjac
