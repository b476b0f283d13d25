// fluxjac — what a rank of a many-rank run needs to build its part (part/local_part.hpp), in file numbering:
// read from the slices of a partitioned file, cut by rank 0 from the whole mesh (METIS), or redistributed rank to
// rank after a parallel partition (part/slice_partition.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "mesh/edge_mesh.hpp"

namespace fluxjac {

struct PartPieces {
  std::int64_t global_nodes = 0, global_edges = 0;
  std::vector<std::int64_t> owned;  ///< ascending file ids
  EdgeMesh edges;                   ///< the local edges in file order, node ids in file numbering
  std::vector<double> owned_state;  ///< [owned][5]
  double gamma = 1.4;
  std::vector<std::int64_t> ghosts;           ///< ascending file ids
  std::vector<std::int64_t> ghost_owner;      ///< [ghosts]
  std::vector<std::int64_t> owned_row_start;  ///< [owned]: where each owned row starts in the whole mesh's Aoff
};

}  // namespace fluxjac
