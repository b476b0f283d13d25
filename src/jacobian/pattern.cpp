#include <algorithm>
#include <numeric>

#include "jacobian/jacobian.hpp"
#include "util/error.hpp"

namespace fluxjac {

JacobianPattern JacobianPattern::build(const EdgeMesh& mesh) {
  const edge_index n_edges = mesh.n_edges();
  JacobianPattern pattern;
  pattern.n_nodes = mesh.n_nodes;

  // ---- row sizes: every edge adds one block to row L and one to row R --------------------------
  pattern.row_ptr.assign(static_cast<std::size_t>(mesh.n_nodes) + 1, 0);
  for (edge_index e = 0; e < n_edges; ++e) {
    ++pattern.row_ptr[mesh.left(e) + 1];
    ++pattern.row_ptr[mesh.right(e) + 1];
  }
  std::partial_sum(pattern.row_ptr.begin(), pattern.row_ptr.end(), pattern.row_ptr.begin());

  // ---- fill rows with (column, owner) where owner = 2 e (slot L,R) or 2 e + 1 (slot R,L) -------
  const block_offset nnz = pattern.row_ptr.back();
  std::vector<std::pair<node_index, edge_index>> entries(static_cast<std::size_t>(nnz));
  std::vector<block_offset> cursor(pattern.row_ptr.begin(), pattern.row_ptr.end() - 1);
  for (edge_index e = 0; e < n_edges; ++e) {
    entries[cursor[mesh.left(e)]++] = {mesh.right(e), 2 * e};
    entries[cursor[mesh.right(e)]++] = {mesh.left(e), 2 * e + 1};
  }

  // ---- sort each row by column and record where each edge's two blocks landed ------------------
  pattern.col_idx.resize(static_cast<std::size_t>(nnz));
  pattern.slot_lr.resize(static_cast<std::size_t>(n_edges));
  pattern.slot_rl.resize(static_cast<std::size_t>(n_edges));
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < mesh.n_nodes; ++row) {
    auto first = entries.begin() + pattern.row_ptr[row];
    auto last = entries.begin() + pattern.row_ptr[row + 1];
    std::sort(first, last);
    for (block_offset k = pattern.row_ptr[row]; k < pattern.row_ptr[row + 1]; ++k) {
      const auto [column, owner] = entries[k];
      pattern.col_idx[k] = column;
      (owner % 2 == 0 ? pattern.slot_lr : pattern.slot_rl)[owner / 2] = k;
    }
  }
  for (std::int64_t row = 0; row < mesh.n_nodes; ++row)
    for (block_offset k = pattern.row_ptr[row] + 1; k < pattern.row_ptr[row + 1]; ++k)
      if (pattern.col_idx[k] == pattern.col_idx[k - 1])
        fail(ExitCode::kInvalidInput, "duplicate edge between nodes {} and {}", row, pattern.col_idx[k]);
  return pattern;
}

}  // namespace fluxjac
