#include "part/partition_file.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "part/held_ids.hpp"
#include "part/local_part.hpp"
#include "part/part_writer.hpp"
#include "part/slice_partition.hpp"
#include "partition/graph_partition.hpp"
#include "partition/partition_io.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

/// The pieces in the numbering of the partitioned file (collective): the owned nodes become first_new, first_new + 1,
/// ... in file order, the ghosts take the ids their owners give them, and the edges' ends follow.
void renumber_pieces(const Communicator& comm, FilePart& pieces) {
  const auto n_owned = static_cast<std::int64_t>(pieces.owned.size());
  const std::int64_t first_new = comm.exclusive_sum(n_owned);
  const SortedIds owned_places(pieces.owned);
  // Each owner answers with the new ids of the ghosts asked of it, in the order asked.
  std::vector<std::vector<std::int64_t>> asked(static_cast<std::size_t>(comm.size()));
  for (std::size_t g = 0; g < pieces.ghosts.size(); ++g)
    asked[static_cast<std::size_t>(pieces.ghost_owner[g])].push_back(pieces.ghosts[g]);
  std::vector<std::vector<std::int64_t>> answers = comm.all_to_all(asked);
  for (std::vector<std::int64_t>& answer : answers)
    for (std::int64_t& node : answer) node = first_new + static_cast<std::int64_t>(owned_places.place(node));
  answers = comm.all_to_all(answers);

  // New ids by place among the held file ids (owned and ghosts merged, ascending).
  std::vector<std::int64_t> held(pieces.owned.size() + pieces.ghosts.size());
  std::merge(pieces.owned.begin(), pieces.owned.end(), pieces.ghosts.begin(), pieces.ghosts.end(), held.begin());
  const SortedIds held_places(held);
  std::vector<std::int64_t> new_id(held.size());
  for (std::int64_t k = 0; k < n_owned; ++k) new_id[held_places.place(pieces.owned[k])] = first_new + k;
  std::vector<std::size_t> next(static_cast<std::size_t>(comm.size()), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> ghosts;  // (new id, owner)
  for (std::size_t g = 0; g < pieces.ghosts.size(); ++g) {
    const auto owner = static_cast<std::size_t>(pieces.ghost_owner[g]);
    ghosts.emplace_back(answers[owner][next[owner]++], pieces.ghost_owner[g]);
    new_id[held_places.place(pieces.ghosts[g])] = ghosts.back().first;
  }
  for (node_index& node : pieces.edges.edges) node = static_cast<node_index>(new_id[held_places.place(node)]);
  std::iota(pieces.owned.begin(), pieces.owned.end(), first_new);
  std::sort(ghosts.begin(), ghosts.end());
  for (std::size_t g = 0; g < ghosts.size(); ++g) std::tie(pieces.ghosts[g], pieces.ghost_owner[g]) = ghosts[g];
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
  const NodePartition partition = partition_nodes(mesh, request.parts, request.balance);
  outcome.steps.push_back(finish_step(comm, "partition", StepKind::kPartition, start));
  start = std::chrono::steady_clock::now();
  const PartitionedMesh partitioned = renumber_by_part(mesh, partition, original_of_input);
  if (state) state->Q = permute_node_rows(state->Q, kBlock, partitioned.new_id_of_old);
  if (!extras.boundary_nodes.empty())
    extras.boundary_nodes = permute_node_rows(extras.boundary_nodes, 1, partitioned.new_id_of_old);
  outcome.statistics = partition_statistics(partitioned.mesh, partitioned.layout);
  outcome.method = partition_method(request.parts, request.balance);
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
  SlicePartition sliced =
      partition_by_slices(comm, request.input, state_file, note, true, request.strategy, request.balance);
  outcome.steps = std::move(sliced.steps);
  outcome.method = graph_partition_method(comm, comm.size(), request.strategy, request.balance);
  outcome.n_nodes = sliced.pieces.global_nodes;
  outcome.n_edges = sliced.pieces.global_edges;

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::int64_t> original = std::move(sliced.node_data.original);
  if (original.empty()) original = sliced.pieces.owned;  // the input's numbering is the original one
  EdgeMeshExtras extras =
      read_edge_mesh_extras(request.input, outcome.n_nodes, 0, 0);  // the attributes; flags by rows below
  extras.boundary_nodes = std::move(sliced.node_data.boundary_nodes);
  renumber_pieces(comm, sliced.pieces);
  LocalPart part = part_from_pieces(comm, std::move(sliced.pieces), outcome.method, request.input, Note());
  outcome.statistics = part.partition.statistics;
  // The owned rows of the geometry the file has (ghost rows are not written).
  const OwnedNodeData& data = sliced.node_data;
  if (!data.coords.empty()) part.mesh.coords.assign(3 * static_cast<std::size_t>(part.layout.local_count()), 0.0);
  if (!data.volumes.empty()) part.mesh.volumes.assign(static_cast<std::size_t>(part.layout.local_count()), 0.0);
  for (std::int64_t k = 0; k < part.layout.owned_count(); ++k) {
    const auto local = static_cast<std::size_t>(part.layout.owned_node(k));
    if (!data.coords.empty()) std::copy_n(&data.coords[3 * k], 3, &part.mesh.coords[3 * local]);
    if (!data.volumes.empty()) part.mesh.volumes[local] = data.volumes[k];
  }
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
