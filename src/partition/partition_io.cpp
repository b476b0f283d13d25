#include "partition/partition_io.hpp"

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
using namespace partition_paths;

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

/// Offsets of parts + 1 values from 0 to total, never decreasing (check_offsets).
std::vector<std::int64_t> read_offsets(const h5::File& file, const char* path, std::int64_t parts, std::int64_t total,
                                       const std::string& total_meaning) {
  std::vector<std::int64_t> offsets =
      read_int64(file, path, parts + 1, fmt::format("[parts + 1] with parts = {} from {}", parts, kGroup));
  check_offsets(file.name(), path, offsets, total, total_meaning);
  return offsets;
}

/// /mesh's attribute n_nodes, which a partition's sizes are checked against.
std::int64_t partitioned_node_count(const h5::File& file) {
  if (!h5::exists(file, kMeshGroup))
    fail(ExitCode::kInvalidInput, "{}: /mesh: group not found (a partition without a mesh)", file.name());
  const std::optional<std::int64_t> n_nodes = h5::read_integer_attribute(file, kMeshGroup, "n_nodes");
  if (!n_nodes || *n_nodes <= 0)
    fail(ExitCode::kInvalidInput, "{}: /mesh: attribute \"n_nodes\" is missing or not positive", file.name());
  return *n_nodes;
}

/// The `parts` attribute of /partition, checked against n_nodes (check_part_count).
std::int64_t read_part_count(const h5::File& file, std::int64_t n_nodes) {
  const std::optional<std::int64_t> parts = h5::read_integer_attribute(file, kGroup, "parts");
  if (!parts) fail(ExitCode::kInvalidInput, "{}: {}: attribute \"parts\" is missing", file.name(), kGroup);
  check_part_count(file.name(), *parts, n_nodes);
  return *parts;
}

/// The number of edges /mesh/edges declares.
std::int64_t partitioned_edge_count(const h5::File& file) {
  const h5::DatasetInfo edges = h5::describe_dataset(file, kEdges);
  h5::require_shape(edges, {h5::kAnyExtent, 2}, "[n_edges, 2]: (left, right) node per edge");
  return edges.shape[0];
}

}  // namespace

bool has_partition(const std::string& path) {
  const h5::File file = h5::File::open(path);
  return h5::exists(file, kGroup);
}

void write_partition(const h5::File& file, const PartitionLayout& layout, const std::string& method) {
  h5::create_group(file, kGroup);
  h5::write_attribute(file, kGroup, "parts", std::int64_t{layout.parts});
  h5::write_attribute(file, kGroup, "method", method);
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
  require_edge_mesh_format(file);
  if (!h5::exists(file, kGroup))
    fail(ExitCode::kInvalidInput,
         "{}: {}: group not found: the file is not partitioned (make a partitioned copy with 'fluxjac mesh partition "
         "{} --parts P -o OUT.h5')",
         path, kGroup, path);
  const std::int64_t n_nodes = partitioned_node_count(file);
  const std::int64_t n_edges = partitioned_edge_count(file);

  PartitionLayout layout;
  layout.parts = read_part_count(file, n_nodes);
  layout.node_offsets = read_offsets(file, kNodeOffsets, layout.parts, n_nodes, "n_nodes from /mesh");
  layout.edge_offsets = read_offsets(file, kEdgeOffsets, layout.parts, n_edges, "n_edges from /mesh/edges");

  layout.original_node =
      read_int64(file, kOriginalNode, n_nodes, fmt::format("[n_nodes] with n_nodes = {} from /mesh", n_nodes));
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n_nodes), 0);
  for (std::int64_t node = 0; node < n_nodes; ++node) {
    const std::int64_t original = layout.original_node[node];
    if (original < 0 || original >= n_nodes)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: original id {} is out of range [0, {})", path, kOriginalNode, node,
           original, n_nodes);
    if (seen[original])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: original id {} appears twice (expected a permutation)", path,
           kOriginalNode, node, original);
    seen[original] = 1;
  }

  const std::int64_t n_ghosts = list_length(file, kGhostNodes);
  layout.ghost_offsets = read_offsets(file, kGhostOffsets, layout.parts, n_ghosts, "the length of ghost_nodes");
  layout.ghost_nodes = read_int64(file, kGhostNodes, n_ghosts, "[total over the parts]");
  const std::int64_t n_halo_edges = list_length(file, kHaloEdges);
  layout.halo_edge_offsets =
      read_offsets(file, kHaloEdgeOffsets, layout.parts, n_halo_edges, "the length of halo_edges");
  layout.halo_edges = read_int64(file, kHaloEdges, n_halo_edges, "[total over the parts]");
  for (std::int64_t p = 0; p < layout.parts; ++p) {
    const auto piece = [&](const std::vector<std::int64_t>& offsets, const std::vector<std::int64_t>& values) {
      return ListPiece{p, offsets[p], {values.begin() + offsets[p], values.begin() + offsets[p + 1]}};
    };
    check_piece(path, kGhostNodes, piece(layout.ghost_offsets, layout.ghost_nodes), n_nodes, layout.node_offsets[p],
                layout.node_offsets[p + 1], kNodeOffsets);
    check_piece(path, kHaloEdges, piece(layout.halo_edge_offsets, layout.halo_edges), n_edges, layout.edge_offsets[p],
                layout.edge_offsets[p + 1], kEdgeOffsets);
  }
  return layout;
}

std::int64_t partition_parts(const std::string& path) {
  const h5::File file = h5::File::open(path);
  require_edge_mesh_format(file);
  if (!h5::exists(file, kGroup)) return 0;
  return read_part_count(file, partitioned_node_count(file));
}

PartitionSlice read_partition_part(const std::string& path, std::int64_t part) {
  const h5::File file = h5::File::open(path);
  require_edge_mesh_format(file);
  const std::int64_t parts = partition_parts(path);
  if (parts == 0 || part < 0 || part >= parts)
    fail(ExitCode::kInvalidInput, "{}: {}: no part {} (the file has {} parts)", path, kGroup, part, parts);
  const std::int64_t n_nodes = partitioned_node_count(file);
  const std::int64_t n_edges = partitioned_edge_count(file);

  PartitionSlice slice;
  slice.parts = parts;
  slice.node_offsets = read_offsets(file, kNodeOffsets, parts, n_nodes, "n_nodes from /mesh");
  slice.edge_offsets = read_offsets(file, kEdgeOffsets, parts, n_edges, "n_edges from /mesh/edges");
  // Only this part's piece of each list: the offsets, then one hyperslab each.
  const auto read_piece = [&](const char* list_path, const char* offsets_path) {
    const std::vector<std::int64_t> offsets = read_offsets(file, offsets_path, parts, list_length(file, list_path),
                                                           fmt::format("the length of {}", list_path));
    const h5::DatasetInfo info = h5::describe_dataset(file, list_path);
    return ListPiece{part, offsets[part],
                     h5::read_rows<std::int64_t>(file, info, {{offsets[part], offsets[part + 1]}})};
  };
  slice.ghosts = read_piece(kGhostNodes, kGhostOffsets);
  slice.halo = read_piece(kHaloEdges, kHaloEdgeOffsets);
  check_piece(path, kGhostNodes, slice.ghosts, n_nodes, slice.node_offsets[part], slice.node_offsets[part + 1],
              kNodeOffsets);
  check_piece(path, kHaloEdges, slice.halo, n_edges, slice.edge_offsets[part], slice.edge_offsets[part + 1],
              kEdgeOffsets);
  return slice;
}

void require_parts(const std::string& path, std::int64_t file_parts, std::int64_t requested) {
  if (file_parts == requested) return;
  fail(ExitCode::kUsage,
       "{} is partitioned into {} parts, one per rank, but {} ranks were asked for: run with {} ranks, or partition "
       "the mesh again with 'fluxjac mesh partition {} --parts {} -o OUT.h5'",
       path, file_parts, requested, file_parts, path, requested);
}

}  // namespace fluxjac
