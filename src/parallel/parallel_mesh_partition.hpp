// fluxjac — `fluxjac mesh partition` under mpirun (docs/design.md, "Many GPUs"): the input partitioned by all ranks
// with PT-Scotch (parallel/slice_partition.hpp), renumbered so that part r owns a contiguous range of nodes in rank
// order (each part keeping its nodes' file order), and written by every rank from its own part
// (parallel/part_writer.hpp). No rank reads or holds the whole mesh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/partition.hpp"
#include "mesh/partition_io.hpp"
#include "parallel/communicator.hpp"
#include "parallel/setup_steps.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// What the ranks did together (the same on every rank).
struct ParallelPartitionOutcome {
  std::int64_t n_nodes = 0, n_edges = 0;
  std::int64_t previous_parts = 0;  ///< the input's own parts (0: it was not partitioned)
  std::string method;               ///< ptscotch_method()
  PartitionStatistics statistics;   ///< per part: owned nodes and edges, halo edges, ghosts, cut edges
  std::vector<SetupStep> steps;     ///< read slices, graph, partition, redistribute, write
};

/// \brief Partitions request.input into comm.size() parts (request.parts must be that) and writes request.output
/// atomically (collective). The input's state (or request.state) is required: a partitioned file written by the
/// ranks carries one. Every rank throws the same Error when any fails (an unwritable output leaves no file).
ParallelPartitionOutcome partition_mesh_file_in_parallel(const Communicator& comm, const PartitionRequest& request,
                                                         const Note& note);

}  // namespace fluxjac
