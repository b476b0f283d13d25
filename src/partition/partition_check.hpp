// fluxjac — the rules of a partitioned edge-mesh file (docs/formats.md, "Partitioned edge mesh"), written once.
// `fluxjac info` and `fluxjac mesh partition` check a whole file part by part with them; each rank of a many-GPU
// run checks its own part with the same functions, learning the halo edges the other parts expect of it from one
// exchange (part/local_part.cpp); derive_ghost_layer builds the lists the partitioner writes from the same rules.
// Every failure is Error(kInvalidInput) with one line naming the file, the dataset, the part and the first offending
// index, in the file's own numbering (what one process reading the whole file would name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "partition/partition.hpp"

namespace fluxjac {

/// \brief The group and datasets of /partition (docs/formats.md): one list for its writer, readers and checks.
namespace partition_paths {
inline constexpr const char* kGroup = "/partition";
inline constexpr const char* kNodeOffsets = "/partition/node_offsets";
inline constexpr const char* kEdgeOffsets = "/partition/edge_offsets";
inline constexpr const char* kOriginalNode = "/partition/original_node";
inline constexpr const char* kGhostOffsets = "/partition/ghost_offsets";
inline constexpr const char* kGhostNodes = "/partition/ghost_nodes";
inline constexpr const char* kHaloEdgeOffsets = "/partition/halo_edge_offsets";
inline constexpr const char* kHaloEdges = "/partition/halo_edges";
}  // namespace partition_paths

/// \brief One part's piece of a per-part list (ghost_nodes or halo_edges): entries [first, first + values.size())
/// of the dataset.
struct ListPiece {
  std::int64_t part = 0;
  std::int64_t first = 0;            ///< the dataset index of values[0]
  std::vector<std::int64_t> values;  ///< the part's entries, in file order
};

/// \brief The edges a part holds, each as its (L, R) pair in file numbering: those of its edge range
/// [edge_offsets[part], edge_offsets[part + 1]) in order, and its halo edges in the order of its halo-edge piece.
struct EdgeEnds {
  std::vector<node_index> range_ends;  ///< [edges of the range][2]
  std::vector<node_index> halo_ends;   ///< [halo edges][2]
};

/// \brief Error unless a file's `parts` attribute lies in [1, n_nodes] (a part per rank, a node or more per part).
void check_part_count(const std::string& file, std::int64_t parts, std::int64_t n_nodes);

/// \brief Error unless offsets (the dataset at `dataset`, parts + 1 values) start at 0, never decrease and end at
/// total (total_meaning says where that number comes from), naming the first bad index.
void check_offsets(const std::string& file, const char* dataset, const std::vector<std::int64_t>& offsets,
                   std::int64_t total, const std::string& total_meaning);

/// \brief Error unless a part's piece of a list is strictly ascending, in [0, limit) and outside the part's own range
/// [own_begin, own_end) (the range `own_dataset` gives it): a ghost is another part's node, a halo edge another
/// part's edge.
void check_piece(const std::string& file, const char* dataset, const ListPiece& piece, std::int64_t limit,
                 std::int64_t own_begin, std::int64_t own_end, const char* own_dataset);

/// \brief Error unless every edge of part `part`'s edge range (range_ends: their (L, R) pairs, in order) starts at a
/// node the part owns: the edges are grouped by the part of L, in part order.
void check_range_edges(const std::string& file, const std::vector<std::int64_t>& node_offsets,
                       const std::vector<std::int64_t>& edge_offsets, std::int64_t part,
                       const std::vector<node_index>& range_ends);

/// \brief Checks the edges a part holds against its ranges: those of its range with check_range_edges, and each
/// halo edge (halo: its piece of halo_edges, checked with check_piece) ends at a node it owns and starts at another
/// part's. Returns the part's ghosts as its edges give them (nodes_reached_outside).
std::vector<std::int64_t> check_held_edges(const std::string& file, const std::vector<std::int64_t>& node_offsets,
                                           const std::vector<std::int64_t>& edge_offsets, const ListPiece& halo,
                                           const EdgeEnds& held);

/// \brief The nodes that the edges a part holds reach outside its node range [node_begin, node_end): its ghosts,
/// ascending, once each.
std::vector<std::int64_t> nodes_reached_outside(std::int64_t node_begin, std::int64_t node_end, const EdgeEnds& held);

/// \brief The halo edges that consecutive edges first_edge, first_edge + 1, ... (range_ends: their (L, R) pairs)
/// give every part: entry q lists, ascending, those whose R part q owns and whose L another part owns. Over every
/// edge of the mesh these are the halo-edge lists; over a part's edge range, what that part owes the others' lists.
std::vector<std::vector<std::int64_t>> halo_edges_by_part(const std::vector<std::int64_t>& node_offsets,
                                                          std::int64_t first_edge,
                                                          const std::vector<node_index>& range_ends);

/// \brief Error unless a part's piece of a list equals the list its edges give (expected), naming the dataset index
/// of the first difference, the part, and both counts ("part 0 lists 54 halo edges, the edges give 55; ...").
void check_piece_matches(const std::string& file, const char* dataset, const ListPiece& piece,
                         const std::vector<std::int64_t>& expected, const char* what);

/// \brief Error unless the parts together hold every edge once at each end: the ends of held edges at nodes their
/// part owns, summed over the parts, equal 2 n_edges (each edge lies in the part of L and in the part of R). Any
/// edge missing from a part whose node it touches makes the sum short, whatever the lists say.
void check_edge_coverage(const std::string& file, std::int64_t owned_ends, std::int64_t n_edges);

/// \brief Checks a whole partition against its mesh, part by part, with the rules above: the offsets cover the mesh,
/// every part's edges and halo edges are its own, and its ghost and halo-edge lists are exactly those the edges give.
/// (read_partition checks the offsets and each piece on its own first.)
void check_partition_against_mesh(const std::string& path, const EdgeMesh& mesh, const PartitionLayout& layout);

}  // namespace fluxjac
