#include "mesh/element_mesh.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "util/error.hpp"

namespace fluxjac {
namespace {

/// The first cell that uses a node, if any.
std::optional<CellRef> first_cell_with(const ElementMesh& elements, node_index node) {
  std::optional<CellRef> found;
  for_each_cell(elements, [&](const CellRef& cell) {
    if (found) return;
    for (int v = 0; v < vertex_count(cell.type); ++v)
      if (cell.vertices[v] == node) found = cell;
  });
  return found;
}

}  // namespace

CellRef cell_at(const ElementMesh& elements, std::int64_t id) {
  std::int64_t first = 0;
  for (const CellType type : kCellTypes) {
    const std::int64_t count = elements.n_cells(type);
    if (id < first + count)
      return {type, id, id - first, elements.cells(type).data() + (id - first) * vertex_count(type)};
    first += count;
  }
  fail(ExitCode::kRuntime, "element mesh: cell {} does not exist ({} cells)", id, elements.n_cells());
}

std::string describe_cell(const CellRef& cell) {
  std::string nodes;
  for (int v = 0; v < vertex_count(cell.type); ++v) nodes += (v ? " " : "") + std::to_string(cell.vertices[v]);
  return fmt::format("cell {} ({} {} of its block, nodes {})", cell.id, to_string(cell.type), cell.in_block, nodes);
}

void reorder_vtk_wedges_to_cgns(std::vector<node_index>& prisms) {
  for (std::size_t c = 0; c + 6 <= prisms.size(); c += 6) {
    std::swap(prisms[c + 1], prisms[c + 2]);
    std::swap(prisms[c + 4], prisms[c + 5]);
  }
}

void validate_element_mesh(const ElementMesh& elements) {
  if (elements.n_nodes < 0 || elements.n_nodes > std::numeric_limits<node_index>::max())
    fail(ExitCode::kInvalidInput, "element mesh: {} nodes; node ids must fit in 32 bits (at most {} nodes)",
         elements.n_nodes, std::numeric_limits<node_index>::max());
  if (static_cast<std::int64_t>(elements.coords.size()) != 3 * elements.n_nodes)
    fail(ExitCode::kInvalidInput, "element mesh: {} coordinates for {} nodes (expected 3 per node)",
         elements.coords.size(), elements.n_nodes);
  for (const CellType type : kCellTypes) {
    const int n_vertices = vertex_count(type);
    if (elements.cells(type).size() % n_vertices != 0)
      fail(ExitCode::kInvalidInput, "element mesh: the {} block has {} node ids, not a multiple of {}", to_string(type),
           elements.cells(type).size(), n_vertices);
  }

  // ---- cells: node ids in range, each node once ------------------------------------------------------------
  for_each_cell(elements, [&](const CellRef& cell) {
    const int n_vertices = vertex_count(cell.type);
    for (int v = 0; v < n_vertices; ++v) {
      const node_index node = cell.vertices[v];
      if (node < 0 || node >= elements.n_nodes)
        fail(ExitCode::kInvalidInput, "element mesh: {} has node id {}, outside [0, {})", describe_cell(cell), node,
             elements.n_nodes);
      for (int w = 0; w < v; ++w)
        if (cell.vertices[w] == node)
          fail(ExitCode::kInvalidInput,
               "element mesh: {} lists node {} twice; collapsed cells are not supported (give them their proper type)",
               describe_cell(cell), node);
    }
  });

  // ---- coordinates: finite and small enough that volumes and areas cannot overflow --------------------------
  for (std::int64_t i = 0; i < 3 * elements.n_nodes; ++i) {
    const double x = elements.coords[i];
    if (std::isfinite(x) && std::abs(x) <= kMaxCoordinateMagnitude) continue;
    const node_index node = static_cast<node_index>(i / 3);
    const double* p = &elements.coords[3 * static_cast<std::int64_t>(node)];
    const std::optional<CellRef> cell = first_cell_with(elements, node);
    fail(ExitCode::kInvalidInput,
         "element mesh: {}node {} is at ({:.6g}, {:.6g}, {:.6g}): coordinates must be finite and within +-{:.0e} "
         "(volumes and areas of larger ones overflow; rescale the mesh)",
         cell ? describe_cell(*cell) + ": " : std::string(), node, p[0], p[1], p[2], kMaxCoordinateMagnitude);
  }
}

}  // namespace fluxjac
