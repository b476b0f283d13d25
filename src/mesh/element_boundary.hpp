// fluxjac — which nodes of an element mesh lie on its boundary, where median-dual cells are open, and the
// face topology checks that need the same face matching: duplicated cells and non-manifold faces.
//
// The edge-mesh format has no boundary faces, so the dual cell of a boundary node does not close by edges
// alone; closure checks (`fluxjac info`, the tests) must skip those nodes. A cell face that no other cell
// shares is a boundary face; its nodes are boundary nodes. A face that two cells see differently (a
// quadrilateral against two triangles: a non-conforming mesh) counts as boundary on both sides. A face that
// three or more cells share, or a cell given twice, would be taken for interior and leave dual cells open
// without a word, so both are errors.
#pragma once

#include <cstdint>
#include <vector>

#include "mesh/element_mesh.hpp"

namespace fluxjac {

/// Boundary of an element mesh.
struct ElementBoundary {
  std::vector<std::uint8_t> on_boundary;  ///< [n_nodes]: 1 for nodes of a boundary face, else 0
  std::int64_t n_boundary_faces = 0;      ///< faces that belong to one cell only
  std::int64_t n_boundary_nodes = 0;
};

/// \brief Finds the faces that belong to exactly one cell and flags their nodes. Fails with
/// ExitCode::kInvalidInput, naming the cells, when two cells have the same nodes (in any order) or a face
/// belongs to more than two cells. Deterministic; O(faces) memory (24 bytes per face). Expects a mesh that
/// passed validate_element_mesh.
ElementBoundary find_element_boundary(const ElementMesh& elements);

}  // namespace fluxjac
