// fluxjac — a rank's part in the file's numbering: what every source of a part yields (the slices of a partitioned
// file, the redistribution after a parallel partition, the generator's slab) and make_part turns into a LocalPart in
// local numbering (part/local_part.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "mesh/edge_mesh.hpp"

namespace fluxjac {

struct FilePart {
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
