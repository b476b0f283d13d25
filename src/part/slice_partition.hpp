// fluxjac — a mesh file not partitioned for the ranks, partitioned by all of them (docs/design.md, "Many GPUs"):
// no rank reads or holds the whole mesh. Each rank reads a slice (a contiguous range of edges, with their normals and
// areas, and a contiguous range of nodes with their states), the edges go to the ranks of their ends' ranges to
// build the distributed node graph, partition_graph partitions it (partition/graph_partition.hpp), and nodes and edges
// travel rank to rank to the part that owns them: the pieces of the same LocalPart the other paths make (owned nodes
// and their edges in file order, ghosts with their owners, each owned row's place in the whole mesh's Aoff).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "part/file_part.hpp"
#include "partition/graph_partition.hpp"
#include "ranks/communicator.hpp"
#include "ranks/setup_steps.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// Per-node data that travels with the owned nodes when the partition is written (`fluxjac mesh partition`): each
/// present in the file or absent on every rank, in owned order.
struct OwnedNodeData {
  std::vector<double> coords;                ///< [owned][3]
  std::vector<double> volumes;               ///< [owned]
  std::vector<std::uint8_t> boundary_nodes;  ///< [owned]
  std::vector<std::int64_t> original;        ///< [owned]: /partition/original_node of a partitioned input
};

/// What each rank has after the parallel partition, and what each step cost.
struct SlicePartition {
  FilePart pieces;
  OwnedNodeData node_data;       ///< filled when asked for
  std::vector<SetupStep> steps;  ///< read slices, graph, partition, redistribute
};

/// \brief Partitions the mesh of mesh_file (states from state_file) over comm.size() parts, one per rank, with every
/// rank reading only its slices (collective); each node weighs vertex_weight(balance, its degree) (1 + degree by
/// default, 1 for rows: mesh/part_balance.hpp). A failure on any rank is every rank's (collectives carry failures:
/// ranks/communicator.hpp): the slice readers' checks, duplicate edges (found at the rank of their lower node's range),
/// a node count below the rank count; each step's time and peak memory go to note (rank 0's progress lines) and to the
/// result. With node_data, the coordinates, volumes, boundary flags and earlier original ids the file has are read by
/// slices too and travel with their nodes.
SlicePartition partition_by_slices(const Communicator& comm, const std::string& mesh_file,
                                   const std::string& state_file, const Note& note, bool node_data = false,
                                   ScotchStrategy strategy = ScotchStrategy::kDefault,
                                   PartBalance balance = PartBalance::kAssembly);

}  // namespace fluxjac
