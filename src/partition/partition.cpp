#include "partition/partition.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#if FLUXJAC_WITH_METIS
#include <metis.h>
#endif

#include "partition/partition_check.hpp"
#include "util/bucket_sort.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// METIS's random seed: fixed, so that one mesh always gives the same parts (on one METIS build).
constexpr int kMetisSeed = 1;

/// Rows of edges by their L node (util/bucket_sort.hpp), each row sorted by R: the edge ids of row i are
/// values[start[i]] .. values[start[i + 1] - 1].
Buckets<edge_index> sort_edges_by_left_then_right(std::int64_t n_nodes, const std::vector<node_index>& left,
                                                  const std::vector<node_index>& right) {
  const edge_index n_edges = static_cast<edge_index>(left.size());
  Buckets<edge_index> rows = bucket_by_key<edge_index>(n_nodes, [&](auto&& add) {
    for (edge_index e = 0; e < n_edges; ++e) add(left[e], e);
  });
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t node = 0; node < n_nodes; ++node)
    std::sort(rows.begin(node), rows.end(node), [&](edge_index x, edge_index y) { return right[x] < right[y]; });
  return rows;
}

#if FLUXJAC_WITH_METIS
const char* metis_status_text(int status) {
  switch (status) {
    case METIS_ERROR_INPUT:
      return "METIS_ERROR_INPUT: METIS rejected the graph or the options";
    case METIS_ERROR_MEMORY:
      return "METIS_ERROR_MEMORY: METIS ran out of memory";
    default:
      return "METIS_ERROR";
  }
}

std::vector<std::int32_t> metis_kway(const GraphRange& graph, int parts) {
  const auto n_nodes = static_cast<std::int64_t>(graph.weights.size());
  const auto n_arcs = static_cast<std::int64_t>(graph.neighbors.size());
  // Adjacency entries (two per edge) and the weight total (n_nodes + 2 n_edges) must fit METIS's index type.
  constexpr std::int64_t kMaxIndex = std::numeric_limits<idx_t>::max();
  if (n_nodes + n_arcs > kMaxIndex)
    fail(ExitCode::kRuntime,
         "partitioning: the node graph of {} nodes and {} edges needs indices up to {}, more than METIS's {}-bit "
         "idx_t holds ({}): use a METIS built with IDXTYPEWIDTH 64",
         n_nodes, n_arcs / 2, n_nodes + n_arcs, IDXTYPEWIDTH, kMaxIndex);
  std::vector<idx_t> xadj(graph.offsets.begin(), graph.offsets.end());
  std::vector<idx_t> adjncy(graph.neighbors.begin(), graph.neighbors.end());
  std::vector<idx_t> weights(graph.weights.begin(), graph.weights.end());

  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = kMetisSeed;
  options[METIS_OPTION_NUMBERING] = 0;
  idx_t vertex_count = static_cast<idx_t>(n_nodes), constraints = 1, part_count = parts, edge_cut = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n_nodes));
  const int status =
      METIS_PartGraphKway(&vertex_count, &constraints, xadj.data(), adjncy.data(), weights.data(), nullptr, nullptr,
                          &part_count, nullptr, nullptr, options, &edge_cut, part.data());
  if (status != METIS_OK)
    fail(ExitCode::kRuntime, "partitioning {} nodes into {} parts: METIS_PartGraphKway failed: {}", n_nodes, parts,
         metis_status_text(status));

  std::vector<std::int32_t> part_of_node(static_cast<std::size_t>(n_nodes));
  for (std::int64_t i = 0; i < n_nodes; ++i) {
    if (part[i] < 0 || part[i] >= parts)
      fail(ExitCode::kRuntime, "partitioning: METIS put node {} into part {}, outside [0, {})", i, part[i], parts);
    part_of_node[i] = static_cast<std::int32_t>(part[i]);
  }
  return part_of_node;
}
#endif

}  // namespace

bool metis_available() {
#if FLUXJAC_WITH_METIS
  return true;
#else
  return false;
#endif
}

std::string partition_method(int parts, PartBalance balance) {
  if (parts == 1) return "one part (no partitioning)";
#if FLUXJAC_WITH_METIS
  return fmt::format(
      "METIS {}.{}.{} k-way (METIS_PartGraphKway) on the node graph: {}, unweighted edges, minimum edge cut, seed {}",
      METIS_VER_MAJOR, METIS_VER_MINOR, METIS_VER_SUBMINOR, balance_phrase(balance), kMetisSeed);
#else
  return fmt::format("METIS k-way (not in this build): {}", balance_phrase(balance));
#endif
}

NodePartition partition_nodes(const EdgeMesh& mesh, int parts, PartBalance balance) {
  if (parts < 1) fail(ExitCode::kUsage, "cannot partition into {} parts: the number of parts must be 1 or more", parts);
  if (parts > mesh.n_nodes)
    fail(ExitCode::kUsage,
         "cannot partition a mesh of {} nodes into {} parts: there can be at most one part per node (ask for {} "
         "parts or fewer)",
         mesh.n_nodes, parts, mesh.n_nodes);
  if (parts == 1) return NodePartition{1, std::vector<std::int32_t>(static_cast<std::size_t>(mesh.n_nodes), 0)};
  // The node graph in CSR form, both directions of every edge, each vertex weighing vertex_weight of its degree.
  GraphRange graph;
  Buckets<std::int64_t> rows = bucket_by_key<std::int64_t>(mesh.n_nodes, [&](auto&& add) {
    for (edge_index e = 0; e < mesh.n_edges(); ++e) {
      add(mesh.left(e), std::int64_t{mesh.right(e)});
      add(mesh.right(e), std::int64_t{mesh.left(e)});
    }
  });
  graph.offsets.assign(rows.start.begin(), rows.start.end());
  graph.neighbors = std::move(rows.values);
  graph.weights.resize(static_cast<std::size_t>(mesh.n_nodes));
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i)
    graph.weights[i] = vertex_weight(balance, graph.offsets[i + 1] - graph.offsets[i]);
  return NodePartition{parts, metis_partition(graph, parts)};
}

std::vector<std::int32_t> metis_partition(const GraphRange& graph, int parts) {
  if (parts == 1) return std::vector<std::int32_t>(graph.weights.size(), 0);
#if FLUXJAC_WITH_METIS
  return metis_kway(graph, parts);
#else
  fail(ExitCode::kUsage,
       "partitioning into {} parts needs METIS, and this build has no METIS: install libmetis-dev and rebuild (or "
       "point METIS_ROOT at a METIS installation)",
       parts);
#endif
}

std::int64_t PartitionLayout::part_of(std::int64_t node) const {
  return std::upper_bound(node_offsets.begin(), node_offsets.end(), node) - node_offsets.begin() - 1;
}

void derive_ghost_layer(const EdgeMesh& mesh, PartitionLayout& layout) {
  // The rules the readers check (partition/partition_check.hpp), applied: halo edges from every edge, ghosts from the
  // edges each part then holds.
  const std::vector<std::vector<std::int64_t>> halo = halo_edges_by_part(layout.node_offsets, 0, mesh.edges);
  layout.ghost_offsets = {0};
  layout.ghost_nodes.clear();
  layout.halo_edge_offsets = {0};
  layout.halo_edges.clear();
  for (std::int64_t p = 0; p < layout.parts; ++p) {
    EdgeEnds held;
    held.range_ends.assign(mesh.edges.begin() + 2 * layout.edge_offsets[p],
                           mesh.edges.begin() + 2 * layout.edge_offsets[p + 1]);
    for (const std::int64_t e : halo[p]) held.halo_ends.insert(held.halo_ends.end(), {mesh.left(e), mesh.right(e)});
    const std::vector<std::int64_t> ghosts =
        nodes_reached_outside(layout.node_offsets[p], layout.node_offsets[p + 1], held);
    layout.ghost_nodes.insert(layout.ghost_nodes.end(), ghosts.begin(), ghosts.end());
    layout.ghost_offsets.push_back(static_cast<std::int64_t>(layout.ghost_nodes.size()));
    layout.halo_edges.insert(layout.halo_edges.end(), halo[p].begin(), halo[p].end());
    layout.halo_edge_offsets.push_back(static_cast<std::int64_t>(layout.halo_edges.size()));
  }
}

PartitionedMesh renumber_by_part(const EdgeMesh& mesh, const NodePartition& partition,
                                 const std::vector<std::int64_t>& original_of_input) {
  const std::int64_t n_nodes = mesh.n_nodes;
  const std::int64_t parts = partition.parts;
  if (parts < 1 || static_cast<std::int64_t>(partition.part_of_node.size()) != n_nodes ||
      (!original_of_input.empty() && static_cast<std::int64_t>(original_of_input.size()) != n_nodes))
    fail(ExitCode::kRuntime, "renumbering by part: {} parts, {} part ids and {} original ids for {} nodes", parts,
         partition.part_of_node.size(), original_of_input.size(), n_nodes);
  for (std::int64_t i = 0; i < n_nodes; ++i)
    if (partition.part_of_node[i] < 0 || partition.part_of_node[i] >= parts)
      fail(ExitCode::kRuntime, "renumbering by part: node {} is in part {}, outside [0, {})", i,
           partition.part_of_node[i], parts);

  PartitionedMesh result;
  PartitionLayout& layout = result.layout;
  layout.parts = parts;

  // ---- nodes: part by part, each part in its nodes' previous order (a stable counting sort) -------------
  const Buckets<std::int64_t> nodes_of_part = bucket_by_key<std::int64_t>(parts, [&](auto&& add) {
    for (std::int64_t old = 0; old < n_nodes; ++old) add(partition.part_of_node[old], old);
  });
  layout.node_offsets = nodes_of_part.start;
  result.new_id_of_old.resize(static_cast<std::size_t>(n_nodes));
  layout.original_node.resize(static_cast<std::size_t>(n_nodes));
  for (std::int64_t id = 0; id < n_nodes; ++id) {
    const std::int64_t old = nodes_of_part.values[id];
    result.new_id_of_old[old] = static_cast<node_index>(id);
    layout.original_node[id] = original_of_input.empty() ? old : original_of_input[old];
  }
  EdgeMesh& renumbered = result.mesh;
  renumbered.n_nodes = n_nodes;
  if (!mesh.coords.empty()) renumbered.coords = permute_node_rows(mesh.coords, 3, result.new_id_of_old);
  if (!mesh.volumes.empty()) renumbered.volumes = permute_node_rows(mesh.volumes, 1, result.new_id_of_old);

  // ---- edges: new ids, orientation kept, sorted by (L, R): by owner, as parts are contiguous ------------
  const edge_index n_edges = mesh.n_edges();
  std::vector<node_index> left(static_cast<std::size_t>(n_edges)), right(static_cast<std::size_t>(n_edges));
  for (edge_index e = 0; e < n_edges; ++e) {
    left[e] = result.new_id_of_old[mesh.left(e)];
    right[e] = result.new_id_of_old[mesh.right(e)];
  }
  const Buckets<edge_index> rows = sort_edges_by_left_then_right(n_nodes, left, right);
  renumbered.edges.resize(mesh.edges.size());
  renumbered.normals.resize(mesh.normals.size());
  renumbered.areas.resize(mesh.areas.size());
#pragma omp parallel for schedule(static)
  for (edge_index e = 0; e < n_edges; ++e) {
    const edge_index old = rows.values[e];
    renumbered.edges[2 * e] = left[old];
    renumbered.edges[2 * e + 1] = right[old];
    for (int d = 0; d < 3; ++d) renumbered.normals[3 * e + d] = mesh.normals[3 * old + d];
    renumbered.areas[e] = mesh.areas[old];
  }
  layout.edge_offsets.resize(static_cast<std::size_t>(parts) + 1);
  for (std::int64_t p = 0; p <= parts; ++p) layout.edge_offsets[p] = rows.start[layout.node_offsets[p]];

  derive_ghost_layer(renumbered, layout);
  return result;
}

PartitionStatistics statistics_of_parts(std::vector<PartStatistics> parts) {
  PartitionStatistics statistics;
  statistics.parts = std::move(parts);
  std::int64_t max_nodes = 0, total_nodes = 0, max_edges = 0, total_edges = 0;
  for (const PartStatistics& part : statistics.parts) {
    statistics.edge_cut += part.cut_edges;
    statistics.total_ghosts += part.ghosts;
    statistics.empty_parts += part.owned_nodes == 0;
    max_nodes = std::max(max_nodes, part.owned_nodes);
    total_nodes += part.owned_nodes;
    max_edges = std::max(max_edges, part.incident_edges());
    total_edges += part.incident_edges();
  }
  statistics.edge_cut /= 2;  // each cut edge is counted by both its parts
  const auto count = static_cast<double>(statistics.parts.size());
  statistics.node_imbalance =
      total_nodes > 0 ? static_cast<double>(max_nodes) / (static_cast<double>(total_nodes) / count) : 1.0;
  statistics.edge_imbalance =
      total_edges > 0 ? static_cast<double>(max_edges) / (static_cast<double>(total_edges) / count) : 1.0;
  return statistics;
}

std::int64_t PartitionStatistics::ghosts_min() const {
  std::int64_t fewest = parts.empty() ? 0 : parts.front().ghosts;
  for (const PartStatistics& part : parts) fewest = std::min(fewest, part.ghosts);
  return fewest;
}

std::int64_t PartitionStatistics::ghosts_max() const {
  std::int64_t most = 0;
  for (const PartStatistics& part : parts) most = std::max(most, part.ghosts);
  return most;
}

PartitionStatistics partition_statistics(const EdgeMesh& mesh, const PartitionLayout& layout) {
  std::vector<PartStatistics> parts(static_cast<std::size_t>(layout.parts));
  for (std::int64_t p = 0; p < layout.parts; ++p) {
    PartStatistics& part = parts[p];
    part.owned_nodes = layout.node_offsets[p + 1] - layout.node_offsets[p];
    part.owned_edges = layout.edge_offsets[p + 1] - layout.edge_offsets[p];
    part.halo_edges = layout.halo_edge_offsets[p + 1] - layout.halo_edge_offsets[p];
    part.ghosts = layout.ghost_offsets[p + 1] - layout.ghost_offsets[p];
  }
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const std::int64_t left_part = layout.part_of(mesh.left(e)), right_part = layout.part_of(mesh.right(e));
    if (left_part == right_part) continue;
    ++parts[left_part].cut_edges;
    ++parts[right_part].cut_edges;
  }
  return statistics_of_parts(std::move(parts));
}

PartitionStatistics gather_statistics(const Communicator& comm, const PartStatistics& mine) {
  const std::vector<std::int64_t> nodes = comm.all_gather(mine.owned_nodes), edges = comm.all_gather(mine.owned_edges),
                                  halo = comm.all_gather(mine.halo_edges), ghosts = comm.all_gather(mine.ghosts),
                                  cut = comm.all_gather(mine.cut_edges);
  std::vector<PartStatistics> parts;
  for (std::size_t r = 0; r < nodes.size(); ++r) parts.push_back({nodes[r], edges[r], halo[r], ghosts[r], cut[r]});
  return statistics_of_parts(std::move(parts));
}

}  // namespace fluxjac
