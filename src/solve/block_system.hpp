// fluxjac — the linear system of an implicit pseudo-time step, M dQ = -R with M = diag(s) (x) I5 + Adiag + Aoff
// (docs/design.md, "The solve"), on the host: its shift, its product and its true residual, in float64 (Aoff as
// stored, float32 values widened).
#pragma once

#include <cstdint>
#include <vector>

#include "jacobian/jacobian.hpp"
#include "mesh/edge_mesh.hpp"

namespace fluxjac {

/// \brief The local time step's shift s_i = V_i / dt_i = (1 / CFL) sum over i's edges of A_e (|u_i . n_e| + c_i): the
/// largest wave speed through each face, taken at node i's own state (velocity u_i, speed of sound c_i), so that the
/// volumes cancel. Error(kInvalidInput) naming the node when its state has no positive density or pressure.
std::vector<double> local_time_step_shift(const EdgeMesh& mesh, const FlowState& state, double cfl);

/// \brief M of one step: the assembled Jacobian (A, not A^T) on its pattern and the shift; views, nothing copied.
struct BlockSystem {
  const JacobianPattern& pattern;
  const Jacobian& jacobian;
  const std::vector<double>& shift;  ///< [n_nodes]
  /// Aoff in float64 (`--aoff-precision f64`, the host solve), used instead of jacobian.aoff when set.
  const std::vector<double>* aoff_f64 = nullptr;

  std::int64_t rows() const { return pattern.n_nodes * kBlock; }
  /// Entry e of Aoff block k as M holds it: float64 where set, else the stored float32 widened.
  double aoff(block_offset k, int e) const {
    const std::size_t at = static_cast<std::size_t>(k) * kBlockEntries + static_cast<std::size_t>(e);
    return aoff_f64 ? (*aoff_f64)[at] : static_cast<double>(jacobian.aoff[at]);
  }
  /// y = M x = s x + Adiag x + Aoff x, node-major vectors of rows() values, each row summed in pattern order.
  void multiply(const double* x, double* y) const;
  /// |M x - b| / |b| in float64 (|b| = 0: |M x|).
  double relative_residual(const double* x, const double* b) const;
};

}  // namespace fluxjac
