// fluxjac — one rank's part of a mesh in a many-GPU run (docs/design.md 9): the nodes it owns, one layer of ghost
// nodes, every edge incident to an owned node (the cut edges included), and the halo plan that refreshes the ghost
// states from their owners.
//
// Local numbering keeps the order of the file: local node k is the k-th smallest file id among the owned and ghost
// nodes, and the local edges are the file's edges in file order. So every owned row of the local block-CSR pattern
// lists its columns in the same order as the whole mesh's pattern, and every sum over a row (node assembly's Adiag,
// the CPU reference's edge-ordered Adiag) adds the same terms in the same order as one process: the owned rows
// are bit for bit those of a single-process run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "parallel/communicator.hpp"

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

/// \brief How a rank's part looks and costs (gathered over ranks for the report).
struct PartFigures {
  std::int64_t owned_nodes = 0;
  std::int64_t ghost_nodes = 0;
  std::int64_t local_edges = 0;  ///< edges incident to an owned node: the rank's node-assembly work
  std::int64_t cut_edges = 0;    ///< local edges with a ghost end
};

/// \brief Where a rank's part lies in the whole mesh, and how its ghosts are refreshed.
struct RankLayout {
  std::int64_t global_nodes = 0;
  std::int64_t global_edges = 0;
  std::vector<std::int64_t> global_node;  ///< [local nodes], ascending: the file id of each local node
  std::vector<node_index> owned_nodes;    ///< local ids of the owned nodes, ascending
  HaloPlan halo;
  /// [owned]: where each owned row starts in the whole mesh's block-CSR (its Aoff block offset).
  std::vector<std::int64_t> owned_row_start;
  std::string source;  ///< "file partition" or "METIS on rank 0"
  PartFigures figures;
};

/// \brief One rank's part of the mesh: local mesh and state, and the layout.
struct LocalPart {
  EdgeMesh mesh;    ///< local ids; edges in file order
  FlowState state;  ///< owned rows from the file, ghost rows from the halo exchange
  RankLayout layout;
};

/// \brief Reads this rank's part of an edge mesh (and its state from state_file, or the mesh file when empty):
/// a file partitioned by `fluxjac mesh partition` into comm.size() parts is read by slices (each rank its node
/// range, its edges and halo edges, its owned states: HDF5 hyperslabs), and any other file is read by rank 0,
/// partitioned there with METIS and sent to the ranks. Then the ghost states are exchanged once. Every rank
/// throws the same Error when any rank fails (Communicator::agree): a file partitioned for another number of
/// ranks, a build without METIS for an unpartitioned file, an invalid file. `note` receives progress lines
/// (call it on rank 0 only).
LocalPart read_local_part(const Communicator& comm, const std::string& mesh_file, const std::string& state_file,
                          const std::function<void(const std::string&)>& note);

/// \brief Exchanges packed rows with the plan's peers over MPI: `send` holds the states of send_nodes in order,
/// `receive` gets those of receive_nodes (host buffers of 5 doubles per row).
void exchange_packed_rows(const Communicator& comm, const HaloPlan& halo, const double* send, double* receive);

/// \brief Fills the ghost rows of a host state (rows of 5 doubles, local ids) from their owners (MPI).
void exchange_ghost_states(const Communicator& comm, const HaloPlan& halo, double* state);

/// \brief Partition figures over all ranks, for the report.
struct PartitionSummary {
  int ranks = 1;
  std::string source;
  std::int64_t edge_cut = 0;  ///< edges whose ends lie on different ranks
  std::int64_t ghosts_min = 0, ghosts_max = 0, ghosts_total = 0;
  double edge_imbalance = 1.0;  ///< max local edges / mean local edges
  double node_imbalance = 1.0;  ///< max owned nodes / mean owned nodes
};
PartitionSummary summarize_partition(const Communicator& comm, const RankLayout& layout);

}  // namespace fluxjac
