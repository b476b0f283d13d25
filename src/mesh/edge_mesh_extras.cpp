#include "mesh/edge_mesh_extras.hpp"

#include <fmt/format.h>

#include "mesh/mesh_io.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using namespace edge_mesh_paths;
/// The /mesh attributes of the cell counts, and the counts they hold.
constexpr const char* kCountAttributes[4] = {"n_tetrahedra", "n_pyramids", "n_prisms", "n_hexahedra"};
constexpr std::int64_t CellCounts::*kCountFields[4] = {&CellCounts::tetrahedra, &CellCounts::pyramids,
                                                       &CellCounts::prisms, &CellCounts::hexahedra};

}  // namespace

std::string CellCounts::text() const {
  return fmt::format("{} tetrahedra, {} pyramids, {} prisms, {} hexahedra", tetrahedra, pyramids, prisms, hexahedra);
}

CellCounts count_cells(const ElementMesh& elements) {
  return {elements.n_tetrahedra(), elements.n_pyramids(), elements.n_prisms(), elements.n_hexahedra()};
}

void write_edge_mesh_with_extras(const std::string& path, const EdgeMesh& mesh, const FlowState* state,
                                 const EdgeMeshExtras& extras, const std::function<void(const h5::File&)>& add_more) {
  if (!extras.boundary_nodes.empty() && static_cast<std::int64_t>(extras.boundary_nodes.size()) != mesh.n_nodes)
    fail(ExitCode::kRuntime, "{}: {} boundary flags for {} nodes", path, extras.boundary_nodes.size(), mesh.n_nodes);
  write_edge_mesh(path, mesh, state, [&](const h5::File& file) {
    if (!extras.boundary_nodes.empty())
      h5::write_raw(file, kBoundaryNodes, H5T_STD_U8LE, H5T_NATIVE_UINT8, extras.boundary_nodes.data(),
                    extras.boundary_nodes.size(), {mesh.n_nodes});
    write_edge_mesh_extra_attributes(file, extras);
    if (add_more) add_more(file);
  });
}

void write_edge_mesh_extra_attributes(const h5::File& file, const EdgeMeshExtras& extras) {
  if (extras.cells)
    for (int i = 0; i < 4; ++i)
      h5::write_attribute(file, kMeshGroup, kCountAttributes[i], (*extras.cells).*kCountFields[i]);
  if (!extras.source.empty()) h5::write_attribute(file, kMeshGroup, "source", extras.source);
  if (!extras.order.empty()) h5::write_attribute(file, kMeshGroup, "order", extras.order);
}

EdgeMeshExtras read_edge_mesh_extras(const std::string& path, std::int64_t n_nodes) {
  const h5::File file = h5::File::open(path);
  EdgeMeshExtras extras;
  if (!h5::exists(file, kMeshGroup)) return extras;
  if (h5::exists(file, kBoundaryNodes)) {
    const h5::DatasetInfo info = h5::describe_dataset(file, kBoundaryNodes);
    h5::require_type(info, {h5::ElementType{h5::TypeClass::kUnsignedInteger, 1}});
    h5::require_shape(info, {n_nodes}, fmt::format("[n_nodes] with n_nodes = {} from /mesh", n_nodes));
    extras.boundary_nodes.resize(static_cast<std::size_t>(n_nodes));
    h5::read_raw(file, info, H5T_NATIVE_UINT8, extras.boundary_nodes.data());
    for (std::int64_t node = 0; node < n_nodes; ++node)
      if (extras.boundary_nodes[node] > 1)
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: flag {} is not 0 or 1", path, kBoundaryNodes, node,
             extras.boundary_nodes[node]);
  }
  if (h5::has_attribute(file, kMeshGroup, kCountAttributes[0])) {
    CellCounts counts;
    for (int i = 0; i < 4; ++i)
      counts.*kCountFields[i] = h5::read_integer_attribute(file, kMeshGroup, kCountAttributes[i]).value_or(0);
    extras.cells = counts;
  }
  extras.source = h5::read_string_attribute(file, kMeshGroup, "source").value_or("");
  extras.order = h5::read_string_attribute(file, kMeshGroup, "order").value_or("");
  return extras;
}

}  // namespace fluxjac
