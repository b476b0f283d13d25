// fluxjac — element meshes (tetrahedra, pyramids, prisms, hexahedra), the input of the median-dual code, and
// the one table of their faces that the dual metrics, the boundary search and the validity checks all use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "types.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// Linear cell types of an element mesh, in the order of the global cell numbering.
enum class CellType { kTetrahedron, kPyramid, kPrism, kHexahedron };
inline constexpr CellType kCellTypes[4] = {CellType::kTetrahedron, CellType::kPyramid, CellType::kPrism,
                                           CellType::kHexahedron};
/// Lower-case names of the cell types, for messages.
inline constexpr NamedValue<CellType> kCellTypeNames[] = {{CellType::kTetrahedron, "tetrahedron"},
                                                          {CellType::kPyramid, "pyramid"},
                                                          {CellType::kPrism, "prism"},
                                                          {CellType::kHexahedron, "hexahedron"}};
constexpr const auto& names_of(CellType) { return kCellTypeNames; }

// ---- the reference cells ----------------------------------------------------------------------------------
inline constexpr int kMaxCellVertices = 8;
inline constexpr int kMaxCellFaces = 6;
inline constexpr int kMaxFaceVertices = 4;

/// The faces of a cell type as loops of local vertices, outward: the right-hand rule gives the normal that
/// leaves the cell (for the CGNS vertex orderings of ElementMesh).
struct CellFaces {
  int n_vertices;
  int n_faces;
  int face_size[kMaxCellFaces];
  int face_loop[kMaxCellFaces][kMaxFaceVertices];
};

inline constexpr CellFaces kTetrahedronFaces{4, 4, {3, 3, 3, 3}, {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}}};
inline constexpr CellFaces kPyramidFaces{
    5, 5, {4, 3, 3, 3, 3}, {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}}};
inline constexpr CellFaces kPrismFaces{
    6, 5, {3, 3, 4, 4, 4}, {{0, 2, 1}, {3, 4, 5}, {0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}}};
inline constexpr CellFaces kHexahedronFaces{
    8, 6, {4, 4, 4, 4, 4, 4}, {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}}};

/// \brief The face table of a cell type.
constexpr const CellFaces& cell_faces(CellType type) {
  switch (type) {
    case CellType::kTetrahedron:
      return kTetrahedronFaces;
    case CellType::kPyramid:
      return kPyramidFaces;
    case CellType::kPrism:
      return kPrismFaces;
    case CellType::kHexahedron:
      break;
  }
  return kHexahedronFaces;
}

/// \brief Number of vertices of a cell type (4, 5, 6, 8).
constexpr int vertex_count(CellType type) { return cell_faces(type).n_vertices; }

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

  /// The vertex list of one cell block.
  std::vector<node_index>& cells(CellType type) {
    return const_cast<std::vector<node_index>&>(static_cast<const ElementMesh&>(*this).cells(type));
  }
  const std::vector<node_index>& cells(CellType type) const {
    switch (type) {
      case CellType::kTetrahedron:
        return tetrahedra;
      case CellType::kPyramid:
        return pyramids;
      case CellType::kPrism:
        return prisms;
      case CellType::kHexahedron:
        break;
    }
    return hexahedra;
  }
  std::int64_t n_cells(CellType type) const {
    return static_cast<std::int64_t>(cells(type).size()) / vertex_count(type);
  }

  std::int64_t n_tetrahedra() const { return n_cells(CellType::kTetrahedron); }
  std::int64_t n_pyramids() const { return n_cells(CellType::kPyramid); }
  std::int64_t n_prisms() const { return n_cells(CellType::kPrism); }
  std::int64_t n_hexahedra() const { return n_cells(CellType::kHexahedron); }
  std::int64_t n_cells() const { return n_tetrahedra() + n_pyramids() + n_prisms() + n_hexahedra(); }
};

/// One cell of an element mesh: its type, global number, place in its block, and vertices.
struct CellRef {
  CellType type;
  std::int64_t id;        ///< global cell number
  std::int64_t in_block;  ///< place in the block of its type
  const node_index* vertices;
};

/// \brief The cell with global number `id` (in [0, n_cells())).
CellRef cell_at(const ElementMesh& elements, std::int64_t id);

/// \brief "cell 12 (prism 3 of its block, nodes 4 9 10 17 22 23)": how messages name a cell.
std::string describe_cell(const CellRef& cell);

/// \brief Calls visit(const CellRef&) for every cell, in global order.
template <class Visit>
void for_each_cell(const ElementMesh& elements, Visit&& visit) {
  std::int64_t id = 0;
  for (const CellType type : kCellTypes) {
    const std::vector<node_index>& vertices = elements.cells(type);
    const int n_vertices = vertex_count(type);
    const std::int64_t count = static_cast<std::int64_t>(vertices.size()) / n_vertices;
    for (std::int64_t c = 0; c < count; ++c, ++id) visit(CellRef{type, id, c, vertices.data() + c * n_vertices});
  }
}

/// \brief Converts prisms listed in VTK_WEDGE order to the CGNS order ElementMesh expects (swaps vertices
/// 1<->2 and 4<->5, which turns the base triangle around and keeps each top vertex above its base vertex).
void reorder_vtk_wedges_to_cgns(std::vector<node_index>& prisms);

/// Largest coordinate magnitude accepted: areas are products of two coordinate differences and are squared
/// on the way to their length, so |x| up to 1e50 keeps every metric far from overflow (and from NaN).
inline constexpr double kMaxCoordinateMagnitude = 1e50;

/// \brief Checks sizes, the node count (ids must fit in 32 bits), node ids in range, no node twice in a cell,
/// finite coordinates within kMaxCoordinateMagnitude; fails with ExitCode::kInvalidInput naming the first
/// offending cell or node. Cheap (one pass over the cells); the shapes of cells are checked by
/// find_invalid_cells, duplicated cells and non-manifold faces by find_element_boundary.
void validate_element_mesh(const ElementMesh& elements);

}  // namespace fluxjac
