// fluxjac — median-dual edge metrics from an element mesh (DESIGN.md 7).
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
#include "types.hpp"

namespace fluxjac {

/// Linear cell types of an element mesh.
enum class CellType { kTetrahedron, kPyramid, kPrism, kHexahedron };

/// \brief Lower-case name of a cell type, for messages.
const char* to_string(CellType type);

/// \brief Number of vertices of a cell type (4, 5, 6, 8).
int vertex_count(CellType type);

/// \brief A 3D element mesh: node coordinates and cells grouped by type.
///
/// Vertex orderings are those of CGNS (TETRA_4, PYRA_5, PENTA_6, HEXA_8), which Gmsh also uses: the first
/// face (0,1,2) of a tetrahedron, (0,1,2,3) of a pyramid and hexahedron and (0,1,2) of a prism, taken by
/// the right-hand rule, points into the cell (towards vertex 3, the apex, or the opposite face); vertex
/// 3+k of a prism and 4+k of a hexahedron sit above vertex k. VTK agrees for tetrahedra, pyramids and
/// hexahedra, but lists the base of a VTK_WEDGE the other way round: convert those with
/// reorder_vtk_wedges_to_cgns(). A cell listed with the wrong orientation has a negative volume and is
/// rejected by name.
///
/// Cells are numbered globally in the order tetrahedra, pyramids, prisms, hexahedra; messages name cells
/// by that number and by their place in their own block.
struct ElementMesh {
  std::int64_t n_nodes = 0;
  std::vector<double> coords;          ///< [n_nodes][3]
  std::vector<node_index> tetrahedra;  ///< [n][4]
  std::vector<node_index> pyramids;    ///< [n][5]
  std::vector<node_index> prisms;      ///< [n][6]
  std::vector<node_index> hexahedra;   ///< [n][8]

  std::int64_t n_tetrahedra() const { return static_cast<std::int64_t>(tetrahedra.size() / 4); }
  std::int64_t n_pyramids() const { return static_cast<std::int64_t>(pyramids.size() / 5); }
  std::int64_t n_prisms() const { return static_cast<std::int64_t>(prisms.size() / 6); }
  std::int64_t n_hexahedra() const { return static_cast<std::int64_t>(hexahedra.size() / 8); }
  std::int64_t n_cells() const { return n_tetrahedra() + n_pyramids() + n_prisms() + n_hexahedra(); }
};

/// \brief Converts prisms listed in VTK_WEDGE order to the CGNS order ElementMesh expects (swaps vertices
/// 1<->2 and 4<->5, which turns the base triangle around and keeps each top vertex above its base vertex).
void reorder_vtk_wedges_to_cgns(std::vector<node_index>& prisms);

/// \brief Checks sizes, the node count (ids must fit in 32 bits), node ids in range and finite
/// coordinates; fails with ExitCode::kInvalidInput naming the first offending cell or node.
void validate_element_mesh(const ElementMesh& elements);

/// \brief Global ids (ascending) of the cells that are inverted, degenerate or tangled: cell volume <= 0,
/// or the dual sub-volume of one of its corners <= 0. Validates the mesh first.
std::vector<std::int64_t> find_invalid_cells(const ElementMesh& elements);

/// \brief Builds the median-dual edge mesh: edges (L, R) with L < R sorted by (L, R), unit normals from L
/// to R, dual-face areas, the coordinates and the dual volumes. Deterministic (independent of the number
/// of OpenMP threads). Fails with ExitCode::kInvalidInput naming the first invalid cell.
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
