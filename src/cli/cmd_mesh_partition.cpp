// fluxjac mesh partition: a copy of an edge mesh split into parts for many GPUs (METIS k-way, renumbered so that
// each part owns contiguous nodes and edges, plus its ghost layer), with the statistics that say what a run on
// it will cost: per part owned nodes, edges, halo edges, ghosts and cut edges; edge cut and load imbalance.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "part/partition_file.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

void print_statistics(const PartitionRequest& request, const PartitionOutcome& outcome) {
  const PartitionStatistics& statistics = outcome.statistics;
  fmt::print("{}: {} nodes, {} edges in {} parts ({})\n", request.output, outcome.n_nodes, outcome.n_edges,
             request.parts, outcome.method);
  fmt::print("{:>6} {:>12} {:>12} {:>12} {:>10} {:>10}\n", "part", "nodes", "edges", "halo edges", "ghosts",
             "cut edges");
  for (std::size_t p = 0; p < statistics.parts.size(); ++p) {
    const PartStatistics& part = statistics.parts[p];
    fmt::print("{:>6} {:>12} {:>12} {:>12} {:>10} {:>10}\n", p, part.owned_nodes, part.owned_edges, part.halo_edges,
               part.ghosts, part.cut_edges);
  }
  fmt::print(
      "edge cut {} ({:.2f}% of the edges), ghosts {} ({:.2f}% of the nodes), imbalance max/mean: nodes {:.3f}, "
      "incident edges {:.3f}; {} empty parts; state {}; read {:.2f} s, partition {:.2f} s, renumber {:.2f} s, "
      "write {:.2f} s\n",
      statistics.edge_cut, 100.0 * double(statistics.edge_cut) / double(outcome.n_edges), statistics.total_ghosts,
      100.0 * double(statistics.total_ghosts) / double(outcome.n_nodes), statistics.node_imbalance,
      statistics.edge_imbalance, statistics.empty_parts, outcome.has_state ? "renumbered with the nodes" : "none",
      seconds_of(outcome.steps, StepKind::kRead), seconds_of(outcome.steps, StepKind::kPartition),
      seconds_of(outcome.steps, StepKind::kRenumber), seconds_of(outcome.steps, StepKind::kWrite));
  if (outcome.previous_parts > 0)
    fmt::print("the input was partitioned into {} parts; /partition/original_node still gives the ids from before\n",
               outcome.previous_parts);
  if (statistics.empty_parts > 0)
    std::fprintf(stderr,
                 "fluxjac: warning: %s: %lld of %d parts own no node (METIS found no use for them on %lld nodes): "
                 "their ranks will have no rows to assemble\n",
                 request.output.c_str(), static_cast<long long>(statistics.empty_parts), request.parts,
                 static_cast<long long>(outcome.n_nodes));
}

/// One process or, under mpirun, every rank partitions and writes its part; rank 0 prints the steps and the table.
int partition_command(const PartitionRequest& request) {
  const Communicator& comm = Communicator::world();
  check_output_paths({{"the input", request.input}, {"--state", request.state}}, {{"--output", request.output}});
  const Note note = [](const std::string& line) { fmt::print("{}\n", line); };
  const PartitionOutcome outcome = partition_mesh_file(comm, request, note);
  if (comm.is_root()) print_statistics(request, outcome);
  return 0;
}

}  // namespace

void add_mesh_partition_command(CLI::App& mesh, CommandAction& action) {
  auto request = std::make_shared<PartitionRequest>();
  auto strategy = std::make_shared<std::string>("default");
  auto balance = std::make_shared<std::string>(to_string(PartBalance::kAssembly));
  CLI::App* partition = add_command(
      mesh,
      {"partition",
       "Split an edge mesh into parts for a many-GPU run, one part per rank. METIS k-way on the node graph (vertices "
       "weighted by 1 + degree, node assembly's work, or with --balance solve by 24 + degree, the solve's; minimum "
       "edge cut); under mpirun (one rank per part, --parts the rank count), PT-Scotch "
       "on all ranks, each reading and writing only its slices (the input then needs a state). Nodes renumbered so "
       "that each part owns a contiguous range (in the order they had), edges sorted by the part of their L node, each "
       "part's ghost nodes and halo edges listed. The output is an ordinary edge mesh (every command reads it) plus "
       "the group /partition (docs/formats.md), whose original_node maps back to the input numbering. Prints per part "
       "the owned nodes and edges, the halo edges (owned elsewhere, needed by its rows), ghosts and cut edges, then "
       "the edge cut and the imbalance. The file's /partition attribute method records the partitioner and what it "
       "balanced.",
       "Example:\n"
       "  fluxjac mesh gen --kind mixed --n 40 --order rcm -o box.h5\n"
       "  fluxjac mesh partition box.h5 --parts 4 -o box-4.h5\n"
       "  fluxjac mesh partition box.h5 --parts 4 --balance solve -o box-4-solve.h5   # for fluxjac solve\n"
       "  fluxjac info box-4.h5"},
      action, [request, strategy, balance](const CLI::App&) {
        request->strategy = parse_named<ScotchStrategy>(*strategy, "PT-Scotch strategy");
        request->balance = parse_named<PartBalance>(*balance, "--balance");
        return partition_command(*request);
      });
  partition->add_option("mesh", request->input, "input edge mesh (.h5, partitioned or not)")->required();
  partition->add_option("--parts", request->parts, "number of parts (ranks): 1 to the number of nodes")->required();
  partition->add_option("--state", request->state,
                        "a separate state file to renumber into the output (default: the input's own state, if any)");
  partition->add_option("-o,--output", request->output, "output edge mesh (.h5), written atomically")->required();
  partition
      ->add_option("--scotch-strategy", *strategy,
                   fmt::format("PT-Scotch's strategy under mpirun: {} (default: default; one process uses METIS)",
                               name_list<ScotchStrategy>()))
      ->option_text("NAME");
  partition
      ->add_option("--balance", *balance,
                   fmt::format("what the parts balance: {} (default: assembly): assembly weighs each node 1 + its "
                               "degree, the work of its row in node assembly (run, bench); solve weighs each 24 + its "
                               "degree, the work of its row in an iteration of fluxjac solve (its vectors and its "
                               "blocks' product)",
                               name_list<PartBalance>()))
      ->option_text("NAME");
}

}  // namespace fluxjac
