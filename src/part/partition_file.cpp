#include "part/partition_file.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "part/local_part.hpp"
#include "part/part_writer.hpp"
#include "part/slice_partition.hpp"
#include "partition/graph_partition.hpp"
#include "partition/partition_io.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

/// The rank's part renumbered: owned nodes first_new, first_new + 1, ... in file order; ghosts under the ids their
/// owners give them; local ids ascending with the new ids (part/local_part.hpp), as the writer needs.
LocalPart renumbered_part(const Communicator& comm, FilePart& pieces, OwnedNodeData& data,
                          std::vector<std::int64_t>& new_of_ghost_asked) {
  const auto n_owned = static_cast<std::int64_t>(pieces.owned.size());
  const std::int64_t first_new = comm.exclusive_sum(n_owned);
  // Each owner answers with the new ids of the ghosts asked of it, in the order asked.
  std::vector<std::vector<std::int64_t>> asked(static_cast<std::size_t>(comm.size()));
  for (std::size_t g = 0; g < pieces.ghosts.size(); ++g)
    asked[static_cast<std::size_t>(pieces.ghost_owner[g])].push_back(pieces.ghosts[g]);
  std::vector<std::vector<std::int64_t>> answers = comm.all_to_all(asked);
  for (std::vector<std::int64_t>& answer : answers)
    for (std::int64_t& node : answer)
      node = first_new + (std::lower_bound(pieces.owned.begin(), pieces.owned.end(), node) - pieces.owned.begin());
  answers = comm.all_to_all(answers);
  std::vector<std::size_t> next(static_cast<std::size_t>(comm.size()), 0);
  new_of_ghost_asked.clear();
  for (std::size_t g = 0; g < pieces.ghosts.size(); ++g) {
    const auto owner = static_cast<std::size_t>(pieces.ghost_owner[g]);
    new_of_ghost_asked.push_back(answers[owner][next[owner]++]);
  }

  // (new id, file id, owned index or -1) of every local node, sorted by new id: the local numbering.
  struct Node {
    std::int64_t new_id, file_id, owned_index;
  };
  std::vector<Node> nodes;
  for (std::int64_t k = 0; k < n_owned; ++k) nodes.push_back({first_new + k, pieces.owned[k], k});
  for (std::size_t g = 0; g < pieces.ghosts.size(); ++g) nodes.push_back({new_of_ghost_asked[g], pieces.ghosts[g], -1});
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.new_id < b.new_id; });
  const auto n_local = static_cast<std::int64_t>(nodes.size());
  std::vector<std::pair<std::int64_t, node_index>> local_of_file(nodes.size());
  for (std::int64_t local = 0; local < n_local; ++local)
    local_of_file[local] = {nodes[local].file_id, static_cast<node_index>(local)};
  std::sort(local_of_file.begin(), local_of_file.end());

  LocalPart part;
  RankLayout& layout = part.layout;
  layout.global_nodes = pieces.global_nodes;
  layout.global_edges = pieces.global_edges;
  part.mesh = std::move(pieces.edges);
  part.mesh.n_nodes = n_local;
  for (node_index& node : part.mesh.edges)
    node =
        std::lower_bound(local_of_file.begin(), local_of_file.end(), std::make_pair(std::int64_t{node}, node_index{0}))
            ->second;
  part.state.gamma = pieces.gamma;
  part.state.Q.assign(static_cast<std::size_t>(n_local) * kBlock, 0.0);
  if (!data.coords.empty()) part.mesh.coords.assign(static_cast<std::size_t>(n_local) * 3, 0.0);
  if (!data.volumes.empty()) part.mesh.volumes.assign(static_cast<std::size_t>(n_local), 0.0);
  for (std::int64_t local = 0; local < n_local; ++local) {
    const Node& node = nodes[local];
    layout.global_node.push_back(node.new_id);
    if (node.owned_index < 0) continue;
    const auto k = static_cast<std::size_t>(node.owned_index);
    layout.owned_nodes.push_back(static_cast<node_index>(local));
    std::copy_n(&pieces.owned_state[k * kBlock], kBlock, &part.state.Q[local * kBlock]);
    if (!data.coords.empty()) std::copy_n(&data.coords[3 * k], 3, &part.mesh.coords[3 * local]);
    if (!data.volumes.empty()) part.mesh.volumes[local] = data.volumes[k];
  }
  layout.figures = count_part(comm, part.mesh, layout);
  return part;
}

/// One process: the whole mesh in memory, METIS into request.parts parts.
PartitionOutcome partition_whole_mesh(const Communicator& comm, const PartitionRequest& request) {
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
      return h5::exists(file, edge_mesh_paths::kStateGroup);
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
  outcome.steps.push_back(finish_step(comm, "read", StepKind::kRead, start));

  // ---- partition and renumber --------------------------------------------------------------------------
  start = std::chrono::steady_clock::now();
  const NodePartition partition = partition_nodes(mesh, request.parts);
  outcome.steps.push_back(finish_step(comm, "partition", StepKind::kPartition, start));
  start = std::chrono::steady_clock::now();
  const PartitionedMesh partitioned = renumber_by_part(mesh, partition, original_of_input);
  if (state) state->Q = permute_node_rows(state->Q, kBlock, partitioned.new_id_of_old);
  if (!extras.boundary_nodes.empty())
    extras.boundary_nodes = permute_node_rows(extras.boundary_nodes, 1, partitioned.new_id_of_old);
  outcome.statistics = partition_statistics(partitioned.mesh, partitioned.layout);
  outcome.method = partition_method(request.parts);
  outcome.steps.push_back(finish_step(comm, "renumber", StepKind::kRenumber, start));

  // ---- write: an ordinary edge mesh plus /partition, in one atomic step ---------------------------------
  start = std::chrono::steady_clock::now();
  write_edge_mesh_with_extras(request.output, partitioned.mesh, state ? &*state : nullptr, extras,
                              [&](const h5::File& file) { write_partition(file, partitioned.layout, outcome.method); });
  outcome.steps.push_back(finish_step(comm, "write", StepKind::kWrite, start));
  return outcome;
}

/// Many ranks, one part each: partitioned, renumbered and written by all of them.
PartitionOutcome partition_in_parallel(const Communicator& comm, const PartitionRequest& request, const Note& note) {
  PartitionOutcome outcome;
  outcome.has_state = true;
  std::string state_file = request.state;
  if (request.parts != comm.size())
    fail(ExitCode::kUsage,
         "under mpirun, 'fluxjac mesh partition' makes one part per rank: --parts {} needs {} ranks (mpirun -np {}), "
         "not {}",
         request.parts, request.parts, request.parts, comm.size());
  if (!ptscotch_available())
    fail(ExitCode::kUsage,
         "'fluxjac mesh partition' under mpirun needs PT-Scotch, and this build has none: install libptscotch-dev "
         "and rebuild, or run it as one process (METIS)");
  outcome.previous_parts = partition_parts(request.input);
  if (state_file.empty()) {
    const h5::File file = h5::File::open(request.input);
    if (!h5::exists(file, edge_mesh_paths::kState))
      fail(ExitCode::kUsage,
           "{} has no state: under mpirun the partitioned file carries one (give it with --state, or partition as "
           "one process)",
           request.input);
    state_file = request.input;
  }

  const Note root_note = comm.is_root() ? note : Note();
  SlicePartition sliced = partition_by_slices(comm, request.input, state_file, note, true, request.strategy);
  outcome.steps = std::move(sliced.steps);
  outcome.method = graph_partition_method(comm, comm.size(), request.strategy);
  outcome.n_nodes = sliced.pieces.global_nodes;
  outcome.n_edges = sliced.pieces.global_edges;

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::int64_t> ghost_ids;
  std::vector<std::int64_t> original = std::move(sliced.node_data.original);
  if (original.empty()) original = sliced.pieces.owned;  // the input's numbering is the original one
  EdgeMeshExtras extras =
      read_edge_mesh_extras(request.input, outcome.n_nodes, 0, 0);  // the attributes; flags by rows below

  extras.boundary_nodes = std::move(sliced.node_data.boundary_nodes);
  const LocalPart part = renumbered_part(comm, sliced.pieces, sliced.node_data, ghost_ids);
  outcome.statistics = gather_statistics(comm, part.layout.figures);
  write_partitioned_file(comm, part, original, request.output, outcome.method, extras);
  outcome.steps.push_back(finish_step(comm, "write", StepKind::kWrite, start));
  say(root_note, step_line(outcome.steps.back()));
  return outcome;
}

}  // namespace

PartitionOutcome partition_mesh_file(const Communicator& comm, const PartitionRequest& request, const Note& note) {
  if (!comm.distributed() && request.strategy != ScotchStrategy::kDefault)
    fail(ExitCode::kUsage,
         "--scotch-strategy {} chooses PT-Scotch's strategy under mpirun; one process partitions with METIS: drop it, "
         "or run under 'mpirun -np {}'",
         to_string(request.strategy), request.parts);
  return comm.distributed() ? partition_in_parallel(comm, request, note) : partition_whole_mesh(comm, request);
}

}  // namespace fluxjac
