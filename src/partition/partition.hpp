// fluxjac — partitioning an edge mesh for many GPUs: METIS k-way parts of the node graph, a renumbering that
// gives each part a contiguous range of nodes and of edges, its ghost layer, and the statistics that say how good
// the partition is (edge cut, ghosts, load imbalance).
//
// One rank per part assembles the full rows of the nodes it owns (node assembly: every incident edge, the cut
// edges included), so no Jacobian contribution crosses ranks; only the states of the ghost nodes travel. The file
// layout that carries all of this is in partition_io.hpp and docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "mesh/part_balance.hpp"
#include "ranks/communicator.hpp"
#include "types.hpp"

namespace fluxjac {

/// An assignment of every node to one of `parts` parts.
struct NodePartition {
  int parts = 1;
  std::vector<std::int32_t> part_of_node;  ///< [n_nodes], in [0, parts)
};

/// \brief One rank's range of a distributed graph (the whole graph on one rank): vertices first_vertex ..
/// first_vertex + offsets.size() - 2, vertex v's neighbours (global vertex ids) neighbors[offsets[v - first_vertex]] ..
/// [offsets[v - first_vertex + 1]]. Every edge appears at both its ends; no loops, no repeated neighbours.
struct GraphRange {
  std::int64_t first_vertex = 0;
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int64_t> neighbors;
  std::vector<std::int64_t> weights;  ///< [vertices of the range]: each vertex's load
};

/// \brief True when this build can call METIS (CMake found it: FLUXJAC_METIS).
bool metis_available();

/// \brief How partition_nodes splits a mesh into `parts` parts under `balance`, in words recorded in the partitioned
/// file: "METIS 5.1.0 k-way, ..., vertex weight ...", or, for one part, "one part (no partitioning)".
std::string partition_method(int parts, PartBalance balance = PartBalance::kAssembly);

/// \brief Splits the nodes into `parts` parts with METIS_PartGraphKway on the node graph (one vertex per node, one
/// graph edge per mesh edge). Each vertex weighs vertex_weight(balance, its degree) (mesh/part_balance.hpp): by
/// default 1 + its degree, the work of its row in node assembly (one Adiag block plus one flux per incident edge), so
/// parts balance that work rather than the node count; kSolve weighs a node kSolveRowWeight + its degree, the solve's
/// work per iteration. Graph
/// edges are unweighted, so METIS minimizes the number of cut edges. The seed is fixed: the same mesh gives the same
/// parts.
/// parts == 1 needs no METIS. Disconnected meshes are fine (parts need not be connected). METIS may leave parts
/// empty when there are more parts than it can usefully fill; they are kept (a rank with no nodes still takes part
/// in the collective steps) and reported by the statistics. Error(kUsage) when parts < 1, parts > n_nodes, or this
/// build has no METIS and parts > 1; Error(kRuntime) when METIS fails or the graph exceeds its index type.
NodePartition partition_nodes(const EdgeMesh& mesh, int parts, PartBalance balance = PartBalance::kAssembly);

/// \brief METIS k-way on a whole graph (first_vertex 0) as partition_nodes runs it: the part of every vertex.
/// Error(kUsage) in a build without METIS when parts > 1; Error(kRuntime) when METIS fails or the graph exceeds its
/// index type.
std::vector<std::int32_t> metis_partition(const GraphRange& graph, int parts);

/// Where each part's data lies after renumbering (docs/design.md, "Many GPUs"): what /partition holds
/// (docs/formats.md).
struct PartitionLayout {
  std::int64_t parts = 1;
  std::vector<std::int64_t> node_offsets;       ///< [parts + 1]: part p owns nodes [node_offsets[p], [p + 1])
  std::vector<std::int64_t> edge_offsets;       ///< [parts + 1]: part p owns the edges whose L node it owns
  std::vector<std::int64_t> original_node;      ///< [n_nodes]: the id each node had before any partitioning
  std::vector<std::int64_t> ghost_offsets;      ///< [parts + 1] into ghost_nodes
  std::vector<std::int64_t> ghost_nodes;        ///< per part, ascending: nodes of other parts next to an owned node
  std::vector<std::int64_t> halo_edge_offsets;  ///< [parts + 1] into halo_edges
  std::vector<std::int64_t> halo_edges;         ///< per part, ascending: edges owned elsewhere whose R node it owns

  /// \brief The part owning node (binary search in node_offsets; with empty parts, the one whose range holds it).
  std::int64_t part_of(std::int64_t node) const;
};

/// A mesh renumbered by part, with the layout and the permutation that made it.
struct PartitionedMesh {
  EdgeMesh mesh;  ///< part p owns nodes node_offsets[p].. and edges edge_offsets[p]..; orientation as given
  PartitionLayout layout;
  std::vector<node_index> new_id_of_old;  ///< [n_nodes]
};

/// \brief Renumbers nodes so that part 0's come first, then part 1's, ..., each part keeping the relative order its
/// nodes had (so an RCM order survives inside a part); coordinates and volumes move with their nodes. Edges keep
/// their orientation, normal and area (so each edge's flux Jacobian is bit for bit the same) and are sorted by
/// (L, R) in the new ids; as parts are contiguous, that sorts them by owner, the part of L. original_of_input, when
/// not empty, gives the original id of each input node (re-partitioning a partitioned file) and is composed into
/// original_node, which otherwise is the input numbering.
PartitionedMesh renumber_by_part(const EdgeMesh& mesh, const NodePartition& partition,
                                 const std::vector<std::int64_t>& original_of_input = {});

/// \brief Fills the ghost and halo-edge lists of layout from its node and edge offsets and the mesh (renumbered by
/// part, its edges grouped by the part of L): the ghosts of part p are the nodes of other parts that share an edge
/// with a node p owns, the halo edges of p the edges whose R node p owns and whose L node another part owns. Both
/// ascending within a part; the rules are those of partition/partition_check.hpp, which the readers check.
void derive_ghost_layer(const EdgeMesh& mesh, PartitionLayout& layout);

/// \brief Moves per-node rows of `width` values to their new ids (new_id_of_old[old] = new).
template <class T>
std::vector<T> permute_node_rows(const std::vector<T>& values, int width,
                                 const std::vector<node_index>& new_id_of_old) {
  std::vector<T> permuted(values.size());
  const std::size_t n_nodes = new_id_of_old.size();
  for (std::size_t old = 0; old < n_nodes; ++old)
    for (int k = 0; k < width; ++k)
      permuted[static_cast<std::size_t>(new_id_of_old[old]) * width + k] = values[old * width + k];
  return permuted;
}

/// What one part holds and costs: a part of a partitioned file, or a rank's part of a run.
struct PartStatistics {
  std::int64_t owned_nodes = 0;
  std::int64_t owned_edges = 0;  ///< stored in its edge range (L owned)
  std::int64_t halo_edges = 0;   ///< stored in another part's range, R owned: the part computes them too
  std::int64_t ghosts = 0;       ///< states it receives
  std::int64_t cut_edges = 0;    ///< edges with one end owned (owned or halo)

  /// Edges its rows need: the work of node assembly on its rank.
  std::int64_t incident_edges() const { return owned_edges + halo_edges; }
};

/// How good a partition is: every part's figures and what they add up to. The one definition of the edge cut, the
/// ghost totals and both imbalances (statistics_of_parts), whoever counted the parts.
struct PartitionStatistics {
  std::vector<PartStatistics> parts;
  std::int64_t edge_cut = 0;      ///< edges whose ends lie in different parts
  std::int64_t total_ghosts = 0;  ///< sum over parts: the states one halo exchange moves
  std::int64_t empty_parts = 0;   ///< parts that own no node
  double node_imbalance = 1.0;    ///< max owned nodes / mean owned nodes
  double edge_imbalance = 1.0;    ///< max incident edges / mean incident edges (the assembly work)

  /// Fewest and most ghosts of any part.
  std::int64_t ghosts_min() const;
  std::int64_t ghosts_max() const;
};

/// \brief The statistics of a partition from its parts' figures: the cut (each cut edge counts in both its parts),
/// ghosts, empty parts and the imbalances (1 where there is nothing to balance).
PartitionStatistics statistics_of_parts(std::vector<PartStatistics> parts);

/// \brief Statistics of a mesh renumbered by part (PartitionedMesh::mesh with its layout).
PartitionStatistics partition_statistics(const EdgeMesh& mesh, const PartitionLayout& layout);

/// \brief Statistics of the parts the ranks hold, one part per rank: every rank gives its own figures (collective).
PartitionStatistics gather_statistics(const Communicator& comm, const PartStatistics& mine);

}  // namespace fluxjac
