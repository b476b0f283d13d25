#include "mesh/partition_io.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/note.hpp"

namespace fluxjac {
namespace {

using namespace edge_mesh_paths;

constexpr const char* kNodeOffsets = "/partition/node_offsets";
constexpr const char* kEdgeOffsets = "/partition/edge_offsets";
constexpr const char* kOriginalNode = "/partition/original_node";
constexpr const char* kGhostOffsets = "/partition/ghost_offsets";
constexpr const char* kGhostNodes = "/partition/ghost_nodes";
constexpr const char* kHaloEdgeOffsets = "/partition/halo_edge_offsets";
constexpr const char* kHaloEdges = "/partition/halo_edges";

/// An int64 dataset of the given shape, read whole.
std::vector<std::int64_t> read_int64(const h5::File& file, const char* path, std::int64_t length,
                                     const std::string& meaning) {
  const h5::DatasetInfo info = h5::describe_dataset(file, path);
  h5::require_type(info, {h5::kInt64});
  h5::require_shape(info, {length}, meaning);
  return h5::read<std::int64_t>(file, info);
}

/// The length of a one-dimensional int64 list whose offsets say where each part's piece lies.
std::int64_t list_length(const h5::File& file, const char* path) {
  const h5::DatasetInfo info = h5::describe_dataset(file, path);
  h5::require_type(info, {h5::kInt64});
  h5::require_shape(info, {h5::kAnyExtent}, "[total over the parts]");
  return info.shape[0];
}

/// Offsets of parts + 1 values from 0 to total, never decreasing.
std::vector<std::int64_t> read_offsets(const h5::File& file, const char* path, std::int64_t parts, std::int64_t total,
                                       const std::string& total_meaning) {
  std::vector<std::int64_t> offsets =
      read_int64(file, path, parts + 1, fmt::format("[parts + 1] with parts = {} from {}", parts, kPartitionGroup));
  if (offsets[0] != 0)
    fail(ExitCode::kInvalidInput, "{}: {}[0]: is {}, expected 0 (the first part starts at 0)", file.name(), path,
         offsets[0]);
  for (std::int64_t p = 0; p < parts; ++p)
    if (offsets[p + 1] < offsets[p])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} is less than the {} before it (offsets never decrease)",
           file.name(), path, p + 1, offsets[p + 1], offsets[p]);
  if (offsets[parts] != total)
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: the last offset is {}, expected {} ({})", file.name(), path, parts,
         offsets[parts], total, total_meaning);
  return offsets;
}

/// Each part's piece of a list strictly ascending, in [0, limit) and outside the part's own range [own[p], own[p+1]).
void check_part_lists(const h5::File& file, const char* path, const std::vector<std::int64_t>& offsets,
                      const std::vector<std::int64_t>& values, std::int64_t limit, const std::vector<std::int64_t>& own,
                      const char* own_path) {
  const std::int64_t parts = static_cast<std::int64_t>(offsets.size()) - 1;
  for (std::int64_t p = 0; p < parts; ++p)
    for (std::int64_t k = offsets[p]; k < offsets[p + 1]; ++k) {
      const std::int64_t value = values[k];
      if (value < 0 || value >= limit)
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} of part {} is out of range [0, {})", file.name(), path, k, value,
             p, limit);
      if (k > offsets[p] && value <= values[k - 1])
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} of part {} does not follow {} in ascending order", file.name(),
             path, k, value, p, values[k - 1]);
      if (value >= own[p] && value < own[p + 1])
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} lies in part {}'s own range [{}, {}) of {}", file.name(), path, k,
             value, p, own[p], own[p + 1], own_path);
    }
}

/// The first place where a part's stored list differs from the derived one, as "part P: ...".
std::optional<std::string> first_list_difference(const std::vector<std::int64_t>& stored_offsets,
                                                 const std::vector<std::int64_t>& stored,
                                                 const std::vector<std::int64_t>& derived_offsets,
                                                 const std::vector<std::int64_t>& derived, const char* what) {
  const std::int64_t parts = static_cast<std::int64_t>(stored_offsets.size()) - 1;
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::int64_t stored_count = stored_offsets[p + 1] - stored_offsets[p];
    const std::int64_t derived_count = derived_offsets[p + 1] - derived_offsets[p];
    for (std::int64_t k = 0; k < std::max(stored_count, derived_count); ++k) {
      const std::string have = k < stored_count ? std::to_string(stored[stored_offsets[p] + k]) : "nothing";
      const std::string want = k < derived_count ? std::to_string(derived[derived_offsets[p] + k]) : "nothing";
      if (have != want)
        return fmt::format("part {} lists {} {}, the edges give {}; its entry {} is {}, expected {}", p, stored_count,
                           what, derived_count, k, have, want);
    }
  }
  return std::nullopt;
}

}  // namespace

bool has_partition(const std::string& path) {
  const h5::File file = h5::File::open(path);
  return h5::exists(file, kPartitionGroup);
}

void write_partition(const h5::File& file, const PartitionLayout& layout, const std::string& method) {
  h5::create_group(file, kPartitionGroup);
  h5::write_attribute(file, kPartitionGroup, "parts", std::int64_t{layout.parts});
  h5::write_attribute(file, kPartitionGroup, "method", method);
  const auto write_list = [&](const char* path, const std::vector<std::int64_t>& values) {
    h5::write(file, path, values, {static_cast<std::int64_t>(values.size())});
  };
  write_list(kNodeOffsets, layout.node_offsets);
  write_list(kEdgeOffsets, layout.edge_offsets);
  write_list(kOriginalNode, layout.original_node);
  write_list(kGhostOffsets, layout.ghost_offsets);
  write_list(kGhostNodes, layout.ghost_nodes);
  write_list(kHaloEdgeOffsets, layout.halo_edge_offsets);
  write_list(kHaloEdges, layout.halo_edges);
}

PartitionLayout read_partition(const std::string& path) {
  const h5::File file = h5::File::open(path);
  h5::require_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
  if (!h5::exists(file, kPartitionGroup))
    fail(ExitCode::kInvalidInput,
         "{}: {}: group not found: the file is not partitioned (make a partitioned copy with 'fluxjac mesh partition "
         "{} --parts P -o OUT.h5')",
         path, kPartitionGroup, path);
  if (!h5::exists(file, kMeshGroup))
    fail(ExitCode::kInvalidInput, "{}: /mesh: group not found (a partition without a mesh)", path);
  const std::optional<std::int64_t> n_nodes = h5::read_integer_attribute(file, kMeshGroup, "n_nodes");
  if (!n_nodes || *n_nodes <= 0)
    fail(ExitCode::kInvalidInput, "{}: /mesh: attribute \"n_nodes\" is missing or not positive", path);
  const h5::DatasetInfo edges = h5::describe_dataset(file, kEdges);
  h5::require_shape(edges, {h5::kAnyExtent, 2}, "[n_edges, 2]: (left, right) node per edge");
  const std::int64_t n_edges = edges.shape[0];

  PartitionLayout layout;
  const std::optional<std::int64_t> parts = h5::read_integer_attribute(file, kPartitionGroup, "parts");
  if (!parts) fail(ExitCode::kInvalidInput, "{}: {}: attribute \"parts\" is missing", path, kPartitionGroup);
  if (*parts < 1 || *parts > *n_nodes)
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"parts\" is {}, expected 1 to n_nodes = {}", path,
         kPartitionGroup, *parts, *n_nodes);
  layout.parts = *parts;

  layout.node_offsets = read_offsets(file, kNodeOffsets, layout.parts, *n_nodes, "n_nodes from /mesh");
  layout.edge_offsets = read_offsets(file, kEdgeOffsets, layout.parts, n_edges, "n_edges from /mesh/edges");

  layout.original_node =
      read_int64(file, kOriginalNode, *n_nodes, fmt::format("[n_nodes] with n_nodes = {} from /mesh", *n_nodes));
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(*n_nodes), 0);
  for (std::int64_t node = 0; node < *n_nodes; ++node) {
    const std::int64_t original = layout.original_node[node];
    if (original < 0 || original >= *n_nodes)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: original id {} is out of range [0, {})", path, kOriginalNode, node,
           original, *n_nodes);
    if (seen[original])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: original id {} appears twice (expected a permutation)", path,
           kOriginalNode, node, original);
    seen[original] = 1;
  }

  const std::int64_t n_ghosts = list_length(file, kGhostNodes);
  layout.ghost_offsets = read_offsets(file, kGhostOffsets, layout.parts, n_ghosts, "the length of ghost_nodes");
  layout.ghost_nodes = read_int64(file, kGhostNodes, n_ghosts, "[total over the parts]");
  check_part_lists(file, kGhostNodes, layout.ghost_offsets, layout.ghost_nodes, *n_nodes, layout.node_offsets,
                   kNodeOffsets);

  const std::int64_t n_halo_edges = list_length(file, kHaloEdges);
  layout.halo_edge_offsets =
      read_offsets(file, kHaloEdgeOffsets, layout.parts, n_halo_edges, "the length of halo_edges");
  layout.halo_edges = read_int64(file, kHaloEdges, n_halo_edges, "[total over the parts]");
  check_part_lists(file, kHaloEdges, layout.halo_edge_offsets, layout.halo_edges, n_edges, layout.edge_offsets,
                   kEdgeOffsets);
  return layout;
}

std::int64_t partition_parts(const std::string& path) {
  const h5::File file = h5::File::open(path);
  h5::require_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
  if (!h5::exists(file, kPartitionGroup)) return 0;
  const std::optional<std::int64_t> parts = h5::read_integer_attribute(file, kPartitionGroup, "parts");
  if (!parts || *parts < 1)
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"parts\" is missing or not positive", path, kPartitionGroup);
  return *parts;
}

PartSlice read_partition_part(const std::string& path, std::int64_t part) {
  const h5::File file = h5::File::open(path);
  h5::require_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
  const std::int64_t parts = partition_parts(path);
  if (parts == 0 || part < 0 || part >= parts)
    fail(ExitCode::kInvalidInput, "{}: {}: no part {} (the file has {} parts)", path, kPartitionGroup, part, parts);
  const std::optional<std::int64_t> n_nodes = h5::read_integer_attribute(file, kMeshGroup, "n_nodes");
  if (!n_nodes || *n_nodes <= 0)
    fail(ExitCode::kInvalidInput, "{}: /mesh: attribute \"n_nodes\" is missing or not positive", path);
  const h5::DatasetInfo edges = h5::describe_dataset(file, kEdges);
  h5::require_shape(edges, {h5::kAnyExtent, 2}, "[n_edges, 2]: (left, right) node per edge");

  PartSlice slice;
  slice.parts = parts;
  slice.node_offsets = read_offsets(file, kNodeOffsets, parts, *n_nodes, "n_nodes from /mesh");
  slice.edge_offsets = read_offsets(file, kEdgeOffsets, parts, edges.shape[0], "n_edges from /mesh/edges");
  // Only this part's piece of each list: the offsets, then one hyperslab each.
  const auto read_piece = [&](const char* list_path, const char* offsets_path) {
    const std::vector<std::int64_t> offsets = read_offsets(file, offsets_path, parts, list_length(file, list_path),
                                                           fmt::format("the length of {}", list_path));
    const h5::DatasetInfo info = h5::describe_dataset(file, list_path);
    std::vector<std::int64_t> piece_offsets{0, offsets[part + 1] - offsets[part]};
    std::vector<std::int64_t> piece = h5::read_rows<std::int64_t>(file, info, {{offsets[part], offsets[part + 1]}});
    return std::pair{std::move(piece_offsets), std::move(piece)};
  };
  const auto [ghost_offsets, ghosts] = read_piece(kGhostNodes, kGhostOffsets);
  const auto [halo_offsets, halo] = read_piece(kHaloEdges, kHaloEdgeOffsets);
  check_part_lists(file, kGhostNodes, ghost_offsets, ghosts, *n_nodes,
                   {slice.node_offsets[part], slice.node_offsets[part + 1]}, kNodeOffsets);
  check_part_lists(file, kHaloEdges, halo_offsets, halo, edges.shape[0],
                   {slice.edge_offsets[part], slice.edge_offsets[part + 1]}, kEdgeOffsets);
  slice.ghost_nodes = ghosts;
  slice.halo_edges = halo;
  return slice;
}

void check_partition_against_mesh(const std::string& path, const EdgeMesh& mesh, const PartitionLayout& layout) {
  if (layout.node_offsets.back() != mesh.n_nodes || layout.edge_offsets.back() != mesh.n_edges())
    fail(ExitCode::kInvalidInput, "{}: {}: the partition covers {} nodes and {} edges, the mesh has {} and {}", path,
         kPartitionGroup, layout.node_offsets.back(), layout.edge_offsets.back(), mesh.n_nodes, mesh.n_edges());
  for (std::int64_t p = 0; p < layout.parts; ++p)
    for (edge_index e = layout.edge_offsets[p]; e < layout.edge_offsets[p + 1]; ++e) {
      const node_index left = mesh.left(e);
      if (left < layout.node_offsets[p] || left >= layout.node_offsets[p + 1])
        fail(ExitCode::kInvalidInput,
             "{}: /mesh/edges[{}]: left node {} belongs to part {}, but the edge lies in part {}'s range [{}, {}) of "
             "{} (each part stores the edges whose left node it owns)",
             path, e, left, layout.part_of(left), p, layout.edge_offsets[p], layout.edge_offsets[p + 1], kEdgeOffsets);
    }
  PartitionLayout derived = layout;
  derive_ghost_layer(mesh, derived);
  if (const auto difference = first_list_difference(layout.ghost_offsets, layout.ghost_nodes, derived.ghost_offsets,
                                                    derived.ghost_nodes, "ghost nodes"))
    fail(ExitCode::kInvalidInput, "{}: {}: {}", path, kGhostNodes, *difference);
  if (const auto difference = first_list_difference(layout.halo_edge_offsets, layout.halo_edges,
                                                    derived.halo_edge_offsets, derived.halo_edges, "halo edges"))
    fail(ExitCode::kInvalidInput, "{}: {}: {}", path, kHaloEdges, *difference);
}

void require_parts(const std::string& path, std::int64_t file_parts, std::int64_t requested) {
  if (file_parts == requested) return;
  fail(ExitCode::kUsage,
       "{} is partitioned into {} parts, one per rank, but {} ranks were asked for: run with {} ranks, or partition "
       "the mesh again with 'fluxjac mesh partition {} --parts {} -o OUT.h5'",
       path, file_parts, requested, file_parts, path, requested);
}

PartitionOutcome partition_mesh_file(const PartitionRequest& request) {
  PartitionOutcome outcome;
  auto start = std::chrono::steady_clock::now();

  // ---- read: the mesh, its state, its optional additions, an earlier partition ---------------------------
  const EdgeMesh mesh = read_edge_mesh(request.input);
  std::optional<FlowState> state;
  if (!request.state.empty()) {
    state = read_flow_state(request.state, mesh.n_nodes);
  } else {
    const bool input_has_state = [&] {
      const h5::File file = h5::File::open(request.input);
      return h5::exists(file, kStateGroup);
    }();
    if (input_has_state) state = read_flow_state(request.input, mesh.n_nodes);
  }
  EdgeMeshExtras extras = read_edge_mesh_extras(request.input, mesh.n_nodes);
  std::vector<std::int64_t> original_of_input;
  if (has_partition(request.input)) {
    PartitionLayout previous = read_partition(request.input);
    check_partition_against_mesh(request.input, mesh, previous);
    outcome.previous_parts = previous.parts;
    original_of_input = std::move(previous.original_node);
  }
  outcome.n_nodes = mesh.n_nodes;
  outcome.n_edges = mesh.n_edges();
  outcome.has_state = state.has_value();
  outcome.read_seconds = seconds_since(start);

  // ---- partition and renumber --------------------------------------------------------------------------
  start = std::chrono::steady_clock::now();
  const NodePartition partition = partition_nodes(mesh, request.parts);
  outcome.partition_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const PartitionedMesh partitioned = renumber_by_part(mesh, partition, original_of_input);
  if (state) state->Q = permute_node_rows(state->Q, kBlock, partitioned.new_id_of_old);
  if (!extras.boundary_nodes.empty())
    extras.boundary_nodes = permute_node_rows(extras.boundary_nodes, 1, partitioned.new_id_of_old);
  outcome.statistics = partition_statistics(partitioned.mesh, partitioned.layout);
  outcome.method = partition_method(request.parts);
  outcome.renumber_seconds = seconds_since(start);

  // ---- write: an ordinary edge mesh plus /partition, in one atomic step ---------------------------------
  start = std::chrono::steady_clock::now();
  write_edge_mesh_with_extras(request.output, partitioned.mesh, state ? &*state : nullptr, extras,
                              [&](const h5::File& file) { write_partition(file, partitioned.layout, outcome.method); });
  outcome.write_seconds = seconds_since(start);
  return outcome;
}

}  // namespace fluxjac
