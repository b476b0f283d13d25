#include "solve/multicolor_gs.hpp"

#include <algorithm>

namespace fluxjac {

NodeColoring color_nodes(const JacobianPattern& pattern) {
  const std::int64_t n = pattern.n_nodes;
  std::vector<int> color(static_cast<std::size_t>(n), -1);
  std::vector<std::int64_t> taken_by;  // taken_by[c] == i: color c is a neighbour's of node i
  int colors = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
      const int c = color[pattern.col_idx[k]];
      if (c >= 0) taken_by[static_cast<std::size_t>(c)] = i;
    }
    int c = 0;
    while (c < colors && taken_by[static_cast<std::size_t>(c)] == i) ++c;
    if (c == colors) {
      ++colors;
      taken_by.push_back(-1);
    }
    color[i] = c;
  }
  NodeColoring coloring;
  coloring.color_start.assign(static_cast<std::size_t>(colors) + 1, 0);
  for (const int c : color) ++coloring.color_start[static_cast<std::size_t>(c) + 1];
  for (int c = 0; c < colors; ++c) coloring.color_start[c + 1] += coloring.color_start[c];
  coloring.nodes.resize(static_cast<std::size_t>(n));
  std::vector<std::int64_t> next(coloring.color_start.begin(), coloring.color_start.end() - 1);
  for (std::int64_t i = 0; i < n; ++i) coloring.nodes[next[color[i]]++] = i;
  return coloring;
}

MulticolorGaussSeidel::MulticolorGaussSeidel(const BlockSystem& system, const std::vector<double>& inverse, int sweeps)
    : system_(system), inverse_(inverse), sweeps_(sweeps), coloring_(color_nodes(system.pattern)) {}

void MulticolorGaussSeidel::apply(const double* r, double* z) const {
  const JacobianPattern& pattern = system_.pattern;
  std::fill(z, z + system_.rows(), 0.0);
  for (int sweep = 0; sweep < sweeps_; ++sweep)
    for (int c = 0; c < coloring_.colors(); ++c) {
      const std::int64_t first = coloring_.color_start[c], end = coloring_.color_start[c + 1];
#pragma omp parallel for schedule(static)
      for (std::int64_t at = first; at < end; ++at) {
        const std::int64_t i = coloring_.nodes[at];
        double rest[kBlock];
        for (int row = 0; row < kBlock; ++row) rest[row] = r[kBlock * i + row];
        for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
          const double* zj = z + kBlock * static_cast<std::int64_t>(pattern.col_idx[k]);
          for (int row = 0; row < kBlock; ++row)
            for (int col = 0; col < kBlock; ++col) rest[row] -= system_.aoff(k, kBlock * row + col) * zj[col];
        }
        const double* inverse = &inverse_[static_cast<std::size_t>(i) * kBlockEntries];
        for (int row = 0; row < kBlock; ++row) {
          double sum = 0.0;
          for (int col = 0; col < kBlock; ++col) sum += inverse[kBlock * row + col] * rest[col];
          z[kBlock * i + row] = sum;
        }
      }
    }
}

}  // namespace fluxjac
