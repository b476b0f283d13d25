// fluxjac — reading, validating and writing element-mesh files, the input of `fluxjac mesh dual`
// (docs/formats.md). scripts/import_mesh.py writes them from whatever meshio reads (Gmsh, SU2, CGNS, VTK, ...).
#pragma once

#include <optional>
#include <string>

#include "mesh/edge_mesh.hpp"
#include "mesh/element_mesh.hpp"

namespace fluxjac {

/// Root attribute `format` of element-mesh files.
inline constexpr const char* kElementMeshFormat = "fluxjac-element-mesh";
/// Root attribute `version` of element-mesh files.
inline constexpr int kElementMeshFormatVersion = 1;

/// An element mesh as stored: the cells and, optionally, a flow state at its nodes.
struct ElementMeshFile {
  ElementMesh elements;
  std::optional<FlowState> state;  ///< /elements/state/Q, when the file has one
};

/// \brief The dataset name of a cell block under /elements ("tetrahedra", "pyramids", "prisms", "hexahedra").
const char* element_block_name(CellType type);

/// \brief Reads and validates an element-mesh file: root attributes, /elements/coords (float64 [n, 3], finite),
/// the cell blocks (int32 or int64 [n_cells, 4|5|6|8], node ids in range, no node twice in a cell; any block
/// may be absent but there must be at least one cell) and the optional state (float64 [n_nodes, 5], gamma 1.4,
/// finite, positive density and pressure), with validate_element_mesh. Cell shapes (inverted, concave, tangled
/// cells) are checked later by build_median_dual, duplicated cells and non-manifold faces by
/// find_element_boundary. Throws Error(kInvalidInput) with one line naming the file, dataset and first bad index.
ElementMeshFile read_element_mesh(const std::string& path);

/// \brief Writes an element mesh (and state when not null) atomically: cells as int32, empty blocks left out.
/// Only array sizes are checked (Error(kRuntime) when inconsistent).
void write_element_mesh(const std::string& path, const ElementMesh& elements, const FlowState* state);

}  // namespace fluxjac
