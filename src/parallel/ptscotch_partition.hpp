// fluxjac — PT-Scotch, the parallel graph partitioner of a many-rank run (docs/design.md, "Many GPUs"): the ranks
// hold the node graph between them, each a contiguous range of vertices with their adjacency, and partition it
// together with SCOTCH_dgraphPart, no rank seeing more than its range. A build without PT-Scotch (FLUXJAC_PTSCOTCH)
// keeps METIS on rank 0 for files not partitioned for the ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/communicator.hpp"

namespace fluxjac {

/// \brief True when this build can call PT-Scotch (CMake found its 64-bit build and MPI: FLUXJAC_PTSCOTCH).
bool ptscotch_available();

/// \brief How ptscotch_partition splits a graph, in words recorded as the partition's source and in a partitioned
/// file's /partition attribute `method`: the PT-Scotch version, the strategy, the weights and the seed.
std::string ptscotch_method();

/// \brief One rank's range of a distributed graph: vertices first_vertex .. first_vertex + offsets.size() - 2,
/// vertex v's neighbours (global vertex ids) neighbors[offsets[v - first_vertex]] .. [offsets[v - first_vertex + 1]].
/// Every edge appears at both its ends; no loops, no repeated neighbours.
struct GraphRange {
  std::int64_t first_vertex = 0;
  std::vector<std::int64_t> offsets = {0};
  std::vector<std::int64_t> neighbors;
  std::vector<std::int64_t> weights;  ///< [vertices of the range]: each vertex's load
};

/// \brief The part (in [0, parts)) of every vertex of this rank's range, computed by all ranks together with
/// SCOTCH_dgraphPart (collective; every rank throws the same Error when any rank fails). Edges are unweighted, so the
/// strategy minimizes the number of cut edges while balancing the vertex weights within 5%. The partition is
/// deterministic: PT-Scotch runs with a fixed seed and its deterministic option, so the same graph distributed the
/// same way over the same number of ranks gives the same parts. Parts may be empty when the graph is much smaller
/// than `parts`. Error(kRuntime) in a build without PT-Scotch, when PT-Scotch fails, or when the library loaded at
/// run time has another SCOTCH_Num width than the headers fluxjac was built with.
std::vector<std::int32_t> ptscotch_partition(const Communicator& comm, GraphRange& graph, int parts);

}  // namespace fluxjac
