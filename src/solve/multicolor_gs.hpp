// fluxjac — multicolor block Gauss-Seidel, FUN3D's point-implicit sweeps (docs/design.md, "The solve"): the nodes
// colored greedily so that no edge joins two nodes of one color, then each sweep updates the colors in turn, every
// node of a color at once: z_i = D_i^-1 (r_i - sum over i's neighbours j of Aoff_ij z_j).
#pragma once

#include <cstdint>
#include <vector>

#include "solve/block_system.hpp"

namespace fluxjac {

/// \brief A coloring of the node graph: nodes of one color share no edge. Greedy in node order (each node takes the
/// lowest color none of its lower-numbered neighbours has), so the same pattern always gives the same colors. On many
/// ranks it colors the row nodes (layout's owned nodes) and leaves the ghosts out.
struct NodeColoring {
  std::vector<std::int64_t> color_start;  ///< [colors + 1]: the colors' ranges in `nodes`
  std::vector<std::int64_t> nodes;        ///< the row nodes' row indices t, grouped by color, ascending in a color
  int colors() const { return static_cast<int>(color_start.size()) - 1; }
};
NodeColoring color_nodes(const JacobianPattern& pattern, const RankLayout* layout = nullptr);

class MulticolorGaussSeidel {
 public:
  /// `inverse`: the inverted diagonal blocks D_i^-1 of M's rows, [row nodes][5][5] (BlockJacobi's); kept by
  /// reference.
  MulticolorGaussSeidel(const BlockSystem& system, const std::vector<double>& inverse, int sweeps);
  /// z = `sweeps` sweeps of M z = r from z = 0 (one sweep of the first color is block Jacobi on it). On many ranks
  /// the sweeps are the rank's own: its ghost nodes' z stays 0, so the ranks' blocks meet as in block Jacobi (PETSc's
  /// local SOR) and the iterations depend on the rank count.
  void apply(const double* r, double* z) const;
  const NodeColoring& coloring() const { return coloring_; }

 private:
  const BlockSystem& system_;
  const std::vector<double>& inverse_;
  int sweeps_;
  NodeColoring coloring_;
  mutable std::vector<double> local_;  ///< many ranks: z over every local node, ghosts 0
};

}  // namespace fluxjac
