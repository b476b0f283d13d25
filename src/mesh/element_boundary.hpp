// fluxjac — which nodes of an element mesh lie on its boundary, where median-dual cells are open.
//
// The edge-mesh format has no boundary faces, so the dual cell of a boundary node does not close by edges
// alone; closure checks (`fluxjac info`, the tests) must skip those nodes. A cell face that no other cell
// shares is a boundary face; its nodes are boundary nodes. A face that two cells see differently (a
// quadrilateral against two triangles: a non-conforming mesh) counts as boundary on both sides.
#pragma once

#include <cstdint>
#include <vector>

#include "mesh/dual_metrics.hpp"

namespace fluxjac {

/// Boundary of an element mesh.
struct ElementBoundary {
  std::vector<std::uint8_t> on_boundary;  ///< [n_nodes]: 1 for nodes of a boundary face, else 0
  std::int64_t n_boundary_faces = 0;      ///< faces that belong to one cell only
  std::int64_t n_boundary_nodes = 0;
};

/// \brief Finds the faces that belong to exactly one cell and flags their nodes. Deterministic; O(faces)
/// memory (12 bytes per face). Expects a mesh that passed validate_element_mesh.
ElementBoundary find_element_boundary(const ElementMesh& elements);

}  // namespace fluxjac
