// fluxjac — the edge mesh and flow state every variant consumes (docs/design.md, "Edge mesh and state").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "types.hpp"

namespace fluxjac {

/// \brief Unstructured edge mesh with median-dual face metrics.
struct EdgeMesh {
  std::int64_t n_nodes = 0;
  std::vector<node_index> edges;  ///< [n_edges][2]: (L, R), 0-based
  std::vector<double> normals;    ///< [n_edges][3]: unit normal of the dual face, L to R
  std::vector<double> areas;      ///< [n_edges]: dual-face area, > 0
  std::vector<double> coords;     ///< [n_nodes][3], optional (empty when absent)
  std::vector<double> volumes;    ///< [n_nodes], optional (empty when absent)

  edge_index n_edges() const { return static_cast<edge_index>(areas.size()); }
  node_index left(edge_index e) const { return edges[2 * e]; }
  node_index right(edge_index e) const { return edges[2 * e + 1]; }
};

/// \brief Conservative flow state (rho, rho u, rho v, rho w, rho E) per node.
struct FlowState {
  std::vector<double> Q;  ///< [n_nodes][5]
  double gamma = 1.4;

  std::int64_t n_nodes() const { return static_cast<std::int64_t>(Q.size() / kBlock); }
};

}  // namespace fluxjac
