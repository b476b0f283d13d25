// fluxjac — the linear system of an implicit pseudo-time step, M dQ = -R with M = diag(s) (x) I5 + Adiag + Aoff
// (docs/design.md, "The solve"), on the host: its shift, its product and its true residual, in float64 (Aoff as
// stored, float32 values widened).
#pragma once

#include <cstdint>
#include <vector>

#include "jacobian/jacobian.hpp"
#include "mesh/edge_mesh.hpp"
#include "part/local_part.hpp"

namespace fluxjac {

/// \brief The local time step's shift s_i = V_i / dt_i = (1 / CFL) sum over i's edges of A_e (|u_i . n_e| + c_i): the
/// largest wave speed through each face, taken at node i's own state (velocity u_i, speed of sound c_i), so that the
/// volumes cancel. Error(kInvalidInput) naming the node when its state has no positive density or pressure.
std::vector<double> local_time_step_shift(const EdgeMesh& mesh, const FlowState& state, double cfl);

/// \brief M of one step: the assembled Jacobian (A, not A^T) on its pattern and the shift; views, nothing copied.
/// On many ranks the pattern, Jacobian and shift are the rank's part (local ids: owned and ghost nodes), and M's rows
/// here are the owned nodes' (docs/design.md, "The solve", "Many ranks"): the solve's vectors hold those rows, in
/// owned order; a product reads x at every local node.
struct BlockSystem {
  const JacobianPattern& pattern;
  const Jacobian& jacobian;
  const std::vector<double>& shift;  ///< [local nodes]
  /// Aoff in float64 (`--aoff-precision f64`, the host solve), used instead of jacobian.aoff when set.
  const std::vector<double>* aoff_f64 = nullptr;
  /// The rank's part (its owned nodes are the rows); null: one process, every node a row.
  const RankLayout* layout = nullptr;

  /// The nodes whose rows M has here, and the local id of the t-th.
  std::int64_t row_nodes() const { return layout ? layout->owned_count() : pattern.n_nodes; }
  node_index row_node(std::int64_t t) const { return layout ? layout->owned_node(t) : static_cast<node_index>(t); }
  /// The length of the solve's vectors: 5 values per row node.
  std::int64_t rows() const { return row_nodes() * kBlock; }
  /// True where the rows are every local node, in order (one process): the solve's vectors are then local vectors.
  bool all_nodes() const { return layout == nullptr || layout->is_whole_mesh(); }
  /// The file's id of the t-th row node, for messages.
  std::int64_t file_node(std::int64_t t) const { return layout ? layout->global_id(row_node(t)) : t; }
  /// Entry e of Aoff block k as M holds it: float64 where set, else the stored float32 widened.
  double aoff(block_offset k, int e) const {
    const std::size_t at = static_cast<std::size_t>(k) * kBlockEntries + static_cast<std::size_t>(e);
    return aoff_f64 ? (*aoff_f64)[at] : static_cast<double>(jacobian.aoff[at]);
  }
  /// y = M x = s x + Adiag x + Aoff x: x holds every local node ([local nodes][5], ghost rows current), y the rows
  /// (rows() values, row-node order); each row summed in pattern order.
  void multiply(const double* x, double* y) const;
};

}  // namespace fluxjac
