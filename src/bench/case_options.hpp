// fluxjac — the options of the cases `run` and `bench` run, their bounds, and the one check of them.
//
// `run` is a one-mesh sweep: both commands fill the same CaseOptions (cli/case_options_cli.hpp adds them to a
// command line), and plan_sweep checks them here, so the two commands cannot accept different values.
#pragma once

#include <string>
#include <vector>

#include "jacobian/compare.hpp"

namespace fluxjac {

/// Bounds of the count options. Timing loops add warm-up and repetitions in int; these keep every sum and
/// sample vector small, and no kernel fits more than kMaxEdgesPerBlock work units in a block (1,024 threads,
/// 227 KiB of shared memory).
inline constexpr int kMaxReps = 1'000'000;
inline constexpr int kMaxWarmup = 1'000;
inline constexpr int kMaxEdgesPerBlock = 4'096;
inline constexpr int kMaxThreads = 4'096;

/// \brief What every case of a sweep runs with; each list is one axis of the cross product.
struct CaseOptions {
  std::vector<std::string> variants{"reference"};   ///< names, comma lists or "all" (Registry::resolve)
  std::vector<std::string> modes{"full"};           ///< full, compute-only, scatter-only
  std::vector<std::string> assemblies{"auto"};      ///< GPU assembly strategies: auto, node, edge
  std::vector<int> edges_per_block{0};              ///< GPU work units per block; 0 = the variant's default
  std::vector<std::string> aoff_precisions{"f32"};  ///< Aoff stored in f32 or bf16 (docs/design.md, "Aoff in bfloat16")
  int warmup = 2;
  int reps = 10;
  bool validate = true;  ///< against the reference (mode full only)
  /// Assemble A^T instead of A (docs/design.md, "The adjoint orientation"): every case of a sweep, the reference and
  /// the Jacobian files alike.
  bool transpose = false;
  /// Also assemble the residual R in the same pass (docs/design.md, "Residual, sign convention and the four blocks"):
  /// timed with the Jacobian, validated against the reference's R and written to the Jacobian files.
  bool residual = false;
  Tolerances tolerances;
  int threads = 0;  ///< CPU threads of the reference; 0 = OpenMP's default (every core)
};

/// \brief Checks each value on its own: counts within their bounds, tolerances finite and not negative, Aoff
/// precisions f32 or bf16 (f64 refused: parse_assembly_precision), every list non-empty. Error(kUsage) naming the
/// option and the value. Contradictions between options (which need the resolved variants) are checked by plan_sweep.
void check_case_options(const CaseOptions& options);

}  // namespace fluxjac
