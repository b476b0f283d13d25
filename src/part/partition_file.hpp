// fluxjac — `fluxjac mesh partition`: a copy of an edge mesh split into parts for a many-rank run (docs/design.md,
// "Many GPUs"; docs/formats.md, "Partitioned edge mesh"). One entry for one process and many:
// - one process reads the whole mesh, splits it into any number of parts with METIS (partition_nodes), renumbers it
//   (renumber_by_part) and writes it whole;
// - under mpirun, one part per rank: the input partitioned by all ranks (part/slice_partition.hpp), renumbered so that
//   part r owns a contiguous range of nodes in rank order (each part keeping its nodes' file order), and written by
//   every rank from its own part (part/part_writer.hpp). No rank reads or holds the whole mesh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/part_balance.hpp"
#include "partition/graph_partition.hpp"
#include "partition/partition.hpp"
#include "ranks/communicator.hpp"
#include "ranks/setup_steps.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// What `fluxjac mesh partition` is asked to do.
struct PartitionRequest {
  std::string input;   ///< an edge mesh, partitioned or not
  std::string state;   ///< a separate state file; empty: the input's own state, if it has one
  std::string output;  ///< checked by the caller (check_output_paths) before any work
  int parts = 1;
  /// PT-Scotch's strategy under mpirun (one process partitions with METIS).
  ScotchStrategy strategy = ScotchStrategy::kDefault;
  /// What the parts balance, METIS's or PT-Scotch's: node-assembly work or the solve's (mesh/part_balance.hpp).
  PartBalance balance = PartBalance::kAssembly;
};

/// What it did (the same on every rank).
struct PartitionOutcome {
  std::int64_t n_nodes = 0;
  std::int64_t n_edges = 0;
  bool has_state = false;
  std::int64_t previous_parts = 0;  ///< the input's own parts (0: it was not partitioned)
  std::string method;               ///< the partitioner's (graph_partition_method)
  PartitionStatistics statistics;   ///< per part: owned nodes and edges, halo edges, ghosts, cut edges
  /// Each step's time and peak memory per rank, of the kinds read, partition, renumber and write (one process: read,
  /// partition, renumber, write; many ranks: read slices, graph, partition, redistribute, write).
  std::vector<SetupStep> steps;
};

/// \brief Reads and validates the input mesh (its state, optional additions and any earlier partition), splits it
/// into request.parts parts, renumbers it (state, coordinates, volumes and boundary flags move with their nodes) and
/// writes it atomically to request.output: the same datasets and additions as the input, plus /partition, whose
/// original_node keeps pointing at the numbering before the first partitioning. Under mpirun request.parts must be
/// the rank count, and the input's state (or request.state) is required: a file written by the ranks carries one.
/// Collective: every rank throws the same Error when any fails (an unwritable output leaves no file). `note` receives
/// the steps' progress lines (rank 0).
PartitionOutcome partition_mesh_file(const Communicator& comm, const PartitionRequest& request, const Note& note);

}  // namespace fluxjac
