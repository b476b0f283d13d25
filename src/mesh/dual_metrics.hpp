// fluxjac — median-dual edge metrics from an element mesh (docs/design.md, "Meshes").
//
// The dual cell of a node is bounded, inside every element around it, by triangles (edge midpoint, face
// centroid, cell centroid): for a cell edge (a, b) the two cell faces that share the edge each contribute
// one such triangle to the dual face between a and b. Face and cell centroids are vertex averages, so a
// quadrilateral face is split the same way by both cells that share it and interior dual cells close
// exactly (up to rounding). Dual volumes come from the same surfaces: every cell face is fanned into
// triangles (face centroid, v_i, v_i+1), each triangle closes a tetrahedron with the cell centroid, and
// half of that tetrahedron goes to each of v_i and v_i+1 (the divergence theorem over the dual sub-cell).
//
// This is the code real meshes (Gmsh, SU2, CGNS, VTK via scripts/import_mesh.py) come through as well as
// the box generator, so it supports tetrahedra, pyramids, prisms and hexahedra.
#pragma once

#include <cstdint>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "mesh/element_mesh.hpp"
#include "types.hpp"

namespace fluxjac {

/// \brief Global ids (ascending) of the cells that are inverted, degenerate, concave or tangled: cell volume
/// <= 0, a corner Jacobian <= 0 (at a corner where three faces meet: the determinant of its three edges, in
/// their order around the corner), or the dual sub-volume of a corner <= 0. Validates the mesh first.
std::vector<std::int64_t> find_invalid_cells(const ElementMesh& elements);

/// \brief Builds the median-dual edge mesh: edges (L, R) with L < R sorted by (L, R), unit normals from L
/// to R, dual-face areas, the coordinates and the dual volumes. Deterministic (independent of the number
/// of OpenMP threads). Fails with ExitCode::kInvalidInput naming the first invalid cell. Cells given twice
/// or faces shared by three cells would pass unseen (their faces count as interior): find_element_boundary
/// rejects those.
EdgeMesh build_median_dual(const ElementMesh& elements);

/// \brief Per node, the sum of its outward dual-face area vectors:
/// sum_{e: L(e)=i} A_e n_e - sum_{e: R(e)=i} A_e n_e, as [n_nodes][3]. Zero (to rounding) for every node
/// whose dual cell is closed by edges alone, that is every node not on the mesh boundary.
std::vector<double> dual_closure_vectors(const EdgeMesh& mesh);

/// Largest dual-cell closure defect over the nodes checked.
struct DualClosureSummary {
  double max_closure = 0.0;      ///< max |closure vector| over checked nodes
  double mean_area = 0.0;        ///< mean dual-face area of the mesh, the scale of the defect
  double max_relative = 0.0;     ///< max_closure / mean_area
  std::int64_t worst_node = -1;  ///< node with the largest defect (-1 if none checked)
  std::int64_t nodes_checked = 0;
};

/// \brief Closure defect over the nodes with skip_node[i] == 0 (pass the boundary flags: boundary dual
/// cells are open, there are no boundary faces in an EdgeMesh). An empty skip_node checks every node.
DualClosureSummary summarize_dual_closure(const EdgeMesh& mesh, const std::vector<std::uint8_t>& skip_node);

}  // namespace fluxjac
