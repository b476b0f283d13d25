#include "solve/multicolor_gs.hpp"

#include <algorithm>

namespace fluxjac {

NodeColoring color_nodes(const JacobianPattern& pattern, const RankLayout* layout) {
  const std::int64_t rows = layout ? layout->owned_count() : pattern.n_nodes;
  const auto node_of = [&](std::int64_t t) { return layout ? layout->owned_node(t) : static_cast<node_index>(t); };
  std::vector<int> color(static_cast<std::size_t>(pattern.n_nodes), -1);  // by local node; ghosts stay -1
  std::vector<std::int64_t> taken_by;  // taken_by[c] == t: color c is a neighbour's of row node t
  int colors = 0;
  for (std::int64_t t = 0; t < rows; ++t) {
    const node_index i = node_of(t);
    for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
      const int c = color[pattern.col_idx[k]];
      if (c >= 0) taken_by[static_cast<std::size_t>(c)] = t;
    }
    int c = 0;
    while (c < colors && taken_by[static_cast<std::size_t>(c)] == t) ++c;
    if (c == colors) {
      ++colors;
      taken_by.push_back(-1);
    }
    color[i] = c;
  }
  NodeColoring coloring;
  coloring.color_start.assign(static_cast<std::size_t>(colors) + 1, 0);
  for (std::int64_t t = 0; t < rows; ++t) ++coloring.color_start[static_cast<std::size_t>(color[node_of(t)]) + 1];
  for (int c = 0; c < colors; ++c) coloring.color_start[c + 1] += coloring.color_start[c];
  coloring.nodes.resize(static_cast<std::size_t>(rows));
  std::vector<std::int64_t> next(coloring.color_start.begin(), coloring.color_start.end() - 1);
  for (std::int64_t t = 0; t < rows; ++t) coloring.nodes[next[color[node_of(t)]]++] = t;
  return coloring;
}

MulticolorGaussSeidel::MulticolorGaussSeidel(const BlockSystem& system, const std::vector<double>& inverse, int sweeps)
    : system_(system),
      inverse_(inverse),
      sweeps_(sweeps),
      coloring_(color_nodes(system.pattern, system.all_nodes() ? nullptr : system.layout)) {
  if (!system.all_nodes()) local_.resize(static_cast<std::size_t>(system.pattern.n_nodes) * kBlock);
}

void MulticolorGaussSeidel::apply(const double* r, double* z) const {
  const JacobianPattern& pattern = system_.pattern;
  // One process: z is indexed by node. Many ranks: the sweeps run on every local node's z (ghosts 0), then the rows
  // are z.
  double* const swept = system_.all_nodes() ? z : local_.data();
  std::fill(swept, swept + (system_.all_nodes() ? system_.rows() : pattern.n_nodes * kBlock), 0.0);
  for (int sweep = 0; sweep < sweeps_; ++sweep)
    for (int c = 0; c < coloring_.colors(); ++c) {
      const std::int64_t first = coloring_.color_start[c], end = coloring_.color_start[c + 1];
#pragma omp parallel for schedule(static)
      for (std::int64_t at = first; at < end; ++at) {
        const std::int64_t t = coloring_.nodes[at], i = system_.row_node(t);
        double rest[kBlock];
        for (int row = 0; row < kBlock; ++row) rest[row] = r[kBlock * t + row];
        for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
          const double* zj = swept + kBlock * static_cast<std::int64_t>(pattern.col_idx[k]);
          for (int row = 0; row < kBlock; ++row)
            for (int col = 0; col < kBlock; ++col) rest[row] -= system_.aoff(k, kBlock * row + col) * zj[col];
        }
        const double* inverse = &inverse_[static_cast<std::size_t>(t) * kBlockEntries];
        for (int row = 0; row < kBlock; ++row) {
          double sum = 0.0;
          for (int col = 0; col < kBlock; ++col) sum += inverse[kBlock * row + col] * rest[col];
          swept[kBlock * i + row] = sum;
        }
      }
    }
  if (system_.all_nodes()) return;
  for (std::int64_t t = 0; t < system_.row_nodes(); ++t)
    std::copy_n(swept + kBlock * system_.row_node(t), kBlock, z + kBlock * t);
}

}  // namespace fluxjac
