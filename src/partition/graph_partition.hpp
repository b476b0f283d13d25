// fluxjac — the one entry to the graph partitioners (docs/design.md, "Many GPUs"): the ranks hold the node graph
// between them, each a contiguous range of vertices with their adjacency, and partition_graph gives every vertex its
// part. One rank: METIS k-way on the whole graph (its range). Many ranks: PT-Scotch's SCOTCH_dgraphPart on all of
// them, no rank seeing more than its range; in a build without PT-Scotch (FLUXJAC_PTSCOTCH), METIS on rank 0 over
// the gathered graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partition/partition.hpp"
#include "ranks/communicator.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// \brief PT-Scotch's partitioning strategy (SCOTCH_stratDgraphMapBuild's flag): the library's default, or its
/// quality, speed or balance presets (SCOTCH_STRATQUALITY, SCOTCH_STRATSPEED, SCOTCH_STRATBALANCE).
enum class ScotchStrategy { kDefault, kQuality, kSpeed, kBalance };
inline constexpr NamedValue<ScotchStrategy> kScotchStrategyNames[] = {{ScotchStrategy::kDefault, "default"},
                                                                      {ScotchStrategy::kQuality, "quality"},
                                                                      {ScotchStrategy::kSpeed, "speed"},
                                                                      {ScotchStrategy::kBalance, "balance"}};
constexpr const auto& names_of(ScotchStrategy) { return kScotchStrategyNames; }

/// \brief True when this build can call PT-Scotch (CMake found its 64-bit build and MPI: FLUXJAC_PTSCOTCH).
bool ptscotch_available();

/// \brief How PT-Scotch splits a graph, in words recorded as the partition's source and in a partitioned
/// file's /partition attribute `method`: the PT-Scotch version, the strategy, the weights (balance_phrase: the
/// vertex weights the graph was built with) and the seed.
std::string ptscotch_method(ScotchStrategy strategy = ScotchStrategy::kDefault,
                            PartBalance balance = PartBalance::kAssembly);

/// \brief How partition_graph splits a graph on comm's ranks whose vertices weigh by `balance`, in words recorded as
/// the partition's source and in a partitioned file's /partition attribute `method`.
std::string graph_partition_method(const Communicator& comm, int parts,
                                   ScotchStrategy strategy = ScotchStrategy::kDefault,
                                   PartBalance balance = PartBalance::kAssembly);

/// \brief The part (in [0, parts)) of every vertex of this rank's range (collective; every rank throws the same
/// Error when any rank fails): METIS on one rank or, where PT-Scotch is missing, on rank 0 over the gathered graph
/// (partition_nodes' rules), else SCOTCH_dgraphPart on all ranks together. The vertices weigh graph.weights (the
/// caller's vertex_weight: mesh/part_balance.hpp); edges are unweighted, so the strategy minimizes the number of cut
/// edges while balancing the vertex weights within 5%. The partition is
/// deterministic: PT-Scotch runs with a fixed seed and its deterministic option, so the same graph distributed the
/// same way over the same number of ranks gives the same parts. Parts may be empty when the graph is much smaller
/// than `parts`. Error(kUsage) in a build with neither partitioner; Error(kRuntime) when a partitioner fails, or when
/// the PT-Scotch library loaded at run time has another SCOTCH_Num width than the headers fluxjac was built with.
std::vector<std::int32_t> partition_graph(const Communicator& comm, GraphRange& graph, int parts,
                                          ScotchStrategy strategy = ScotchStrategy::kDefault);

}  // namespace fluxjac
