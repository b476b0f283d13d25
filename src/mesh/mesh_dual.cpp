#include "mesh/mesh_dual.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "mesh/element_boundary.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// Runs a check of the element mesh; its error gets the file name in front.
template <class Step>
auto naming_the_file(const std::string& path, Step&& step) {
  try {
    return step();
  } catch (const Error& error) {
    throw Error(path + ": " + error.what(), error.code());
  }
}

}  // namespace

DualState choose_dual_state(const std::optional<DualState>& requested, const ElementMeshFile& file,
                            const std::string& path) {
  const bool file_has_state = file.state.has_value();
  const DualState state = requested ? *requested : file_has_state ? DualState::kInput : DualState::kFreestream;
  if (state == DualState::kInput && !file_has_state)
    fail(ExitCode::kUsage,
         "{}: --state input: the file has no /elements/state/Q (give scripts/import_mesh.py --state-field, or use "
         "--state freestream)",
         path);
  return state;
}

DualMesh make_dual_mesh(ElementMeshFile input, const std::string& path, const DualMeshSettings& settings,
                        const MeshProgress& progress) {
  if (settings.state == DualState::kFreestream) validate_freestream_conditions(settings.freestream);
  choose_dual_state(settings.state, input, path);  // the input state must be there
  DualMesh dual;
  dual.extras.cells = count_cells(input.elements);
  dual.extras.source = path;
  dual.extras.order = to_string(settings.order);

  report_stage(progress, "boundary", 0.1);
  ElementBoundary boundary = naming_the_file(path, [&] { return find_element_boundary(input.elements); });
  dual.n_boundary_nodes = boundary.n_boundary_nodes;
  dual.extras.boundary_nodes = std::move(boundary.on_boundary);

  report_stage(progress, "dual metrics", 0.2);
  dual.mesh = naming_the_file(path, [&] { return build_median_dual(input.elements); });
  input.elements = ElementMesh{};

  // ---- ordering (the state from the file travels with its nodes) -----------------------------------------
  report_stage(progress, "ordering", 0.7);
  if (settings.state == DualState::kInput) dual.state = std::move(input.state);
  reorder_nodes(dual.mesh, dual.state ? &*dual.state : nullptr, &dual.extras.boundary_nodes, settings.order,
                settings.seed);

  report_stage(progress, "state", 0.8);
  if (settings.state == DualState::kFreestream)
    dual.state = uniform_freestream_state(dual.mesh.n_nodes, settings.freestream);
  std::vector<std::uint8_t> has_edge(static_cast<std::size_t>(dual.mesh.n_nodes), 0);
  for (const node_index node : dual.mesh.edges) has_edge[node] = 1;
  dual.n_isolated_nodes = std::count(has_edge.begin(), has_edge.end(), std::uint8_t{0});
  dual.closure = summarize_dual_closure(dual.mesh, dual.extras.boundary_nodes);
  return dual;
}

void write_dual_mesh(const std::string& path, const DualMesh& dual) {
  write_edge_mesh_with_extras(path, dual.mesh, dual.state ? &*dual.state : nullptr, dual.extras);
}

}  // namespace fluxjac
