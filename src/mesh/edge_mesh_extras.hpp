// fluxjac — optional additions to an edge-mesh file that `fluxjac mesh gen` and `fluxjac mesh dual` write
// and `fluxjac info` reads (docs/formats.md): the boundary-node flags and the element counts it came from.
// They extend docs/design.md, "Edge mesh and state" without changing it: readers that do not know them (`fluxjac run`)
// ignore them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "mesh/element_mesh.hpp"

namespace fluxjac {

namespace h5 {
class File;
}

/// Cells by type.
struct CellCounts {
  std::int64_t tetrahedra = 0, pyramids = 0, prisms = 0, hexahedra = 0;

  std::int64_t total() const { return tetrahedra + pyramids + prisms + hexahedra; }
  /// \brief "648 tetrahedra, 0 pyramids, 216 prisms, 0 hexahedra".
  std::string text() const;
};

/// \brief The cell counts of an element mesh.
CellCounts count_cells(const ElementMesh& elements);

/// What an edge-mesh file may carry beyond docs/design.md, "Edge mesh and state".
struct EdgeMeshExtras {
  std::vector<std::uint8_t> boundary_nodes;  ///< /mesh/boundary_nodes, [n_nodes] or empty when absent
  std::optional<CellCounts> cells;           ///< /mesh attributes n_tetrahedra, n_pyramids, n_prisms, n_hexahedra
  std::string source;                        ///< /mesh attribute "source" (the element mesh), may be empty
  std::string order;                         ///< /mesh attribute "order" (natural, rcm, random), may be empty
};

/// \brief write_edge_mesh, then the extras, then add_more (when given: further groups such as /partition), all in
/// one atomic step (no partial file on failure).
void write_edge_mesh_with_extras(const std::string& path, const EdgeMesh& mesh, const FlowState* state,
                                 const EdgeMeshExtras& extras,
                                 const std::function<void(const h5::File&)>& add_more = {});

/// \brief Writes the extras that are /mesh attributes (cell counts, source, order) into an open file whose /mesh
/// group exists; the boundary flags are a dataset, written by the caller (whole or by rows).
void write_edge_mesh_extra_attributes(const h5::File& file, const EdgeMeshExtras& extras);

/// \brief Reads the extras of an edge-mesh file whose mesh has n_nodes nodes; absent ones stay empty.
/// Error(kInvalidInput) when /mesh/boundary_nodes is not uint8 [n_nodes] or holds values other than 0 and 1.
EdgeMeshExtras read_edge_mesh_extras(const std::string& path, std::int64_t n_nodes);

}  // namespace fluxjac
