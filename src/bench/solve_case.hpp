// fluxjac — the implicit step solved with the Jacobian a case assembled (docs/design.md, "The solve"): what
// `fluxjac solve` does after its assembly, and what each solve case of `fluxjac bench --solve` does after its own.
#pragma once

#include <string>
#include <vector>

#include "bench/run_case.hpp"
#include "solve/solve_step.hpp"

namespace fluxjac {

/// \brief The solves a sweep adds (bench --solve): one solve case per CFL x preconditioner x Aoff precision, with
/// the other options as `fluxjac solve` takes them.
struct SolveSweep {
  bool enabled = false;                      ///< --solve; any of the lists below given turns it on too
  std::vector<double> cfls;                  ///< --solve-cfl; empty: SolveOptions' default
  std::vector<std::string> preconditioners;  ///< --solve-preconditioner; empty: SolveOptions' default
  std::vector<std::string> aoff_precisions;  ///< --solve-aoff-precision; empty: f32
  SolveOptions options;                      ///< sweeps, restart, tolerance, max iterations (the rest per case)
  bool asked() const { return enabled || !cfls.empty() || !preconditioners.empty() || !aoff_precisions.empty(); }
};

/// \brief Every solve of the sweep, checked by the solve command's own rules (check_solve_options) and named by
/// bench's options (`--solve-cfl 0: the CFL number must be ...`): Error(kUsage). Empty when no solve is asked for.
std::vector<SolveOptions> solve_cases(const SolveSweep& sweep);

/// \brief Why `variant` cannot solve with Aoff in `precision`, for an error or a skipped case; "" when it can: f64
/// takes the float64 Aoff that only the CPU reference assembles.
std::string aoff_precision_refusal(const std::string& variant, AoffPrecision precision);

/// \brief The precision a solve's assembly stores Aoff in: bf16 for a bf16 solve (its GPU kernels store bfloat16), f32
/// for the others (f64's M takes the CPU reference's float64 values, assembled apart).
AoffPrecision assembly_precision(AoffPrecision solve_precision);

/// \brief What mcgs on many ranks does, for a note: "mcgs on RANKS: each rank sweeps its own nodes ..."
/// (docs/design.md, "The solve", many ranks); `ranks` names them ("2 ranks").
std::string mcgs_on_ranks_note(const std::string& ranks);

/// \brief Solves M dQ = -R with `jacobian`, which `variant` assembled on `mesh` with its residual: Aoff put in the
/// options' precision (f64: the CPU reference's float64 values, assembled again; bf16, already assembled so, rounds to
/// itself), then the step solved where the
/// variant assembled, a GPU variant's Jacobian on the GPU (solve_step_on_device), any other on the host (solve_step);
/// on many ranks (collective) each rank solves for its owned rows.
SolveOutcome solve_assembled(const PreparedMesh& mesh, const VariantInfo& variant, Jacobian& jacobian,
                             const SolveOptions& options);

}  // namespace fluxjac
