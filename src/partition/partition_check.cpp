#include "partition/partition_check.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "util/error.hpp"

namespace fluxjac {
namespace {

using namespace partition_paths;

/// The part whose node range holds node (with empty parts, the last of those that start at or before it).
std::int64_t part_of(const std::vector<std::int64_t>& node_offsets, std::int64_t node) {
  return std::upper_bound(node_offsets.begin(), node_offsets.end(), node) - node_offsets.begin() - 1;
}

std::string entry_text(const std::vector<std::int64_t>& values, std::size_t k) {
  return k < values.size() ? std::to_string(values[k]) : std::string("past its end");
}

}  // namespace

void check_part_count(const std::string& file, std::int64_t parts, std::int64_t n_nodes) {
  if (parts < 1 || parts > n_nodes)
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"parts\" is {}, expected 1 to n_nodes = {}", file, kGroup, parts,
         n_nodes);
}

void check_offsets(const std::string& file, const char* dataset, const std::vector<std::int64_t>& offsets,
                   std::int64_t total, const std::string& total_meaning) {
  if (offsets.empty()) fail(ExitCode::kInvalidInput, "{}: {}: no offsets (expected parts + 1 values)", file, dataset);
  if (offsets[0] != 0)
    fail(ExitCode::kInvalidInput, "{}: {}[0]: is {}, expected 0 (the first part starts at 0)", file, dataset,
         offsets[0]);
  const std::size_t parts = offsets.size() - 1;
  for (std::size_t p = 0; p < parts; ++p)
    if (offsets[p + 1] < offsets[p])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} is less than the {} before it (offsets never decrease)", file,
           dataset, p + 1, offsets[p + 1], offsets[p]);
  if (offsets[parts] != total)
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: the last offset is {}, expected {} ({})", file, dataset, parts,
         offsets[parts], total, total_meaning);
}

void check_piece(const std::string& file, const char* dataset, const ListPiece& piece, std::int64_t limit,
                 std::int64_t own_begin, std::int64_t own_end, const char* own_dataset) {
  for (std::size_t k = 0; k < piece.values.size(); ++k) {
    const std::int64_t value = piece.values[k];
    const std::int64_t index = piece.first + static_cast<std::int64_t>(k);
    if (value < 0 || value >= limit)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} of part {} is out of range [0, {})", file, dataset, index, value,
           piece.part, limit);
    if (k > 0 && value <= piece.values[k - 1])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} of part {} does not follow {} in ascending order", file, dataset,
           index, value, piece.part, piece.values[k - 1]);
    if (value >= own_begin && value < own_end)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: {} lies in part {}'s own range [{}, {}) of {}", file, dataset, index,
           value, piece.part, own_begin, own_end, own_dataset);
  }
}

void check_range_edges(const std::string& file, const std::vector<std::int64_t>& node_offsets,
                       const std::vector<std::int64_t>& edge_offsets, std::int64_t part,
                       const std::vector<node_index>& range_ends) {
  const std::int64_t edge_begin = edge_offsets[part], edge_end = edge_offsets[part + 1];
  for (std::int64_t e = edge_begin; e < edge_end; ++e) {
    const std::int64_t left = range_ends[2 * (e - edge_begin)];
    if (left < node_offsets[part] || left >= node_offsets[part + 1])
      fail(ExitCode::kInvalidInput,
           "{}: /mesh/edges[{}]: left node {} belongs to part {}, but the edge lies in part {}'s range [{}, {}) of "
           "{} (each part stores the edges whose left node it owns)",
           file, e, left, part_of(node_offsets, left), part, edge_begin, edge_end, kEdgeOffsets);
  }
}

std::vector<std::int64_t> check_held_edges(const std::string& file, const std::vector<std::int64_t>& node_offsets,
                                           const std::vector<std::int64_t>& edge_offsets, const ListPiece& halo,
                                           const EdgeEnds& held) {
  const std::int64_t p = halo.part;
  const std::int64_t node_begin = node_offsets[p], node_end = node_offsets[p + 1];
  const std::int64_t edge_begin = edge_offsets[p], edge_end = edge_offsets[p + 1];
  if (held.range_ends.size() != static_cast<std::size_t>(2 * (edge_end - edge_begin)) ||
      held.halo_ends.size() != 2 * halo.values.size())
    fail(ExitCode::kRuntime, "{}: part {}: {} edge ends of its range and {} of its halo edges for {} and {} edges",
         file, p, held.range_ends.size(), held.halo_ends.size(), edge_end - edge_begin, halo.values.size());
  check_range_edges(file, node_offsets, edge_offsets, p, held.range_ends);
  const auto owned = [&](std::int64_t node) { return node >= node_begin && node < node_end; };
  for (std::size_t k = 0; k < halo.values.size(); ++k) {
    const std::int64_t left = held.halo_ends[2 * k], right = held.halo_ends[2 * k + 1];
    const std::int64_t index = halo.first + static_cast<std::int64_t>(k);
    if (!owned(right))
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: edge {} = ({}, {}) is a halo edge of part {}, but its right node {} belongs to part {} (a "
           "part's halo edges end at a node it owns)",
           file, kHaloEdges, index, halo.values[k], left, right, p, right, part_of(node_offsets, right));
    if (owned(left))
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: edge {} = ({}, {}) is a halo edge of part {}, but its left node {} is part {}'s own (the edge "
           "belongs in its edge range)",
           file, kHaloEdges, index, halo.values[k], left, right, p, left, p);
  }
  return nodes_reached_outside(node_begin, node_end, held);
}

std::vector<std::int64_t> nodes_reached_outside(std::int64_t node_begin, std::int64_t node_end, const EdgeEnds& held) {
  std::vector<std::int64_t> reached;
  for (const std::vector<node_index>* ends : {&held.range_ends, &held.halo_ends})
    for (const node_index node : *ends)
      if (node < node_begin || node >= node_end) reached.push_back(node);
  std::sort(reached.begin(), reached.end());
  reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
  return reached;
}

std::vector<std::vector<std::int64_t>> halo_edges_by_part(const std::vector<std::int64_t>& node_offsets,
                                                          std::int64_t first_edge,
                                                          const std::vector<node_index>& range_ends) {
  std::vector<std::vector<std::int64_t>> halo(node_offsets.size() - 1);
  const std::size_t n_edges = range_ends.size() / 2;
  for (std::size_t k = 0; k < n_edges; ++k) {
    const std::int64_t left_part = part_of(node_offsets, range_ends[2 * k]);
    const std::int64_t right_part = part_of(node_offsets, range_ends[2 * k + 1]);
    if (left_part != right_part) halo[right_part].push_back(first_edge + static_cast<std::int64_t>(k));
  }
  return halo;
}

void check_piece_matches(const std::string& file, const char* dataset, const ListPiece& piece,
                         const std::vector<std::int64_t>& expected, const char* what) {
  const std::size_t count = std::max(piece.values.size(), expected.size());
  for (std::size_t k = 0; k < count; ++k) {
    if (k < piece.values.size() && k < expected.size() && piece.values[k] == expected[k]) continue;
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: part {} lists {} {}, the edges give {}; its entry {} is {}, expected {}",
         file, dataset, piece.first + static_cast<std::int64_t>(k), piece.part, piece.values.size(), what,
         expected.size(), k, entry_text(piece.values, k), entry_text(expected, k));
  }
}

void check_edge_coverage(const std::string& file, std::int64_t owned_ends, std::int64_t n_edges) {
  if (owned_ends != 2 * n_edges)
    fail(ExitCode::kInvalidInput,
         "{}: the parts hold {} edge ends at nodes they own, the {} edges of /mesh/edges have {}: an edge is missing "
         "from the part of one of its nodes (partition the mesh again with 'fluxjac mesh partition')",
         file, owned_ends, n_edges, 2 * n_edges);
}

void check_partition_against_mesh(const std::string& path, const EdgeMesh& mesh, const PartitionLayout& layout) {
  const std::int64_t parts = layout.parts;
  for (const std::vector<std::int64_t>* offsets :
       {&layout.node_offsets, &layout.edge_offsets, &layout.ghost_offsets, &layout.halo_edge_offsets})
    if (static_cast<std::int64_t>(offsets->size()) != parts + 1)
      fail(ExitCode::kInvalidInput, "{}: {}: {} offsets for {} parts (expected parts + 1)", path, kGroup,
           offsets->size(), parts);
  check_offsets(path, kNodeOffsets, layout.node_offsets, mesh.n_nodes, "n_nodes from /mesh");
  check_offsets(path, kEdgeOffsets, layout.edge_offsets, mesh.n_edges(), "n_edges from /mesh/edges");
  check_offsets(path, kGhostOffsets, layout.ghost_offsets, static_cast<std::int64_t>(layout.ghost_nodes.size()),
                "the length of ghost_nodes");
  check_offsets(path, kHaloEdgeOffsets, layout.halo_edge_offsets, static_cast<std::int64_t>(layout.halo_edges.size()),
                "the length of halo_edges");

  const auto piece_of = [&](std::int64_t p, const std::vector<std::int64_t>& offsets,
                            const std::vector<std::int64_t>& values) {
    return ListPiece{p, offsets[p], {values.begin() + offsets[p], values.begin() + offsets[p + 1]}};
  };
  // Every part's range first: the edges grouped by owner is what the lists are made from.
  for (std::int64_t p = 0; p < parts; ++p)
    check_range_edges(
        path, layout.node_offsets, layout.edge_offsets, p,
        {mesh.edges.begin() + 2 * layout.edge_offsets[p], mesh.edges.begin() + 2 * layout.edge_offsets[p + 1]});
  const std::vector<std::vector<std::int64_t>> halo_given = halo_edges_by_part(layout.node_offsets, 0, mesh.edges);
  for (std::int64_t p = 0; p < parts; ++p) {
    const ListPiece ghosts = piece_of(p, layout.ghost_offsets, layout.ghost_nodes);
    const ListPiece halo = piece_of(p, layout.halo_edge_offsets, layout.halo_edges);
    check_piece(path, kGhostNodes, ghosts, mesh.n_nodes, layout.node_offsets[p], layout.node_offsets[p + 1],
                kNodeOffsets);
    check_piece(path, kHaloEdges, halo, mesh.n_edges(), layout.edge_offsets[p], layout.edge_offsets[p + 1],
                kEdgeOffsets);
    EdgeEnds held;
    held.range_ends.assign(mesh.edges.begin() + 2 * layout.edge_offsets[p],
                           mesh.edges.begin() + 2 * layout.edge_offsets[p + 1]);
    for (const std::int64_t e : halo.values) held.halo_ends.insert(held.halo_ends.end(), {mesh.left(e), mesh.right(e)});
    const std::vector<std::int64_t> reached =
        check_held_edges(path, layout.node_offsets, layout.edge_offsets, halo, held);
    check_piece_matches(path, kHaloEdges, halo, halo_given[p], "halo edges");
    check_piece_matches(path, kGhostNodes, ghosts, reached, "ghost nodes");
  }
}

}  // namespace fluxjac
