// fluxjac — regression checks between two result files (`fluxjac compare BASE.json NEW.json`).
//
// Cases are matched by their case key (docs/bench-json.md, "The case key"): the mesh itself (its content digest,
// else its counts and ordering figures, else its name), the variant, the mode, the orientation (A or A^T), the
// assembly strategy, the edges per block as requested, the Aoff precision (f32 or bf16) and the ranks; a solve case by
// the mesh, the variant, the ranks and its solve (CFL, preconditioner, sweeps, Aoff precision). A file that holds one
// case twice is refused. A regression is a validation that failed in NEW but not in BASE, a case that ran in BASE but
// is skipped, failed or missing in NEW, or a median time above BASE x (1 + time tolerance); for a solve case, a solve
// that no longer converges, more iterations, or a solve time above BASE x (1 + time tolerance).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/named_enum.hpp"

namespace fluxjac {

/// \brief What identifies the mesh of a run, from the strongest evidence to the weakest.
struct MeshIdentity {
  /// The counts and ordering figures every result file records (docs/bench-json.md, "Runs").
  struct Figures {
    std::int64_t n_nodes = 0, n_edges = 0, n_offdiag_blocks = 0, ordering_bandwidth = 0;
    double mean_edge_span = 0.0;
  };
  std::string name;                     ///< as the sweep named it: a file path or a generator spec (shown)
  std::optional<Figures> figures;       ///< absent when the run lacks any of them
  std::optional<std::uint64_t> digest;  ///< "mesh_digest": the mesh's content; absent in files of older versions
};

/// How two runs' meshes are told apart: the strongest evidence both have.
enum class MeshEvidence { kDigest, kFigures, kName };
MeshEvidence mesh_evidence(const MeshIdentity& a, const MeshIdentity& b);

/// \brief Whether two runs ran on the same mesh, by the strongest evidence both have: equal digests and counts;
/// else equal counts and ordering figures (the mean edge span to 1e-9, relative); else equal names.
bool same_mesh(const MeshIdentity& a, const MeshIdentity& b);

/// \brief What compare reads of the solve of a solve case (docs/bench-json.md, "Solve cases").
struct ResultSolve {
  double cfl = 0.0;
  std::string preconditioner, aoff_precision;
  int sweeps = 0;                                    ///< mcgs's sweeps; 0 for block Jacobi
  std::optional<int> iterations;                     ///< absent unless it solved
  std::optional<bool> converged;                     ///< absent unless it solved
  std::optional<double> solve_ms;                    ///< absent unless it solved
  bool operator==(const ResultSolve& other) const {  ///< the same solve: its part of the case key
    return cfl == other.cfl && preconditioner == other.preconditioner && sweeps == other.sweeps &&
           aoff_precision == other.aoff_precision;
  }
};

/// \brief What compare reads of one run of a result file (docs/bench-json.md).
struct ResultRun {
  MeshIdentity mesh;
  std::string variant, mode, assembly;
  std::string orientation = "A";       ///< "A" or "A^T" (absent in files of older versions: A)
  bool residual = false;               ///< the residual assembled in the same pass (absent in older files: no)
  std::string aoff_precision = "f32";  ///< "f32" or "bf16", what Aoff was stored in (absent in older files: f32)
  int edges_per_block_requested = 0;
  int ranks = 1;              ///< MPI ranks (absent in files of one process: 1)
  std::string status = "ok";  ///< ok, skipped, failed
  std::string reason;
  std::optional<double> median_ms;  ///< absent unless the case ran
  std::optional<bool> passed;       ///< absent when not validated
  double adiag_error = 0.0, aoff_error = 0.0;
  std::optional<ResultSolve> solve;  ///< a solve case's solve; absent for an assembly case

  /// \brief "mixed:100:rcm hd full A^T bf16 node epb=16 ranks=2", "mixed:100:rcm hd solve cfl=100 mcgs sweeps=2 f32":
  /// the case key as people read it (the mesh by its name; the orientation only when A^T, the Aoff precision only when
  /// bf16, ranks only above 1).
  std::string key() const;
};

/// \brief Whether two runs are the same case: the same mesh (same_mesh), variant, mode, orientation, assembly, edges
/// per block as requested, Aoff precision and ranks; for solve cases the same mesh, variant, ranks and solve.
bool same_case(const ResultRun& a, const ResultRun& b);

/// \brief A parsed result file.
struct ResultFile {
  std::string path;
  std::string device;  ///< device name, or "CPU only" when the file has no device
  std::string build;   ///< "fluxjac 0.1.0 (9eb4f95)"
  std::vector<ResultRun> runs;
};

/// \brief Reads a result JSON file of `fluxjac bench --json` or `run --json`; Error(kInvalidInput) naming
/// the file and what is wrong (or that it does not exist), or naming the runs that repeat a case.
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
  kNotComparable,   ///< neither side ran (both skipped or failed)
  kMoreIterations,  ///< regression: a solve case's iterations grew
  kFewerIterations,
  kNoLongerConverges,  ///< regression: a solve case that converged in BASE does not in NEW
  kConvergesNow,
};
/// The words of the report: regressions in capitals.
inline constexpr NamedValue<Change> kChangeNames[] = {{Change::kSame, "same"},
                                                      {Change::kFaster, "faster"},
                                                      {Change::kSlower, "SLOWER"},
                                                      {Change::kValidationFailed, "VALIDATION FAILED"},
                                                      {Change::kValidationFixed, "validation fixed"},
                                                      {Change::kNoLongerRuns, "NO LONGER RUNS"},
                                                      {Change::kRunsNow, "runs now"},
                                                      {Change::kMissing, "MISSING"},
                                                      {Change::kNew, "new"},
                                                      {Change::kNotComparable, "not run"},
                                                      {Change::kMoreIterations, "MORE ITERATIONS"},
                                                      {Change::kFewerIterations, "fewer iterations"},
                                                      {Change::kNoLongerConverges, "NO LONGER CONVERGES"},
                                                      {Change::kConvergesNow, "converges now"}};
constexpr const auto& names_of(Change) { return kChangeNames; }

struct CaseChange {
  std::string key;  ///< ResultRun::key() of BASE's run (of NEW's for a new case)
  Change change = Change::kSame;
  bool regression = false;
  std::optional<double> base_ms, new_ms;  ///< the median assembly time; a solve case's solve time
  std::string detail;  ///< validation errors, skip reason, the mesh's name in NEW, the nearest case of the other file
};

struct CompareOptions {
  double time_tolerance = 0.1;  ///< relative: slower when new > base x (1 + tolerance) (a solve case: its solve time)
  bool allow_missing = false;   ///< cases of BASE absent from NEW are not regressions
};

struct ComparisonReport {
  std::vector<CaseChange> cases;  ///< BASE order, then cases only NEW has
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  ///< how meshes were matched where a file lacks their digests
  int regressions = 0;
};

/// \brief Compares every case of `base` with the same case of `candidate`.
ComparisonReport compare_results(const ResultFile& base, const ResultFile& candidate, const CompareOptions& options);

/// \brief Table of the cases (all, or only those that changed) and a summary line. Text from the files is shown
/// with its control characters escaped (printable, util/text.hpp).
std::string format_comparison(const ResultFile& base, const ResultFile& candidate, const ComparisonReport& report,
                              const CompareOptions& options, bool changes_only);

}  // namespace fluxjac
