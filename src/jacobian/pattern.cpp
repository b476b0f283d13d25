#include <algorithm>
#include <utility>

#include "jacobian/jacobian.hpp"
#include "util/bucket_sort.hpp"
#include "util/error.hpp"

namespace fluxjac {

JacobianPattern JacobianPattern::build(const EdgeMesh& mesh) {
  const edge_index n_edges = mesh.n_edges();
  JacobianPattern pattern;
  pattern.n_nodes = mesh.n_nodes;

  // ---- rows: every edge adds (R, owner 2 e) to row L and (L, owner 2 e + 1) to row R (slots L,R and R,L) ----
  Buckets<std::pair<node_index, edge_index>> rows =
      bucket_by_key<std::pair<node_index, edge_index>>(mesh.n_nodes, [&](auto&& add) {
        for (edge_index e = 0; e < n_edges; ++e) {
          add(mesh.left(e), std::pair<node_index, edge_index>{mesh.right(e), 2 * e});
          add(mesh.right(e), std::pair<node_index, edge_index>{mesh.left(e), 2 * e + 1});
        }
      });
  std::vector<std::pair<node_index, edge_index>>& entries = rows.values;
  pattern.row_ptr = std::move(rows.start);
  const block_offset nnz = pattern.row_ptr.back();

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

std::vector<block_offset> node_entry_targets(const JacobianPattern& pattern, Orientation orientation) {
  std::vector<block_offset> targets(static_cast<std::size_t>(pattern.nnz()));
  if (orientation == Orientation::kTransposed) {
    for (block_offset k = 0; k < pattern.nnz(); ++k) targets[k] = k;
    return targets;
  }
  for (std::size_t e = 0; e < pattern.slot_lr.size(); ++e) {
    targets[pattern.slot_lr[e]] = pattern.slot_rl[e];
    targets[pattern.slot_rl[e]] = pattern.slot_lr[e];
  }
  return targets;
}

}  // namespace fluxjac
