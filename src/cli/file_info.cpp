#include "cli/file_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "jacobian/jacobian_io.hpp"
#include "mesh/dual_metrics.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/element_boundary.hpp"
#include "mesh/element_io.hpp"
#include "mesh/mesh_io.hpp"
#include "partition/partition.hpp"
#include "partition/partition_io.hpp"
#include "physics/gas.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

/// Smallest and largest of a series.
struct Range {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double value) {
    min = std::min(min, value);
    max = std::max(max, value);
  }
};

void add_line(std::string& text, std::string_view label, std::string_view value) {
  text += fmt::format("  {:<22}{}\n", label, value);
}

std::string range_text(const Range& range) { return fmt::format("min {:.6g}  max {:.6g}", range.min, range.max); }

void describe_mesh(std::string& text, const EdgeMesh& mesh) {
  const edge_index n_edges = mesh.n_edges();
  add_line(text, "nodes", std::to_string(mesh.n_nodes));
  add_line(
      text, "edges",
      fmt::format("{} ({:.3g} per node)", n_edges, static_cast<double>(n_edges) / static_cast<double>(mesh.n_nodes)));
  add_line(
      text, "optional datasets",
      fmt::format("coords {}, volumes {}", mesh.coords.empty() ? "no" : "yes", mesh.volumes.empty() ? "no" : "yes"));
  Range areas;
  double area_sum = 0.0;
  for (const double area : mesh.areas) {
    areas.add(area);
    area_sum += area;
  }
  add_line(text, "dual-face areas", fmt::format("{}  sum {:.6g}", range_text(areas), area_sum));
  if (!mesh.volumes.empty()) {
    double volume_sum = 0.0;
    for (const double volume : mesh.volumes) volume_sum += volume;
    add_line(text, "dual volumes", fmt::format("sum {:.6g}", volume_sum));
  }
  std::int64_t bandwidth = 0;
  double distance_sum = 0.0;
  for (edge_index e = 0; e < n_edges; ++e) {
    const std::int64_t distance = std::llabs(static_cast<long long>(mesh.left(e)) - mesh.right(e));
    bandwidth = std::max(bandwidth, distance);
    distance_sum += static_cast<double>(distance);
  }
  add_line(text, "ordering",
           fmt::format("bandwidth max |L-R| = {}, mean |L-R| = {:.4g}", bandwidth,
                       distance_sum / static_cast<double>(n_edges)));
}

/// Closure of the dual cells: over interior nodes when the boundary is known, else over all nodes (then
/// boundary nodes dominate: their dual cells are open by design, so the number is a scale, not an error).
void describe_closure(std::string& text, const EdgeMesh& mesh, const std::vector<std::uint8_t>& boundary_nodes) {
  const DualClosureSummary closure = summarize_dual_closure(mesh, boundary_nodes);
  if (!boundary_nodes.empty()) {
    if (closure.nodes_checked == 0) {
      add_line(text, "dual closure", "no interior nodes (every node is on the boundary)");
      return;
    }
    add_line(text, "dual closure",
             fmt::format("max |sum A n| = {:.3g} x mean face area over {} interior nodes (worst node {}); {} boundary "
                         "nodes are open by design",
                         closure.max_relative, closure.nodes_checked, closure.worst_node,
                         mesh.n_nodes - closure.nodes_checked));
    return;
  }
  add_line(text, "dual closure",
           fmt::format("max |sum A n| = {:.3g} x mean face area over all {} nodes (worst node {}), open "
                       "boundary dual cells included (no /mesh/boundary_nodes in this file)",
                       closure.max_relative, closure.nodes_checked, closure.worst_node));
}

void describe_state(std::string& text, const FlowState& state) {
  Range density, pressure, mach;
  for (std::int64_t node = 0; node < state.n_nodes(); ++node) {
    const Primitive<double> q = primitive_from_conservative(&state.Q[kBlock * node]);
    const double speed = std::sqrt((q.u * q.u + q.v * q.v) + q.w * q.w);
    density.add(q.rho);
    pressure.add(q.p);
    mach.add(speed / std::sqrt(kGamma * q.p / q.rho));
  }
  add_line(text, "state", fmt::format("{} nodes, gamma {}", state.n_nodes(), state.gamma));
  add_line(text, "  density", range_text(density));
  add_line(text, "  pressure", range_text(pressure));
  add_line(text, "  Mach number", range_text(mach));
}

/// The partition of a partitioned file, checked against its mesh.
void describe_partition(std::string& text, const std::string& path, const EdgeMesh& mesh) {
  const PartitionLayout layout = read_partition(path);
  check_partition_against_mesh(path, mesh, layout);
  const PartitionStatistics statistics = partition_statistics(mesh, layout);
  const std::optional<std::string> method = [&] {
    const h5::File file = h5::File::open(path);
    return h5::read_string_attribute(file, kPartitionGroup, "method");
  }();
  add_line(text, "partition", fmt::format("{} parts ({})", layout.parts, method.value_or("method not recorded")));
  Range ghosts;
  for (const PartStatistics& part : statistics.parts) ghosts.add(static_cast<double>(part.ghosts));
  add_line(text, "  edge cut",
           fmt::format("{} ({:.2f}% of the edges)", statistics.edge_cut,
                       100.0 * static_cast<double>(statistics.edge_cut) / static_cast<double>(mesh.n_edges())));
  add_line(text, "  ghosts", fmt::format("{} in all, per part {}", statistics.total_ghosts, range_text(ghosts)));
  add_line(text, "  imbalance",
           fmt::format("max/mean: nodes {:.3f}, incident edges {:.3f}; {} empty parts", statistics.node_imbalance,
                       statistics.edge_imbalance, statistics.empty_parts));
}

std::string describe_mesh_file(const std::string& path, bool has_mesh, bool has_state) {
  std::string text =
      fmt::format("{}: fluxjac edge mesh (format {} version {})\n", path, kEdgeMeshFormat, kEdgeMeshFormatVersion);
  std::optional<FlowState> state;
  if (has_mesh) {
    const EdgeMesh mesh = read_edge_mesh(path);
    // The state is read as `run` reads it, right after the mesh and before the summaries that take memory per node:
    // a state that does not fit the mesh is reported as run reports it, not as the memory those summaries lacked.
    if (has_state) state = read_flow_state(path, mesh.n_nodes);
    const EdgeMeshExtras extras = read_edge_mesh_extras(path, mesh.n_nodes);
    if (extras.cells) add_line(text, "made from", extras.cells->text());
    if (!extras.source.empty()) add_line(text, "element mesh", extras.source);
    describe_mesh(text, mesh);
    if (!extras.order.empty()) add_line(text, "  node order", extras.order);
    describe_closure(text, mesh, extras.boundary_nodes);
    if (has_partition(path)) describe_partition(text, path, mesh);
  } else {
    add_line(text, "mesh", "none (a state-only file)");
  }
  if (has_state && !state) state = read_flow_state(path, -1);  // a state-only file
  if (state)
    describe_state(text, *state);
  else
    add_line(text, "state", "none in this file (give one with --state)");
  return text;
}

std::string describe_element_mesh_file(const std::string& path) {
  const ElementMeshFile input = read_element_mesh(path);
  const ElementMesh& elements = input.elements;
  std::string text = fmt::format("{}: fluxjac element mesh (format {} version {})\n", path, kElementMeshFormat,
                                 kElementMeshFormatVersion);
  add_line(text, "cells", fmt::format("{}: {}", elements.n_cells(), count_cells(elements).text()));
  ElementBoundary boundary;
  try {
    boundary = find_element_boundary(elements);
  } catch (const Error& error) {
    throw Error(path + ": " + error.what(), error.code());
  }
  add_line(text, "boundary", fmt::format("{} faces, {} nodes", boundary.n_boundary_faces, boundary.n_boundary_nodes));
  const std::vector<std::int64_t> invalid = find_invalid_cells(elements);
  if (invalid.empty()) {
    // The edge mesh `fluxjac mesh dual --order natural` would write.
    text += "  median dual (as 'fluxjac mesh dual --order natural' makes it):\n";
    const EdgeMesh mesh = build_median_dual(elements);
    describe_mesh(text, mesh);
    describe_closure(text, mesh, boundary.on_boundary);
  } else {
    add_line(text, "nodes", std::to_string(elements.n_nodes));
    add_line(text, "INVALID cells",
             fmt::format("{} inverted, degenerate, concave or tangled (first: cell {}); 'fluxjac mesh dual' names them",
                         invalid.size(), invalid.front()));
  }
  if (input.state)
    describe_state(text, *input.state);
  else
    add_line(text, "state", "none ('fluxjac mesh dual' then stores a freestream)");
  return text;
}

std::string describe_jacobian_file(const std::string& path) {
  const StoredJacobian stored = read_jacobian(path);
  const JacobianPattern& pattern = stored.pattern;
  std::string text =
      fmt::format("{}: fluxjac Jacobian (format {} version {})\n", path, kJacobianFormat, stored.info.format_version);
  add_line(text, "orientation",
           stored.info.orientation == Orientation::kA ? "A = dR/dQ" : "A^T (the transpose of dR/dQ: adjoint)");
  add_line(text, "Aoff precision",
           stored.info.aoff_precision == AoffPrecision::kBf16
               ? "bf16 (assembled in bfloat16; each float32 of /jacobian/aoff holds one exactly)"
               : "f32");
  add_line(text, "nodes (block rows)", std::to_string(pattern.n_nodes));
  add_line(text, "off-diagonal blocks",
           fmt::format("{} ({:.3g} per row)", pattern.nnz(),
                       static_cast<double>(pattern.nnz()) / static_cast<double>(pattern.n_nodes)));
  const auto or_unknown = [](const std::string& value) {
    return value.empty() ? std::string("(not recorded)") : value;
  };
  add_line(text, "variant", or_unknown(stored.info.variant));
  add_line(text, "mesh file", or_unknown(stored.info.mesh_file));
  add_line(text, "state file", or_unknown(stored.info.state_file));
  add_line(text, "written by fluxjac", or_unknown(stored.info.version));
  double adiag_max = 0.0;
  for (const double value : stored.jacobian.adiag) adiag_max = std::max(adiag_max, std::abs(value));
  float aoff_max = 0.0f;
  for (const float value : stored.jacobian.aoff) aoff_max = std::max(aoff_max, std::abs(value));
  add_line(text, "max |Adiag|", fmt::format("{:.6g}", adiag_max));
  add_line(text, "max |Aoff|", fmt::format("{:.6g}", aoff_max));
  return text;
}

}  // namespace

std::string describe_file(const std::string& path) {
  std::optional<std::string> format;
  bool has_mesh = false;
  bool has_state = false;
  {
    const h5::File file = h5::File::open(path);
    format = h5::read_format(file);
    has_mesh = h5::exists(file, "/mesh");
    has_state = h5::exists(file, "/state");
  }
  if (format && *format == kEdgeMeshFormat) return describe_mesh_file(path, has_mesh, has_state);
  if (format && *format == kJacobianFormat) return describe_jacobian_file(path);
  if (format && *format == kElementMeshFormat) return describe_element_mesh_file(path);
  if (!format)
    fail(ExitCode::kInvalidInput,
         "{}: root attribute \"format\" is missing: not a fluxjac file (expected \"{}\", \"{}\" or \"{}\")", path,
         kEdgeMeshFormat, kElementMeshFormat, kJacobianFormat);
  fail(ExitCode::kInvalidInput,
       "{}: root attribute \"format\" is \"{}\": not a fluxjac file (expected \"{}\", \"{}\" or \"{}\")", path,
       quoted_file_text(*format), kEdgeMeshFormat, kElementMeshFormat, kJacobianFormat);
}

}  // namespace fluxjac
