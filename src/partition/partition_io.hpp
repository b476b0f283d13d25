// fluxjac — partitioned edge-mesh files (docs/formats.md, "Partitioned edge mesh"): the /partition group beside
// an ordinary /mesh and /state, so the file stays a valid single-process mesh while a rank of a many-GPU run can
// read only its own slices (its node range, its edge range, its halo edges and its ghost states).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "partition/partition.hpp"
#include "partition/partition_check.hpp"

namespace fluxjac {

namespace h5 {
class File;
}

/// The group that marks a partitioned edge-mesh file.
inline constexpr const char* kPartitionGroup = partition_paths::kGroup;

/// \brief True when the fluxjac edge-mesh file at path has a /partition group.
bool has_partition(const std::string& path);

/// \brief Writes layout as /partition: attributes `parts` (int64) and `method` (string), and the int64 datasets
/// node_offsets, edge_offsets, original_node, ghost_offsets, ghost_nodes, halo_edge_offsets, halo_edges.
void write_partition(const h5::File& file, const PartitionLayout& layout, const std::string& method);

/// \brief Reads /partition and checks it against the sizes of /mesh, without reading the edges (the rules of
/// partition_check.hpp): `parts` in [1, n_nodes]; every offsets dataset int64 of shape [parts + 1], starting at 0,
/// non-decreasing, ending at the size it covers (n_nodes, n_edges, the length of the list); original_node a
/// permutation of [0, n_nodes); each part's ghost nodes strictly ascending and owned by another part, its halo edges
/// strictly ascending and outside its own edge range. Error(kInvalidInput) with one line naming the file, dataset
/// and first bad index, or saying that the file is not partitioned. check_partition_against_mesh does the rest.
PartitionLayout read_partition(const std::string& path);

/// \brief Error(kUsage) unless a file partitioned into file_parts parts is used by `requested` ranks: the parts
/// are fixed when the file is made, one rank each.
void require_parts(const std::string& path, std::int64_t file_parts, std::int64_t requested);

/// \brief The number of parts of a partitioned file, or 0 when it has no /partition; Error(kInvalidInput), the
/// message of read_partition, unless it lies in [1, n_nodes] (check_part_count).
std::int64_t partition_parts(const std::string& path);

/// What one rank of a many-GPU run reads of /partition: every offset, and only its own ghost and halo-edge lists.
struct PartitionSlice {
  std::int64_t parts = 1;
  std::vector<std::int64_t> node_offsets;  ///< [parts + 1]
  std::vector<std::int64_t> edge_offsets;  ///< [parts + 1]
  ListPiece ghosts;                        ///< this part's piece of ghost_nodes
  ListPiece halo;                          ///< this part's piece of halo_edges
};

/// \brief Reads part `part` of /partition with read_partition's checks on what it reads (offsets from 0 to the
/// sizes of /mesh, never decreasing; its lists ascending, in range and outside its own ranges). What needs the
/// edges (check_held_edges) and the other parts (the halo edges they store) is left to the reader of the slices.
PartitionSlice read_partition_part(const std::string& path, std::int64_t part);

}  // namespace fluxjac
