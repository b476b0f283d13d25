#include "part/local_part.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "mesh/mesh_io.hpp"
#include "part/distributed_generator.hpp"
#include "part/file_part.hpp"
#include "part/held_ids.hpp"
#include "part/slice_partition.hpp"
#include "partition/graph_partition.hpp"
#include "partition/partition.hpp"
#include "partition/partition_check.hpp"
#include "partition/partition_io.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

enum Tag : int { kTagPieces = 101 };

std::int64_t local_id(const std::vector<std::int64_t>& global_node, std::int64_t global) {
  return std::lower_bound(global_node.begin(), global_node.end(), global) - global_node.begin();
}

/// \brief local_id for the many lookups of a part's edges: HeldIds where the owned ids are one range (the parts of a
/// partitioned file and of the generator), else a search of the whole sorted list (a search per edge end took most of
/// a generated part's setup).
class LocalIds {
 public:
  LocalIds(const std::vector<std::int64_t>& global_node, const std::vector<std::int64_t>& owned,
           const std::vector<std::int64_t>& ghosts)
      : global_node_(global_node) {
    if (!owned.empty() && owned.back() - owned.front() + 1 == static_cast<std::int64_t>(owned.size()))
      held_.emplace(owned.front(), static_cast<std::int64_t>(owned.size()), ghosts);
  }
  std::int64_t operator()(std::int64_t global) const {
    return held_ ? (*held_)(global) : local_id(global_node_, global);
  }

 private:
  const std::vector<std::int64_t>& global_node_;
  std::optional<HeldIds> held_;
};

/// What a rank asks every owner of its ghosts for (entry r: the ghosts rank r owns, ascending), the request of the
/// halo plan's all-to-all.
std::vector<std::vector<std::int64_t>> ghosts_by_owner(const Communicator& comm,
                                                       const std::vector<std::int64_t>& ghosts,
                                                       const std::vector<std::int64_t>& ghost_owner) {
  std::vector<std::vector<std::int64_t>> asked(static_cast<std::size_t>(comm.size()));
  for (std::size_t g = 0; g < ghosts.size(); ++g) {
    if (ghost_owner[g] < 0 || ghost_owner[g] >= comm.size())
      fail(ExitCode::kRuntime, "rank {} has ghost {} of rank {}, which is not a rank of {}", comm.rank(), ghosts[g],
           ghost_owner[g], comm.size());
    asked[static_cast<std::size_t>(ghost_owner[g])].push_back(ghosts[g]);
  }
  return asked;
}

/// The halo plan from what this rank asked of every owner and what every rank asked of it (the all-to-all of
/// ghosts_by_owner): the owner answers with those states in the order asked, each exchange.
HaloPlan plan_halo(const Communicator& comm, const std::vector<std::int64_t>& global_node,
                   const std::vector<std::vector<std::int64_t>>& asked,
                   const std::vector<std::vector<std::int64_t>>& asked_of_me) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  HaloPlan plan;
  plan.send_offsets = {0};
  plan.receive_offsets = {0};
  for (std::size_t r = 0; r < ranks; ++r) {
    if (asked[r].empty() && asked_of_me[r].empty()) continue;
    if (static_cast<int>(r) == comm.rank())
      fail(ExitCode::kRuntime, "rank {} lists its own nodes as ghosts (inconsistent partition)", comm.rank());
    plan.peers.push_back(static_cast<int>(r));
    for (const std::int64_t node : asked_of_me[r]) {
      const std::int64_t local = local_id(global_node, node);
      if (local >= static_cast<std::int64_t>(global_node.size()) || global_node[local] != node)
        fail(ExitCode::kRuntime, "rank {} asked rank {} for node {}, which it does not hold", r, comm.rank(), node);
      plan.send_nodes.push_back(static_cast<node_index>(local));
    }
    for (const std::int64_t node : asked[r])
      plan.receive_nodes.push_back(static_cast<node_index>(local_id(global_node, node)));
    plan.send_offsets.push_back(static_cast<std::int64_t>(plan.send_nodes.size()));
    plan.receive_offsets.push_back(static_cast<std::int64_t>(plan.receive_nodes.size()));
  }
  return plan;
}

/// Builds the local numbering, mesh and owned states from the pieces (no collective: a rank that fails here meets
/// the others in their next collective). The ghosts and their owners stay in pieces for the halo plan.
LocalPart build_local_part(const Communicator& comm, FilePart& pieces, std::string source) {
  LocalPart part;
  RankLayout& layout = part.layout;
  layout.global_nodes = pieces.global_nodes;
  layout.global_edges = pieces.global_edges;
  layout.source = std::move(source);
  layout.global_node.resize(pieces.owned.size() + pieces.ghosts.size());
  std::merge(pieces.owned.begin(), pieces.owned.end(), pieces.ghosts.begin(), pieces.ghosts.end(),
             layout.global_node.begin());
  const auto n_local = static_cast<std::int64_t>(layout.global_node.size());
  const LocalIds local_of(layout.global_node, pieces.owned, pieces.ghosts);
  layout.owned_nodes.reserve(pieces.owned.size());
  for (const std::int64_t node : pieces.owned) layout.owned_nodes.push_back(static_cast<node_index>(local_of(node)));

  part.mesh = std::move(pieces.edges);
  part.mesh.n_nodes = n_local;
  for (node_index& node : part.mesh.edges) {
    const std::int64_t global = node;
    node = static_cast<node_index>(local_of(global));
    if (node >= n_local || layout.global_node[node] != global)
      fail(ExitCode::kInvalidInput, "the edges of rank {} reach node {}, neither owned nor a ghost of it", comm.rank(),
           global);
  }
  layout.figures = count_part(comm, part.mesh, layout);

  part.state.gamma = pieces.gamma;
  part.state.Q.assign(static_cast<std::size_t>(n_local) * kBlock, 0.0);
  for (std::size_t k = 0; k < layout.owned_nodes.size(); ++k)
    std::copy_n(&pieces.owned_state[k * kBlock], kBlock,
                &part.state.Q[static_cast<std::size_t>(layout.owned_nodes[k]) * kBlock]);
  layout.owned_row_start = std::move(pieces.owned_row_start);
  return part;
}

/// The pieces made into the rank's part (collective): local numbering, the check that the parts together hold
/// every edge at both ends (check_edge_coverage: whichever path made them, a part that misses an edge of its nodes
/// would assemble a wrong row), the halo plan and the ghost states. What fails on one rank (a bad piece, an
/// allocation) reaches the others in their next collective.
LocalPart assemble_part(const Communicator& comm, FilePart pieces, std::string source, const std::string& mesh_file) {
  LocalPart part = build_local_part(comm, pieces, std::move(source));
  const std::vector<std::vector<std::int64_t>> asked = ghosts_by_owner(comm, pieces.ghosts, pieces.ghost_owner);

  const PartStatistics& figures = part.layout.figures;
  // Every local edge has one owned end, or two when it is not cut: the same sum, so the same verdict, on every rank.
  check_edge_coverage(mesh_file, comm.sum(2 * figures.incident_edges() - figures.cut_edges), part.layout.global_edges);
  const std::vector<std::vector<std::int64_t>> asked_of_me = comm.all_to_all(asked);
  part.layout.halo = plan_halo(comm, part.layout.global_node, asked, asked_of_me);
  GhostRowBuffers buffers(part.layout.halo);

  exchange_ghost_states(comm, part.layout.halo, part.state.Q.data(), buffers);
  return part;
}

/// Rows start where the owned nodes' degrees put them: a partitioned file's parts own consecutive rows, so a
/// rank's first row starts after the rows of the ranks before it.
std::vector<std::int64_t> consecutive_row_starts(const Communicator& comm, const FilePart& pieces) {
  std::vector<std::int64_t> degree(pieces.owned.size(), 0);
  const std::int64_t first = pieces.owned.empty() ? 0 : pieces.owned.front();
  for (edge_index e = 0; e < pieces.edges.n_edges(); ++e)
    for (const std::int64_t node : {std::int64_t{pieces.edges.left(e)}, std::int64_t{pieces.edges.right(e)}})
      if (node >= first && node < first + static_cast<std::int64_t>(pieces.owned.size())) ++degree[node - first];
  const std::int64_t blocks = std::accumulate(degree.begin(), degree.end(), std::int64_t{0});
  std::vector<std::int64_t> starts(pieces.owned.size());
  std::exclusive_scan(degree.begin(), degree.end(), starts.begin(), comm.exclusive_sum(blocks));
  return starts;
}

/// ---- a file partitioned for these ranks: every rank reads its own slices ---------------------------------------

/// What a rank reads of a file partitioned for the ranks, with what the checks that need the other ranks use.
struct SliceRead {
  FilePart pieces;
  PartitionSlice slice;
  EdgeEnds held;  ///< the edges of its range and its halo edges, as (L, R) in file numbering
};

/// Reads the rank's slices and checks what it can alone (partition_check.hpp): its offsets and lists, and that its
/// edges are its own; pieces.ghosts are then the nodes its edges reach (compared with its ghost list once the halo
/// list is known to be complete).
SliceRead read_part_slices(const Communicator& comm, const std::string& mesh_file, const std::string& state_file) {
  SliceRead read;
  read.slice = read_partition_part(mesh_file, comm.rank());
  const PartitionSlice& slice = read.slice;
  // Rank 0 read the part count; a rank whose file says otherwise must not enter the exchange below with it.
  require_parts(mesh_file, slice.parts, comm.size());
  const std::int64_t r = comm.rank();
  const std::int64_t first_node = slice.node_offsets[r], end_node = slice.node_offsets[r + 1];
  const std::int64_t first_edge = slice.edge_offsets[r], end_edge = slice.edge_offsets[r + 1];
  std::vector<std::int64_t> edge_ids(static_cast<std::size_t>(end_edge - first_edge));
  std::iota(edge_ids.begin(), edge_ids.end(), first_edge);
  std::vector<std::int64_t> merged(edge_ids.size() + slice.halo.values.size());
  std::merge(edge_ids.begin(), edge_ids.end(), slice.halo.values.begin(), slice.halo.values.end(), merged.begin());

  FilePart& pieces = read.pieces;
  pieces.edges = read_edge_mesh_slice(mesh_file, merged, pieces.global_edges);
  pieces.global_nodes = pieces.edges.n_nodes;
  for (std::size_t k = 0; k < merged.size(); ++k) {
    const bool in_range = merged[k] >= first_edge && merged[k] < end_edge;
    std::vector<node_index>& ends = in_range ? read.held.range_ends : read.held.halo_ends;
    ends.insert(ends.end(), {pieces.edges.edges[2 * k], pieces.edges.edges[2 * k + 1]});
  }
  pieces.ghosts = check_held_edges(mesh_file, slice.node_offsets, slice.edge_offsets, slice.halo, read.held);
  for (const std::int64_t ghost : pieces.ghosts)
    pieces.ghost_owner.push_back(std::upper_bound(slice.node_offsets.begin(), slice.node_offsets.end(), ghost) -
                                 slice.node_offsets.begin() - 1);
  pieces.owned.resize(static_cast<std::size_t>(end_node - first_node));
  std::iota(pieces.owned.begin(), pieces.owned.end(), first_node);
  const FlowState state = read_flow_state_slice(state_file, pieces.global_nodes, first_node, end_node);
  pieces.owned_state = state.Q;
  pieces.gamma = state.gamma;
  return read;
}

/// Reads the rank's slices (collective): its own checks, then the halo edges every part must list, which only the
/// parts storing them can tell: each rank sends every other the edges of its range that end at that rank's nodes
/// (one all-to-all), and compares what it receives with its halo list, then its ghosts with the nodes its edges
/// reach. A rank that fails its reading or checking meets the others in the all-to-all or the next collective, and
/// every rank throws the first failure of the lowest failing rank.
FilePart read_checked_slices(const Communicator& comm, const std::string& mesh_file, const std::string& state_file) {
  SliceRead read = read_part_slices(comm, mesh_file, state_file);
  // [rank]: the halo edges of this rank's range that rank must list
  const std::vector<std::vector<std::int64_t>> owed =
      halo_edges_by_part(read.slice.node_offsets, read.slice.edge_offsets[comm.rank()], read.held.range_ends);

  const std::vector<std::vector<std::int64_t>> given = comm.all_to_all(owed);
  const PartitionSlice& slice = read.slice;
  std::vector<std::int64_t> halo;  // the ranks' edge ranges follow each other, so the pieces come ascending
  for (const std::vector<std::int64_t>& piece : given) halo.insert(halo.end(), piece.begin(), piece.end());
  check_piece_matches(mesh_file, partition_paths::kHaloEdges, slice.halo, halo, "halo edges");
  check_piece_matches(mesh_file, partition_paths::kGhostNodes, slice.ghosts, read.pieces.ghosts, "ghost nodes");

  return std::move(read.pieces);
}

/// The progress line that sums up a partition.
std::string partition_line(const PartitionRecord& p) {
  const PartitionStatistics& s = p.statistics;
  return fmt::format(
      "partition ({}): {} rank{}, edge cut {}, ghosts per rank {} to {}, imbalance {:.3f} (edges), "
      "{:.3f} (nodes)",
      p.source, p.ranks(), p.ranks() == 1 ? "" : "s", s.edge_cut, s.ghosts_min(), s.ghosts_max(), s.edge_imbalance,
      s.node_imbalance);
}

/// A file's part (make_part): the whole mesh on one process; on many, a file partitioned for the ranks by its slices,
/// any other partitioned by all ranks (partition_by_slices), balancing `balance`.
LocalPart read_part(const Communicator& comm, const std::string& mesh_file, const std::string& state_file,
                    PartBalance balance, const Note& note) {
  const auto start = std::chrono::steady_clock::now();
  const std::string states = state_file.empty() ? mesh_file : state_file;
  LocalPart part;
  if (!comm.distributed()) {
    part.mesh = read_edge_mesh(mesh_file);
    part.state = read_flow_state(states, part.mesh.n_nodes);
    part.layout = RankLayout::whole_mesh(part.mesh.n_nodes, part.mesh.n_edges());
    part.partition = record_partition(comm, part.layout);
    say(note, fmt::format("read {}: {} nodes, {} edges ({:.2f} s)", mesh_file, part.mesh.n_nodes, part.mesh.n_edges(),
                          seconds_since(start)));
    return part;
  }
  const Note root_note = comm.is_root() ? note : Note();
  std::int64_t parts = 0;
  if (comm.is_root()) parts = partition_parts(mesh_file);

  comm.broadcast_bytes(&parts, sizeof parts);
  FilePart pieces;
  std::string source;
  std::vector<SetupStep> steps;
  if (parts == comm.size()) {
    pieces = read_checked_slices(comm, mesh_file, states);
    pieces.owned_row_start = consecutive_row_starts(comm, pieces);  // collective: after every rank has read
    source = "file partition";
    say(root_note, fmt::format("read {}: each of {} ranks its own slices ({:.2f} s)", mesh_file, comm.size(),
                               seconds_since(start)));
  } else {
    if (parts > 1) require_parts(mesh_file, parts, comm.size());  // every rank knows parts: all throw alike
    if (!ptscotch_available() && !metis_available())
      fail(ExitCode::kUsage,
           "{} is not partitioned for {} ranks and this build has no METIS to partition it: partition it on a "
           "machine with METIS ('fluxjac mesh partition {} --parts {} -o OUT.h5') or rebuild with libmetis-dev",
           mesh_file, comm.size(), mesh_file, comm.size());
    source = graph_partition_method(comm, comm.size(), ScotchStrategy::kDefault, balance);
    say(root_note, fmt::format("{} is not partitioned for {} ranks: {}", mesh_file, comm.size(),
                               ptscotch_available() ? "PT-Scotch on all ranks, each reading its slices"
                                                    : "METIS on rank 0, each rank reading its slices"));
    SlicePartition sliced =
        partition_by_slices(comm, mesh_file, states, note, false, ScotchStrategy::kDefault, balance);
    pieces = std::move(sliced.pieces);
    steps = std::move(sliced.steps);
  }
  part = assemble_part(comm, std::move(pieces), source, mesh_file);
  part.partition = record_partition(comm, part.layout);
  part.partition.steps = std::move(steps);
  say(root_note, partition_line(part.partition));
  return part;
}

}  // namespace

LocalPart part_from_pieces(const Communicator& comm, FilePart pieces, const std::string& source,
                           const std::string& name, const Note& note) {
  pieces.owned_row_start = consecutive_row_starts(comm, pieces);
  LocalPart part = assemble_part(comm, std::move(pieces), source, name);
  part.partition = record_partition(comm, part.layout);
  if (comm.is_root()) say(note, partition_line(part.partition));
  return part;
}

LocalPart make_part(const Communicator& comm, const PartSource& source, const Note& note) {
  if (source.spec) return generate_part(comm, *source.spec, source.keep_geometry, note, source.balance);
  return read_part(comm, source.mesh_file, source.state_file, source.balance, note);
}

void exchange_packed_rows(const Communicator& comm, const HaloPlan& halo, const double* send, double* receive) {
  std::vector<const double*> send_at;
  std::vector<double*> receive_at;
  std::vector<std::size_t> send_counts, receive_counts;
  for (std::size_t p = 0; p < halo.peers.size(); ++p) {
    send_at.push_back(send + halo.send_offsets[p] * kBlock);
    receive_at.push_back(receive + halo.receive_offsets[p] * kBlock);
    send_counts.push_back(static_cast<std::size_t>(halo.send_offsets[p + 1] - halo.send_offsets[p]) * kBlock);
    receive_counts.push_back(static_cast<std::size_t>(halo.receive_offsets[p + 1] - halo.receive_offsets[p]) * kBlock);
  }
  comm.exchange(halo.peers, send_at, send_counts, receive_at, receive_counts);
}

GhostRowBuffers::GhostRowBuffers(const HaloPlan& halo)
    : send(static_cast<std::size_t>(halo.send_count()) * kBlock),
      receive(static_cast<std::size_t>(halo.receive_count()) * kBlock) {}

void exchange_ghost_states(const Communicator& comm, const HaloPlan& halo, double* state, GhostRowBuffers& buffers) {
  if (buffers.send.size() != static_cast<std::size_t>(halo.send_count()) * kBlock ||
      buffers.receive.size() != static_cast<std::size_t>(halo.receive_count()) * kBlock)
    fail(ExitCode::kRuntime, "ghost exchange buffers of {} and {} values for a plan of {} and {} rows",
         buffers.send.size(), buffers.receive.size(), halo.send_count(), halo.receive_count());
  for (std::size_t k = 0; k < halo.send_nodes.size(); ++k)
    std::copy_n(state + static_cast<std::size_t>(halo.send_nodes[k]) * kBlock, kBlock, &buffers.send[k * kBlock]);
  exchange_packed_rows(comm, halo, buffers.send.data(), buffers.receive.data());
  for (std::size_t k = 0; k < halo.receive_nodes.size(); ++k)
    std::copy_n(&buffers.receive[k * kBlock], kBlock, state + static_cast<std::size_t>(halo.receive_nodes[k]) * kBlock);
}

RankLayout RankLayout::whole_mesh(std::int64_t nodes, std::int64_t edges) {
  RankLayout layout;
  layout.whole_mesh_ = true;
  layout.global_nodes = nodes;
  layout.global_edges = edges;
  layout.halo.send_offsets = {0};
  layout.halo.receive_offsets = {0};
  layout.source = "whole mesh";
  layout.figures = {nodes, edges, 0, 0, 0};
  return layout;
}

std::vector<std::uint8_t> RankLayout::owned_mask() const {
  if (whole_mesh_) return std::vector<std::uint8_t>(static_cast<std::size_t>(global_nodes), 1);
  std::vector<std::uint8_t> mask(global_node.size(), 0);
  for (const node_index node : owned_nodes) mask[node] = 1;
  return mask;
}

std::vector<std::pair<node_index, node_index>> RankLayout::owned_runs() const {
  if (whole_mesh_) return {{0, static_cast<node_index>(global_nodes)}};
  std::vector<std::pair<node_index, node_index>> runs;
  for (const node_index node : owned_nodes) {
    if (!runs.empty() && runs.back().second == node)
      ++runs.back().second;
    else
      runs.push_back({node, node + 1});
  }
  return runs;
}

PartStatistics count_part(const Communicator& comm, const EdgeMesh& mesh, const RankLayout& layout) {
  const std::vector<std::uint8_t> owned = layout.owned_mask();
  PartStatistics figures;
  figures.owned_nodes = layout.owned_count();
  figures.ghosts = layout.local_count() - figures.owned_nodes;
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const bool left = owned[mesh.left(e)], right = owned[mesh.right(e)];
    if (!left && !right)
      fail(ExitCode::kInvalidInput, "rank {} holds edge ({}, {}), which touches none of its nodes", comm.rank(),
           layout.global_id(mesh.left(e)), layout.global_id(mesh.right(e)));
    figures.owned_edges += left;
    figures.halo_edges += !left;
    figures.cut_edges += left != right;
  }
  return figures;
}

PartitionRecord record_partition(const Communicator& comm, const RankLayout& layout) {
  return {layout.source, gather_statistics(comm, layout.figures), {}};
}

}  // namespace fluxjac
