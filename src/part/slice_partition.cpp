#include "part/slice_partition.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "part/held_ids.hpp"
#include "partition/graph_partition.hpp"
#include "partition/partition_check.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

using Clock = std::chrono::steady_clock;
using Messages = std::vector<std::vector<std::int64_t>>;

/// Contiguous ranges of ids, one per rank: rank r holds [start[r], start[r + 1]).
struct Blocks {
  std::vector<std::int64_t> start;
  Blocks(std::int64_t total, int ranks) : start(static_cast<std::size_t>(ranks) + 1) {
    for (int r = 0; r <= ranks; ++r) start[r] = total * r / ranks;
  }
  std::int64_t first(int rank) const { return start[rank]; }
  std::int64_t end(int rank) const { return start[rank + 1]; }
  int owner(std::int64_t id) const {
    return static_cast<int>(std::upper_bound(start.begin(), start.end(), id) - start.begin() - 1);
  }
};

std::int64_t bits_of(double value) {
  std::int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double value_of(std::int64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// ---- read slices: each rank its range of edges (ends, normals, areas) and of nodes (states) --------------------
struct Slices {
  std::int64_t n_nodes = 0, n_edges = 0;
  std::int64_t first_edge = 0, first_node = 0;
  EdgeMesh edges;           ///< edges [first_edge, first_edge + n), node ids in file numbering
  FlowState state;          ///< nodes [first_node, ...)
  OwnedNodeData node_data;  ///< of nodes [first_node, ...), when asked for
};

/// The per-node datasets of the node range [first, end) that the file has.
OwnedNodeData read_node_data(const std::string& mesh_file, std::int64_t n_nodes, std::int64_t first, std::int64_t end) {
  OwnedNodeData data;
  const h5::File file = h5::File::open(mesh_file);
  std::vector<h5::RowRange> rows;
  if (end > first) rows.push_back({first, end});
  const auto read = [&](const char* path, std::vector<std::int64_t> shape, const std::string& meaning) {
    const h5::DatasetInfo info = h5::describe_dataset(file, path);
    h5::require_type(info, {h5::kFloat64});
    h5::require_shape(info, shape, meaning);
    return h5::read_rows<double>(file, info, rows);
  };
  if (h5::exists(file, edge_mesh_paths::kCoords))
    data.coords = read(edge_mesh_paths::kCoords, {n_nodes, 3}, "[n_nodes, 3]");
  if (h5::exists(file, edge_mesh_paths::kVolumes))
    data.volumes = read(edge_mesh_paths::kVolumes, {n_nodes}, "[n_nodes]");
  data.boundary_nodes = read_edge_mesh_extras(mesh_file, n_nodes, first, end).boundary_nodes;
  if (h5::exists(file, partition_paths::kOriginalNode)) {
    const h5::DatasetInfo info = h5::describe_dataset(file, partition_paths::kOriginalNode);
    h5::require_type(info, {h5::kInt64});
    h5::require_shape(info, {n_nodes}, "[n_nodes]");
    data.original = h5::read_rows<std::int64_t>(file, info, rows);
    for (std::size_t k = 0; k < data.original.size(); ++k)
      if (data.original[k] < 0 || data.original[k] >= n_nodes)
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: original id {} is out of range [0, {})", mesh_file,
             partition_paths::kOriginalNode, first + static_cast<std::int64_t>(k), data.original[k], n_nodes);
  }
  return data;
}

Slices read_even_slices(const Communicator& comm, const std::string& mesh_file, const std::string& state_file,
                        bool node_data) {
  Slices slices;
  std::int64_t file_edges = 0;
  // No edge at all: the file's sizes, with the readers' checks on them.
  slices.n_nodes = read_edge_mesh_slice(mesh_file, {}, file_edges).n_nodes;
  slices.n_edges = file_edges;
  if (slices.n_nodes < comm.size())
    fail(ExitCode::kUsage,
         "cannot partition a mesh of {} nodes into {} parts: there can be at most one part per node (run on {} "
         "ranks or fewer)",
         slices.n_nodes, comm.size(), slices.n_nodes);
  const Blocks edge_blocks(slices.n_edges, comm.size()), node_blocks(slices.n_nodes, comm.size());
  slices.first_edge = edge_blocks.first(comm.rank());
  std::vector<std::int64_t> ids(static_cast<std::size_t>(edge_blocks.end(comm.rank()) - slices.first_edge));
  std::iota(ids.begin(), ids.end(), slices.first_edge);
  slices.edges = read_edge_mesh_slice(mesh_file, ids, file_edges);
  slices.first_node = node_blocks.first(comm.rank());
  slices.state = read_flow_state_slice(state_file, slices.n_nodes, slices.first_node, node_blocks.end(comm.rank()));
  if (node_data)
    slices.node_data = read_node_data(mesh_file, slices.n_nodes, slices.first_node, node_blocks.end(comm.rank()));
  return slices;
}

/// ---- the distributed node graph: each rank the adjacency of its node range ----------------------------------------
struct Graph {
  GraphRange range;
  std::vector<std::int64_t> row_start;  ///< [nodes of the range]: where each row starts in the whole mesh's Aoff
};

/// Every edge of the slice goes to the ranks of both its ends' ranges as (node, neighbour, edge id); each vertex
/// weighs vertex_weight(balance, its degree).
Graph build_graph(const Communicator& comm, const std::string& mesh_file, const Slices& slices, PartBalance balance) {
  const Blocks node_blocks(slices.n_nodes, comm.size());
  Messages arcs(static_cast<std::size_t>(comm.size()));
  std::vector<std::size_t> counts(arcs.size(), 0);
  for (edge_index e = 0; e < slices.edges.n_edges(); ++e) {
    counts[node_blocks.owner(slices.edges.left(e))] += 3;
    counts[node_blocks.owner(slices.edges.right(e))] += 3;
  }
  for (std::size_t r = 0; r < arcs.size(); ++r) arcs[r].reserve(counts[r]);
  for (edge_index e = 0; e < slices.edges.n_edges(); ++e) {
    const std::int64_t left = slices.edges.left(e), right = slices.edges.right(e), id = slices.first_edge + e;
    std::vector<std::int64_t>& to_left = arcs[node_blocks.owner(left)];
    to_left.push_back(left), to_left.push_back(right), to_left.push_back(id);
    std::vector<std::int64_t>& to_right = arcs[node_blocks.owner(right)];
    to_right.push_back(right), to_right.push_back(left), to_right.push_back(id);
  }
  arcs = comm.all_to_all(arcs);

  Graph graph;
  GraphRange& range = graph.range;
  range.first_vertex = slices.first_node;
  const std::int64_t n_vertices = node_blocks.end(comm.rank()) - slices.first_node;
  range.offsets.assign(static_cast<std::size_t>(n_vertices) + 1, 0);
  for (const std::vector<std::int64_t>& from : arcs)
    for (std::size_t k = 0; k < from.size(); k += 3) ++range.offsets[from[k] - range.first_vertex + 1];
  std::partial_sum(range.offsets.begin(), range.offsets.end(), range.offsets.begin());
  // (neighbour, edge id) per arc, placed by its node; then each row sorted, so that a repeated pair sits together.
  std::vector<std::pair<std::int64_t, std::int64_t>> row(static_cast<std::size_t>(range.offsets.back()));
  std::vector<std::int64_t> fill(range.offsets.begin(), range.offsets.end() - 1);
  for (std::vector<std::int64_t>& from : arcs) {
    for (std::size_t k = 0; k < from.size(); k += 3)
      row[fill[from[k] - range.first_vertex]++] = {from[k + 1], from[k + 2]};
    std::vector<std::int64_t>().swap(from);
  }
  range.neighbors.resize(row.size());
  range.weights.resize(static_cast<std::size_t>(n_vertices));
  for (std::int64_t v = 0; v < n_vertices; ++v) {
    const auto first = row.begin() + range.offsets[v], last = row.begin() + range.offsets[v + 1];
    std::sort(first, last);
    for (auto it = first; it != last; ++it) {
      if (it != first && it->first == (it - 1)->first)
        fail(ExitCode::kInvalidInput,
             "{}: {}[{}]: duplicate edge: edge {} already joins nodes {} and {} (each node pair may appear once, in "
             "either orientation)",
             mesh_file, edge_mesh_paths::kEdges, it->second, (it - 1)->second, range.first_vertex + v, it->first);
      range.neighbors[it - row.begin()] = it->first;
    }
    range.weights[v] = vertex_weight(balance, range.offsets[v + 1] - range.offsets[v]);
  }
  return graph;
}

/// Row starts need every rank's arc count: collective, after build_graph succeeded everywhere.
void place_rows(const Communicator& comm, Graph& graph) {
  const std::vector<std::int64_t>& offsets = graph.range.offsets;
  const std::int64_t before = comm.exclusive_sum(offsets.back());
  graph.row_start.resize(offsets.size() - 1);
  for (std::size_t v = 0; v + 1 < offsets.size(); ++v) graph.row_start[v] = before + offsets[v];
}

/// ---- redistribution: nodes and edges to the ranks of their parts ---------------------------------------------------

/// The part of each end of the slice's edges, asked of the ranks whose ranges hold them: returns the slice's ends
/// (sorted, once each) and their parts.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> parts_of_ends(const Communicator& comm,
                                                                              const Slices& slices, const Graph& graph,
                                                                              const std::vector<std::int32_t>& part) {
  const Blocks node_blocks(slices.n_nodes, comm.size());
  std::vector<std::int64_t> ends =
      SortedIds::distinct(std::vector<std::int64_t>(slices.edges.edges.begin(), slices.edges.edges.end()));
  Messages asked(static_cast<std::size_t>(comm.size()));
  for (const std::int64_t node : ends) asked[node_blocks.owner(node)].push_back(node);
  Messages answers = comm.all_to_all(asked);
  for (std::vector<std::int64_t>& answer : answers)
    for (std::int64_t& node : answer) node = part[node - graph.range.first_vertex];
  answers = comm.all_to_all(answers);
  std::vector<std::int64_t> parts;
  parts.reserve(ends.size());
  for (const std::vector<std::int64_t>& answer : answers) parts.insert(parts.end(), answer.begin(), answer.end());
  return {std::move(ends), std::move(parts)};
}

constexpr std::size_t kNodeRecord = 2 + kBlock;  // id, row start, state
constexpr std::size_t kEdgeRecord = 9;           // id, L, R, part of L, part of R, normal, area

FilePart redistribute(const Communicator& comm, Slices& slices, const Graph& graph,
                      const std::vector<std::int32_t>& part, OwnedNodeData& owned_data) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  FilePart pieces;
  pieces.global_nodes = slices.n_nodes;
  pieces.global_edges = slices.n_edges;
  pieces.gamma = slices.state.gamma;

  // Nodes: the ranges come in rank order and each in id order, so every rank receives its nodes ascending. The
  // per-node data the file has (the same on every rank) follows each node's id, row start and state.
  const OwnedNodeData& data = slices.node_data;
  const bool coords = comm.max(std::int64_t{!data.coords.empty()}) > 0;
  const bool volumes = comm.max(std::int64_t{!data.volumes.empty()}) > 0;
  const bool boundary = comm.max(std::int64_t{!data.boundary_nodes.empty()}) > 0;
  const bool original = comm.max(std::int64_t{!data.original.empty()}) > 0;
  const std::size_t record =
      kNodeRecord + (coords ? 3 : 0) + (volumes ? 1 : 0) + (boundary ? 1 : 0) + (original ? 1 : 0);
  Messages nodes(ranks);
  {
    std::vector<std::size_t> counts(ranks, 0);
    for (const std::int32_t p : part) counts[static_cast<std::size_t>(p)] += record;
    for (std::size_t r = 0; r < ranks; ++r) nodes[r].reserve(counts[r]);
  }
  for (std::size_t v = 0; v < part.size(); ++v) {
    std::vector<std::int64_t>& to = nodes[static_cast<std::size_t>(part[v])];
    to.push_back(graph.range.first_vertex + static_cast<std::int64_t>(v));
    to.push_back(graph.row_start[v]);
    for (int k = 0; k < kBlock; ++k) to.push_back(bits_of(slices.state.Q[v * kBlock + k]));
    if (coords)
      for (int d = 0; d < 3; ++d) to.push_back(bits_of(data.coords[3 * v + d]));
    if (volumes) to.push_back(bits_of(data.volumes[v]));
    if (boundary) to.push_back(data.boundary_nodes[v]);
    if (original) to.push_back(data.original[v]);
  }
  std::vector<double>().swap(slices.state.Q);
  slices.node_data = OwnedNodeData();
  nodes = comm.all_to_all(nodes);
  {
    std::size_t received = 0;
    for (const std::vector<std::int64_t>& from : nodes) received += from.size() / record;
    pieces.owned.reserve(received);
    pieces.owned_row_start.reserve(received);
    pieces.owned_state.reserve(received * kBlock);
  }
  for (std::vector<std::int64_t>& from : nodes) {
    for (std::size_t k = 0; k < from.size(); k += record) {
      pieces.owned.push_back(from[k]);
      pieces.owned_row_start.push_back(from[k + 1]);
      for (int c = 0; c < kBlock; ++c) pieces.owned_state.push_back(value_of(from[k + 2 + c]));
      std::size_t at = k + kNodeRecord;
      if (coords)
        for (int d = 0; d < 3; ++d) owned_data.coords.push_back(value_of(from[at++]));
      if (volumes) owned_data.volumes.push_back(value_of(from[at++]));
      if (boundary) owned_data.boundary_nodes.push_back(static_cast<std::uint8_t>(from[at++]));
      if (original) owned_data.original.push_back(from[at++]);
    }
    std::vector<std::int64_t>().swap(from);
  }

  // Edges: to the parts of both ends (once when they are one part); slices in rank order, so ascending file ids.
  const auto [ends, end_parts] = parts_of_ends(comm, slices, graph, part);
  const SortedIds end_places(ends);
  const auto part_of = [&, &end_parts = end_parts](std::int64_t node) { return end_parts[end_places.place(node)]; };
  Messages edges(ranks);
  const EdgeMesh& slice = slices.edges;
  std::vector<std::int64_t> edge_parts(2 * static_cast<std::size_t>(slice.n_edges()));
  {
    std::vector<std::size_t> counts(ranks, 0);
    for (edge_index e = 0; e < slice.n_edges(); ++e) {
      edge_parts[2 * e] = part_of(slice.left(e));
      edge_parts[2 * e + 1] = part_of(slice.right(e));
      counts[static_cast<std::size_t>(edge_parts[2 * e])] += kEdgeRecord;
      if (edge_parts[2 * e + 1] != edge_parts[2 * e])
        counts[static_cast<std::size_t>(edge_parts[2 * e + 1])] += kEdgeRecord;
    }
    for (std::size_t r = 0; r < ranks; ++r) edges[r].reserve(counts[r]);
  }
  for (edge_index e = 0; e < slice.n_edges(); ++e) {
    const std::int64_t left = slice.left(e), right = slice.right(e);
    const std::int64_t left_part = edge_parts[2 * e], right_part = edge_parts[2 * e + 1];
    const std::int64_t record[kEdgeRecord] = {slices.first_edge + e,
                                              left,
                                              right,
                                              left_part,
                                              right_part,
                                              bits_of(slice.normals[3 * e]),
                                              bits_of(slice.normals[3 * e + 1]),
                                              bits_of(slice.normals[3 * e + 2]),
                                              bits_of(slice.areas[e])};
    for (const std::int64_t p : {left_part, right_part}) {
      std::vector<std::int64_t>& to = edges[static_cast<std::size_t>(p)];
      to.insert(to.end(), record, record + kEdgeRecord);
      if (left_part == right_part) break;
    }
  }
  slices.edges = EdgeMesh();
  edges = comm.all_to_all(edges);
  std::vector<std::pair<std::int64_t, std::int64_t>> ghosts;  // (node, owner)
  const std::int64_t me = comm.rank();
  {
    std::size_t received = 0;
    for (const std::vector<std::int64_t>& from : edges) received += from.size() / kEdgeRecord;
    pieces.edges.edges.reserve(2 * received);
    pieces.edges.normals.reserve(3 * received);
    pieces.edges.areas.reserve(received);
  }
  for (std::vector<std::int64_t>& from : edges) {
    for (std::size_t k = 0; k < from.size(); k += kEdgeRecord) {
      const std::int64_t* record = &from[k];
      pieces.edges.edges.insert(pieces.edges.edges.end(),
                                {static_cast<node_index>(record[1]), static_cast<node_index>(record[2])});
      for (int d = 0; d < 3; ++d) pieces.edges.normals.push_back(value_of(record[5 + d]));
      pieces.edges.areas.push_back(value_of(record[8]));
      if (record[3] != me) ghosts.emplace_back(record[1], record[3]);
      if (record[4] != me) ghosts.emplace_back(record[2], record[4]);
    }
    std::vector<std::int64_t>().swap(from);
  }
  pieces.edges.n_nodes = slices.n_nodes;
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  for (const auto& [node, owner] : ghosts) {
    pieces.ghosts.push_back(node);
    pieces.ghost_owner.push_back(owner);
  }
  return pieces;
}

}  // namespace

SlicePartition partition_by_slices(const Communicator& comm, const std::string& mesh_file,
                                   const std::string& state_file, const Note& note, bool node_data,
                                   ScotchStrategy strategy, PartBalance balance) {
  SlicePartition result;
  const Note root_note = comm.is_root() ? note : Note();
  const auto step_done = [&](const char* name, StepKind kind, Clock::time_point start) {
    result.steps.push_back(finish_step(comm, name, kind, start));
    say(root_note, step_line(result.steps.back()));
  };

  restart_peak_resident();  // each step's peak is that of the partition, not of earlier work in the process
  auto start = Clock::now();
  Slices slices = read_even_slices(comm, mesh_file, state_file, node_data);
  step_done("read slices", StepKind::kRead, start);

  start = Clock::now();
  Graph graph = build_graph(comm, mesh_file, slices, balance);
  place_rows(comm, graph);
  step_done("graph", StepKind::kPartition, start);

  start = Clock::now();
  const std::vector<std::int32_t> part = partition_graph(comm, graph.range, comm.size(), strategy);
  graph.range = GraphRange();
  graph.range.first_vertex = slices.first_node;
  step_done("partition", StepKind::kPartition, start);

  start = Clock::now();
  result.pieces = redistribute(comm, slices, graph, part, result.node_data);
  step_done("redistribute", StepKind::kRenumber, start);
  return result;
}

}  // namespace fluxjac
