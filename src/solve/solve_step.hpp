// fluxjac — one implicit pseudo-time step on the host: the shift of the local time step, block Jacobi, FGMRES on
// M dQ = -R, the true residual recomputed, and the solve output (docs/formats.md, "Solve output").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jacobian/aoff_precision.hpp"
#include "jacobian/jacobian_io.hpp"
#include "part/local_part.hpp"
#include "ranks/communicator.hpp"
#include "solve/fgmres.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// The preconditioners (docs/design.md, "The solve"): block Jacobi by its PETSc name, and multicolor block
/// Gauss-Seidel (FUN3D's point-implicit sweeps).
inline constexpr const char* kBlockJacobi = "pbjacobi";
inline constexpr const char* kMulticolorGaussSeidel = "mcgs";

/// \brief Puts Aoff in `precision` for the solve: bf16 rounds jacobian.aoff in place (from aoff_f64 where the
/// Jacobian has it, so that no value is rounded twice); f32 and f64 change nothing. Error(kUsage) for f64 without
/// aoff_f64 (only the CPU reference assembles it).
void apply_aoff_precision(Jacobian& jacobian, AoffPrecision precision);

struct SolveOptions {
  double cfl = 100.0;
  AoffPrecision aoff_precision = AoffPrecision::kF32;
  std::string preconditioner = kBlockJacobi;
  int sweeps = 2;  ///< Gauss-Seidel sweeps per application (mcgs)
  KrylovOptions krylov;
  /// The GPU solve also times cuSPARSE's product of the same M (cusparse_product.hpp; the host solve has no such
  /// product, and `fluxjac solve --cusparse` refuses a variant that solves on the host).
  bool cusparse = false;
};

/// \brief Error(kUsage) naming the option for a CFL that is not positive and finite, a restart below 1, a tolerance
/// outside (0, 1), iterations below 1, sweeps outside 1 to 100 or an unknown preconditioner.
void check_solve_options(const SolveOptions& options);

/// \brief Everything a solve checks before it starts: the options, A (not A^T), a residual on every row, all finite.
/// Error(kUsage) or Error(kInvalidInput) naming what to change.
/// On many ranks (layout set) the rows checked are the rank's owned nodes, named by their file ids.
void check_solve_inputs(const JacobianPattern& pattern, const Jacobian& jacobian, Orientation orientation,
                        const SolveOptions& options, const RankLayout* layout = nullptr);

/// \brief cuSPARSE's product of M in one precision (`--cusparse`, docs/design.md "The solve"): cusparseSpMV on M as
/// one BSR matrix, checked against and timed as fluxjac's own product, in the first type combination cuSPARSE accepts.
struct CusparseProduct {
  std::string precision;                 ///< "f32_matrix_f64_vectors", "f64" or "f32"
  std::string matrix, vectors, compute;  ///< the types that ran, "f32" or "f64"; empty when none did
  std::vector<std::string> refused;      ///< what cuSPARSE refused (a type combination, or the optional
                                         ///< preprocessing), each with the types, the call and its status
  std::optional<double> product_ms;      ///< one product, timed as SolveOutcome::product_ms; none when refused
  double relative_difference = 0.0;      ///< |y - y_fluxjac| / |y_fluxjac| for x = dQ
};

/// \brief The ranks a solve runs on (docs/design.md, "The solve", "Many ranks"): the communicator and this rank's
/// part of the mesh; the default is one process with the whole mesh.
struct SolveRanks {
  const Communicator* comm = nullptr;
  const RankLayout* layout = nullptr;
  bool distributed() const { return comm != nullptr && comm->distributed(); }
};

struct SolveOutcome {
  std::vector<double> shift;  ///< [row nodes]: s_i = V_i / dt_i (the rank's owned nodes, in order; one process: all)
  std::vector<double> delta;  ///< [row nodes][5]: dQ
  KrylovResult krylov;
  double relative_residual = 0.0;  ///< |M dQ + R| / |R|, recomputed in float64
  double setup_ms = 0.0;           ///< shift and preconditioner
  double solve_ms = 0.0;           ///< FGMRES
  double product_ms = 0.0;         ///< one product y = M x, the median of several
  /// Many ranks, during FGMRES, on this rank: the time of the products' halo exchanges, and the host time of the sums
  /// over the ranks (with the wait for the slowest rank); 0 on one process.
  double exchange_ms = 0.0;
  double reduction_ms = 0.0;
  std::vector<CusparseProduct> cusparse;  ///< with SolveOptions::cusparse: its products, one per precision
};

/// \brief Solves M dQ = -R for the Jacobian A (with its residual) assembled on mesh and state. Error(kInvalidInput)
/// when the Jacobian has no residual, holds A^T, or R is not finite (naming the node), or a diagonal block of M is
/// singular. On many ranks (collective) mesh, state, pattern and jacobian are the rank's part; each rank solves for
/// its owned rows, the product refreshing x's ghost rows with the halo exchange and the norms summing over the ranks.
SolveOutcome solve_step(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                        const Jacobian& jacobian, Orientation orientation, const SolveOptions& options,
                        const SolveRanks& ranks = {});

/// \brief The Jacobian file of the assembly plus /solve/shift, /solve/delta and /solve's attributes (cfl,
/// preconditioner, sweeps, restart, tolerance, iterations, relative_residual, aoff_precision), atomically; on many
/// ranks (collective) one file of every rank's rows (write_owned_rows).
void write_solve_file(const std::string& path, const JacobianPattern& pattern, const Jacobian& jacobian,
                      const JacobianFileInfo& info, const SolveOptions& options, const SolveOutcome& outcome,
                      const SolveRanks& ranks = {});

}  // namespace fluxjac
