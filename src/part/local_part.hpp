// fluxjac — one rank's part of a mesh (docs/design.md, "Many GPUs"): the nodes it owns, one layer of ghost nodes,
// every edge incident to an owned node (the cut edges included), and the halo plan that refreshes the ghost states
// from their owners. One process is the one-rank case of the same layout: it owns every node and has no ghosts, and
// its local ids are the file's (RankLayout::whole_mesh, which stores nothing per node), so one process and many run
// the same code from the mesh reader on.
//
// Local numbering keeps the order of the file: local node k is the k-th smallest file id among the owned and ghost
// nodes, and the local edges are the file's edges in file order. So every owned row of the local block-CSR pattern
// lists its columns in the same order as the whole mesh's pattern, and every sum over a row (node assembly's Adiag,
// the CPU reference's edge-ordered Adiag) adds the same terms in the same order as one process: the owned rows
// are bit for bit those of a single-process run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "mesh/generator.hpp"
#include "mesh/part_balance.hpp"
#include "part/file_part.hpp"
#include "partition/partition.hpp"
#include "ranks/communicator.hpp"
#include "ranks/setup_steps.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// \brief Which ghost states a rank sends and receives in one halo exchange.
struct HaloPlan {
  std::vector<int> peers;                     ///< ranks exchanged with, ascending
  std::vector<std::int64_t> send_offsets;     ///< [peers + 1] into send_nodes
  std::vector<node_index> send_nodes;         ///< local ids of owned nodes whose states peers need
  std::vector<std::int64_t> receive_offsets;  ///< [peers + 1] into receive_nodes
  std::vector<node_index> receive_nodes;      ///< local ids of ghost nodes, in the order their owner sends
  std::int64_t send_count() const { return static_cast<std::int64_t>(send_nodes.size()); }
  std::int64_t receive_count() const { return static_cast<std::int64_t>(receive_nodes.size()); }
};

/// \brief How a run's parts were made and how good they are (the report's `partition`, docs/bench-json.md).
struct PartitionRecord {
  /// "whole mesh", "file partition", the partitioner's method (partition_method) or the generator's
  /// (generated_parts_method).
  std::string source;
  PartitionStatistics statistics;  ///< one part per rank
  /// The steps that made the parts, with their time and memory per rank (a parallel partition's: read slices, graph,
  /// partition, redistribute; generation in parts: nodes and cells, dual metrics, ordering, state, part); empty on
  /// the other paths.
  std::vector<SetupStep> steps;
  int ranks() const { return static_cast<int>(statistics.parts.size()); }
};

/// \brief Where a rank's part lies in the whole mesh, and how its ghosts are refreshed. Read it through the
/// accessors: the whole mesh's layout (one process) keeps global_node, owned_nodes and owned_row_start empty.
struct RankLayout {
  std::int64_t global_nodes = 0;
  std::int64_t global_edges = 0;
  std::vector<std::int64_t> global_node;  ///< [local nodes], ascending: the file id of each local node
  std::vector<node_index> owned_nodes;    ///< local ids of the owned nodes, ascending
  HaloPlan halo;
  /// [owned]: where each owned row starts in the whole mesh's block-CSR (its Aoff block offset).
  std::vector<std::int64_t> owned_row_start;
  /// "whole mesh", "file partition", the partitioner's method or the generator's.
  std::string source;
  PartStatistics figures;  ///< this rank's part

  /// \brief One process's layout: every node owned, no ghosts, local ids = file ids; nothing stored per node.
  static RankLayout whole_mesh(std::int64_t nodes, std::int64_t edges);
  /// True for whole_mesh's layout.
  bool is_whole_mesh() const { return whole_mesh_; }
  /// Owned and ghost nodes.
  std::int64_t local_count() const {
    return whole_mesh_ ? global_nodes : static_cast<std::int64_t>(global_node.size());
  }
  std::int64_t owned_count() const {
    return whole_mesh_ ? global_nodes : static_cast<std::int64_t>(owned_nodes.size());
  }
  /// The local id of the k-th owned node (ascending).
  node_index owned_node(std::int64_t k) const { return whole_mesh_ ? static_cast<node_index>(k) : owned_nodes[k]; }
  /// The file id of a local node.
  std::int64_t global_id(node_index local) const { return whole_mesh_ ? local : global_node[local]; }
  /// [local nodes]: 1 where the rank owns the node.
  std::vector<std::uint8_t> owned_mask() const;
  /// The owned local nodes as ranges [first, end) of consecutive local ids, ascending; the whole mesh is one range.
  std::vector<std::pair<node_index, node_index>> owned_runs() const;

 private:
  bool whole_mesh_ = false;
};

/// \brief One rank's part of the mesh: local mesh and state, the layout, and the partition's figures.
struct LocalPart {
  EdgeMesh mesh;    ///< local ids; edges in file order
  FlowState state;  ///< owned rows from the file, ghost rows from the halo exchange
  RankLayout layout;
  PartitionRecord partition;
  /// What a partitioned file of the parts records of the owned nodes, in owned order (generated parts with
  /// PartSource::keep_geometry; else empty): the id each had in the spec's natural numbering, and its boundary flag.
  std::vector<std::int64_t> original_ids;
  std::vector<std::uint8_t> boundary_flags;
};

/// \brief Where a rank's part comes from: an edge-mesh file (partitioned for the ranks or not) or a box-mesh spec.
struct PartSource {
  std::string mesh_file;            ///< the edge mesh; without spec, required
  std::string state_file;           ///< the state's file; empty: the mesh file
  std::optional<BoxMeshSpec> spec;  ///< set: the mesh generated in parts, one per rank (no file is read)
  bool keep_geometry = false;       ///< a generated part keeps what a file of it records (LocalPart::original_ids)
  /// What the parts balance where they are made here (a file partitioned by the ranks, a spec generated in parts):
  /// node-assembly work or rows (mesh/part_balance.hpp). A file already partitioned for the ranks keeps its parts.
  PartBalance balance = PartBalance::kAssembly;
};

/// \brief This rank's part from any source (collective): the one way a part is made, for one process and for many.
/// - One process, a file: the whole mesh, laid out with RankLayout::whole_mesh.
/// - Many ranks, a file partitioned by `fluxjac mesh partition` into comm.size() parts: each rank reads its own slices
///   (its node range, its edges and halo edges, its owned states: HDF5 hyperslabs), checked by the rules of
///   partition/partition_check.hpp, the halo list against what the other ranks' edge ranges give it.
/// - Many ranks, any other file: partitioned by all ranks, each reading only its slices (part/slice_partition.hpp,
///   partition/graph_partition.hpp), balancing source.balance.
/// - A spec: each rank generates its part of the box (part/distributed_generator.hpp), on one rank too, in slabs
///   balancing source.balance.
/// Then the ghost states are exchanged once, and the ranks check together that every edge lies in the parts of both
/// its ends. Every rank throws the same Error when any rank fails (ranks/communicator.hpp): a file partitioned for
/// another number of ranks, a build with no partitioner for an unpartitioned file, an invalid file or partition, a
/// spec too large for the ranks' memory. `note` receives the progress lines (on rank 0 only).
LocalPart make_part(const Communicator& comm, const PartSource& source, const Note& note);

/// \brief The rank's LocalPart from the pieces it holds in the whole mesh's numbering, its owned ids one range
/// following the previous rank's (collective): local numbering, the check that the parts together hold every edge at
/// both ends, the halo plan, the ghost states and the partition's figures; `source` names how the parts were made,
/// `name` the mesh in messages; the partition line goes to note (rank 0).
LocalPart part_from_pieces(const Communicator& comm, FilePart pieces, const std::string& source,
                           const std::string& name, const Note& note);

/// \brief Exchanges packed rows with the plan's peers over MPI: `send` holds the states of send_nodes in order,
/// `receive` gets those of receive_nodes (host buffers of 5 doubles per row).
void exchange_packed_rows(const Communicator& comm, const HaloPlan& halo, const double* send, double* receive);

/// \brief The host buffers of exchange_ghost_states for one plan. Allocated before the exchanges, so that the timed
/// loop allocates nothing.
struct GhostRowBuffers {
  GhostRowBuffers() = default;
  explicit GhostRowBuffers(const HaloPlan& halo);
  std::vector<double> send;     ///< [send rows][5]
  std::vector<double> receive;  ///< [receive rows][5]
};

/// \brief Fills the ghost rows of a host state (rows of 5 doubles, local ids) from their owners (MPI), through
/// buffers sized for halo (it allocates nothing).
void exchange_ghost_states(const Communicator& comm, const HaloPlan& halo, double* state, GhostRowBuffers& buffers);

/// \brief The figures of a rank's part (mesh: its local edges; layout: which local nodes it owns). Error(kInvalidInput)
/// when an edge touches none of its owned nodes.
PartStatistics count_part(const Communicator& comm, const EdgeMesh& mesh, const RankLayout& layout);

/// \brief How the ranks' parts were made (layout.source) and their statistics, gathered (collective).
PartitionRecord record_partition(const Communicator& comm, const RankLayout& layout);

}  // namespace fluxjac
