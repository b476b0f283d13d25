#include "mesh/element_io.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "mesh/mesh_io.hpp"
#include "physics/gas.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

constexpr const char* kElementsGroup = "/elements";
constexpr const char* kCoords = "/elements/coords";
constexpr const char* kStateGroup = "/elements/state";
constexpr const char* kState = "/elements/state/Q";

std::string block_path(CellType type) { return std::string(kElementsGroup) + "/" + element_block_name(type); }

/// Reads a cell block (int32 or int64) and checks its node ids against n_nodes before narrowing them.
template <class Index>
std::vector<node_index> read_cell_ids(const h5::File& file, const h5::DatasetInfo& info, std::int64_t n_nodes) {
  const std::vector<Index> ids = h5::read<Index>(file, info);
  const std::int64_t per_cell = info.shape[1];
  std::vector<node_index> narrowed(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int64_t id = ids[i];
    if (id < 0 || id >= n_nodes)
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: node id {} is out of range [0, {}) (n_nodes = {} from {}; ids are 0-based)", file.name(),
           info.path, static_cast<std::int64_t>(i) / per_cell, id, n_nodes, n_nodes, kCoords);
    narrowed[i] = static_cast<node_index>(id);
  }
  return narrowed;
}

std::string listing_of_elements_group(const h5::File& file) {
  std::string names;
  const h5::Group group(H5Gopen2(file.id(), kElementsGroup, H5P_DEFAULT));
  if (!group.valid()) return names;
  H5Literate(
      group.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        std::string& list = *static_cast<std::string*>(data);
        list += (list.empty() ? "" : ", ") + std::string(name);
        return 0;
      },
      &names);
  return names;
}

FlowState read_state(const h5::File& file, std::int64_t n_nodes) {
  require_state_gamma(file, kStateGroup);
  const h5::DatasetInfo info = h5::describe_dataset(file, kState);
  h5::require_type(info, {h5::kFloat64});
  h5::require_shape(info, {n_nodes, kBlock}, fmt::format("[n_nodes, 5] with n_nodes = {} from {}", n_nodes, kCoords));
  FlowState state;
  state.gamma = kGamma;
  state.Q = h5::read<double>(file, info);
  check_state_values(file.name(), kState, state.Q);
  return state;
}

}  // namespace

const char* element_block_name(CellType type) {
  switch (type) {
    case CellType::kTetrahedron:
      return "tetrahedra";
    case CellType::kPyramid:
      return "pyramids";
    case CellType::kPrism:
      return "prisms";
    case CellType::kHexahedron:
      return "hexahedra";
  }
  return "cells";
}

ElementMeshFile read_element_mesh(const std::string& path) {
  const h5::File file = h5::File::open(path);
  h5::require_format(file, kElementMeshFormat, kElementMeshFormatVersion);
  if (!h5::exists(file, kElementsGroup))
    fail(ExitCode::kInvalidInput, "{}: {}: group not found (no element mesh in this file)", path, kElementsGroup);

  // ---- node coordinates --------------------------------------------------------------------------------
  const h5::DatasetInfo coords = h5::describe_dataset(file, kCoords);
  h5::require_type(coords, {h5::kFloat64});
  h5::require_shape(coords, {h5::kAnyExtent, 3}, "[n_nodes, 3]: x, y, z per node");
  const std::int64_t n_nodes = coords.shape[0];
  if (n_nodes == 0) fail(ExitCode::kInvalidInput, "{}: {}: the mesh has no nodes", path, kCoords);
  constexpr std::int64_t kMaxNodes = std::numeric_limits<node_index>::max();
  if (n_nodes > kMaxNodes)
    fail(ExitCode::kInvalidInput, "{}: {}: {} nodes, more than the {} that int32 node indices can address", path,
         kCoords, n_nodes, kMaxNodes);

  // ---- cell blocks: types and shapes first, then the values ------------------------------------------
  ElementMeshFile result;
  ElementMesh& elements = result.elements;
  elements.n_nodes = n_nodes;
  std::optional<h5::DatasetInfo> blocks[4];
  for (int b = 0; b < 4; ++b) {
    const std::string block = block_path(kCellTypes[b]);
    if (!h5::exists(file, block)) continue;
    blocks[b] = h5::describe_dataset(file, block);
    h5::require_type(*blocks[b], {h5::kInt32, h5::kInt64});
    const int n_vertices = vertex_count(kCellTypes[b]);
    h5::require_shape(*blocks[b], {h5::kAnyExtent, n_vertices},
                      fmt::format("[n_{}, {}]: the {} node ids of each {} in CGNS order",
                                  element_block_name(kCellTypes[b]), n_vertices, n_vertices, to_string(kCellTypes[b])));
  }
  std::int64_t n_cells = 0;
  for (const auto& block : blocks) n_cells += block ? block->shape[0] : 0;
  if (n_cells == 0) {
    const std::string found = listing_of_elements_group(file);
    fail(ExitCode::kInvalidInput,
         "{}: {}: the mesh has no cells: expected at least one non-empty dataset among tetrahedra, pyramids, prisms "
         "and hexahedra (found: {})",
         path, kElementsGroup, found.empty() ? "nothing" : found);
  }
  const std::optional<h5::DatasetInfo> state =
      h5::exists(file, kState) ? std::optional<h5::DatasetInfo>(h5::describe_dataset(file, kState)) : std::nullopt;
  if (!state && h5::exists(file, kStateGroup))
    fail(ExitCode::kInvalidInput, "{}: {}: dataset not found (the group {} exists without it)", path, kState,
         kStateGroup);

  elements.coords = h5::read<double>(file, coords);
  for (int b = 0; b < 4; ++b) {
    if (!blocks[b]) continue;
    elements.cells(kCellTypes[b]) = blocks[b]->type == h5::kInt32
                                        ? read_cell_ids<std::int32_t>(file, *blocks[b], n_nodes)
                                        : read_cell_ids<std::int64_t>(file, *blocks[b], n_nodes);
  }
  try {
    validate_element_mesh(elements);  // finite coordinates, no node twice in a cell
  } catch (const Error& error) {
    throw Error(path + ": " + error.what(), error.code());
  }
  if (state) result.state = read_state(file, n_nodes);
  return result;
}

void write_element_mesh(const std::string& path, const ElementMesh& elements, const FlowState* state) {
  bool consistent = elements.n_nodes > 0 && elements.coords.size() == 3 * static_cast<std::size_t>(elements.n_nodes) &&
                    (!state || state->n_nodes() == elements.n_nodes);
  for (const CellType type : kCellTypes)
    consistent = consistent && elements.cells(type).size() % vertex_count(type) == 0;
  if (!consistent)
    fail(ExitCode::kRuntime, "{}: cannot write an inconsistent element mesh ({} nodes, {} coordinates)", path,
         elements.n_nodes, elements.coords.size());
  AtomicOutput output(path);
  {
    h5::File file = h5::File::create(output.temporary_path(), path);
    h5::write_format(file, kElementMeshFormat, kElementMeshFormatVersion);
    h5::write(file, kCoords, elements.coords, {elements.n_nodes, 3});
    for (const CellType type : kCellTypes) {
      const std::vector<node_index>& block = elements.cells(type);
      const std::int64_t n_vertices = vertex_count(type);
      if (!block.empty())
        h5::write(file, block_path(type), block, {static_cast<std::int64_t>(block.size()) / n_vertices, n_vertices});
    }
    if (state) {
      h5::create_group(file, kStateGroup);
      h5::write_attribute(file, kStateGroup, "gamma", state->gamma);
      h5::write(file, kState, state->Q, {state->n_nodes(), kBlock});
    }
    file.close();
  }
  output.commit();
}

}  // namespace fluxjac
