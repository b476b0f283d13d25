// fluxjac — block-CSR sparsity pattern with the edge-to-slot map, and the assembled Jacobian.
#pragma once

#include <vector>

#include "mesh/edge_mesh.hpp"
#include "types.hpp"

namespace fluxjac {

/// \brief Block-CSR pattern of the off-diagonal part plus, per edge, the positions of its two blocks.
///
/// Built once per mesh (SU2 habit: per-edge block offsets computed once and reused by every assembly).
struct JacobianPattern {
  std::int64_t n_nodes = 0;
  std::vector<block_offset> row_ptr;  ///< [n_nodes + 1]
  std::vector<node_index> col_idx;    ///< [nnz], ascending within a row, no diagonal
  std::vector<block_offset> slot_lr;  ///< [n_edges]: block index of Aoff[L, R]
  std::vector<block_offset> slot_rl;  ///< [n_edges]: block index of Aoff[R, L]

  block_offset nnz() const { return static_cast<block_offset>(col_idx.size()); }

  /// \brief Builds the pattern of a mesh (rows sorted, duplicate edges rejected by the mesh reader).
  static JacobianPattern build(const EdgeMesh& mesh);
};

/// \brief The assembled Jacobian dR/dQ: Adiag in float64, Aoff in float32 (docs/design.md, "Jacobian output").
struct Jacobian {
  std::vector<double> adiag;  ///< [n_nodes][5][5], row-major blocks
  std::vector<float> aoff;    ///< [nnz][5][5], row-major blocks, in pattern order

  void resize(const JacobianPattern& pattern) {
    adiag.assign(static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries, 0.0);
    aoff.assign(static_cast<std::size_t>(pattern.nnz()) * kBlockEntries, 0.0f);
  }
};

}  // namespace fluxjac
