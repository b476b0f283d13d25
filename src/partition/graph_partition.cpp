#include "partition/graph_partition.hpp"

#include <fmt/format.h>

#if FLUXJAC_WITH_PTSCOTCH
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <mpi.h>
// ptscotch.h includes scotch.h; both need stdio.h and mpi.h first.
#include <ptscotch.h>
#endif

#include "util/error.hpp"
#include "util/library_failure.hpp"

namespace fluxjac {
namespace {

/// The tag of the ranges sent to rank 0 and the parts sent back (METIS on rank 0).
constexpr int kTagGraph = 102;
/// PT-Scotch's random seed: fixed, so that one graph always gives the same parts.
constexpr int kSeed = 1;
/// The load imbalance the strategy allows: parts within 5% of the mean vertex weight.
constexpr double kImbalance = 0.05;

/// PT-Scotch's name of each strategy's flag, in the order of ScotchStrategy.
constexpr const char* kStrategyFlagNames[] = {"SCOTCH_STRATDEFAULT", "SCOTCH_STRATQUALITY", "SCOTCH_STRATSPEED",
                                              "SCOTCH_STRATBALANCE"};

#if FLUXJAC_WITH_PTSCOTCH
/// PT-Scotch's flag of each strategy, in the order of ScotchStrategy.
constexpr SCOTCH_Num kStrategyFlags[] = {SCOTCH_STRATDEFAULT, SCOTCH_STRATQUALITY, SCOTCH_STRATSPEED,
                                         SCOTCH_STRATBALANCE};

static_assert(sizeof(SCOTCH_Num) == sizeof(std::int64_t), "fluxjac uses the 64-bit SCOTCH_Num build of PT-Scotch");

/// Fails with the call's name when a PT-Scotch call returns an error (PT-Scotch has printed its own line already).
void check(int status, const char* call) {
  if (status != 0)
    fail(ExitCode::kRuntime, "partitioning with PT-Scotch: {} failed (status {}; PT-Scotch's own message precedes)",
         call, status);
}

/// The library's owned structures, released in reverse order whatever happens.
struct ScotchRun {
  SCOTCH_Context context;
  SCOTCH_Dgraph graph;
  SCOTCH_Dgraph bound;  ///< the graph as seen through the context
  SCOTCH_Strat strategy;
  /// PT-Scotch's own communicator (a duplicate): its collectives never meet fluxjac's (ranks/communicator.hpp).
  MPI_Comm comm = MPI_COMM_NULL;
  bool context_ready = false, graph_ready = false, bound_ready = false, strategy_ready = false;
  ~ScotchRun() {
    if (strategy_ready) SCOTCH_stratExit(&strategy);
    if (bound_ready) SCOTCH_dgraphExit(&bound);
    if (graph_ready) SCOTCH_dgraphExit(&graph);
    if (context_ready) SCOTCH_contextExit(&context);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/// \brief Fails this rank inside the guard of PT-Scotch, just before SCOTCH_dgraphPart while the other ranks enter it,
/// when the test-only environment variable FLUXJAC_TEST_PTSCOTCH_FAILURE=RANK:CAUSE names this rank (a rank of the
/// whole job): CAUSE SIGSEGV, SIGBUS or SIGABRT raises that signal, as PT-Scotch does when a rank runs out of memory
/// (seen under ulimit -v), and exit calls exit(1), as its error-exit build does after its message.
/// tests/test_mpi_partition.cpp uses it; no other code reads it.
void inject_ptscotch_failure() {
  const char* value = std::getenv("FLUXJAC_TEST_PTSCOTCH_FAILURE");
  int rank = -1;
  char cause[16] = {};
  if (!value || std::sscanf(value, "%d:%15s", &rank, cause) != 2 || rank != Communicator::world().rank()) return;
  if (std::strcmp(cause, "exit") == 0) std::exit(1);
  for (const auto& [name, number] : {std::pair{"SIGSEGV", SIGSEGV}, {"SIGBUS", SIGBUS}, {"SIGABRT", SIGABRT}})
    if (std::strcmp(cause, name) == 0) std::raise(number);
}

std::vector<std::int32_t> dgraph_part(const Communicator& comm, GraphRange& graph, int parts, ScotchStrategy strategy) {
  if (SCOTCH_numSizeof() != static_cast<int>(sizeof(SCOTCH_Num)))
    fail(ExitCode::kRuntime,
         "partitioning with PT-Scotch: the libscotch loaded at run time has {}-byte SCOTCH_Num, fluxjac was built "
         "with {}-byte: put the folder of the 64-bit build (Debian: lib/x86_64-linux-gnu/scotch-int64) first in "
         "LD_LIBRARY_PATH",
         SCOTCH_numSizeof(), sizeof(SCOTCH_Num));
  MPI_Comm mpi_comm;
  std::memcpy(&mpi_comm, comm.native(), sizeof mpi_comm);
  const auto vertices = static_cast<SCOTCH_Num>(graph.weights.size());
  const auto arcs = static_cast<SCOTCH_Num>(graph.neighbors.size());

  // A rank out of memory fails inside PT-Scotch rather than returning an error: after its own "out of memory" line it
  // dereferences a null pointer (SIGSEGV, under ulimit -v), glibc may abort, and its error-exit build calls exit().
  // The guard turns each into one fluxjac line and exit code 4 on this rank; mpirun then ends the ranks that wait in
  // PT-Scotch's collectives. It stands before `run`, so that the library's clean-up is guarded too.
  const Communicator& world = Communicator::world();
  const std::string one_process =
      metis_available() ? fmt::format("fluxjac mesh partition MESH --parts {} -o PARTS.h5, without mpirun", parts)
                        : "a build with METIS: install libmetis-dev";
  const LibraryFailureGuard guard(
      [&one_process](const std::string& cause) {
        return fmt::format(
            "partitioning with PT-Scotch failed inside the library on this rank ({}), most likely out of memory: give "
            "each rank more memory, start more ranks, or partition as one process with METIS ({}) and run on that file",
            cause, one_process);
      },
      world.rank(), world.size());
  ScotchRun run;
  if (MPI_Comm_dup(mpi_comm, &run.comm) != MPI_SUCCESS)
    fail(ExitCode::kRuntime, "partitioning with PT-Scotch: MPI_Comm_dup failed");
  check(SCOTCH_contextInit(&run.context), "SCOTCH_contextInit");
  run.context_ready = true;
  check(SCOTCH_contextOptionSetNum(&run.context, SCOTCH_OPTIONNUMDETERMINISTIC, 1),
        "SCOTCH_contextOptionSetNum(DETERMINISTIC)");
  check(SCOTCH_contextOptionSetNum(&run.context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1),
        "SCOTCH_contextOptionSetNum(RANDOMFIXEDSEED)");
  check(SCOTCH_contextRandomClone(&run.context), "SCOTCH_contextRandomClone");
  // One thread per rank: the ranks are the parallelism. PT-Scotch's default, a thread per core the rank may run on,
  // took 12.4 s instead of 2.0 s for the paper-size mesh on 2 unbound ranks of an H200 node, and even two threads
  // per rank 10.7 s (docs/performance.md, "Partitioning"; docs/tuning.md, "PT-Scotch's strategies and threads").
  check(SCOTCH_contextThreadSpawn(&run.context, 1, nullptr), "SCOTCH_contextThreadSpawn");
  SCOTCH_contextRandomSeed(&run.context, kSeed);

  check(SCOTCH_dgraphInit(&run.graph, run.comm), "SCOTCH_dgraphInit");
  run.graph_ready = true;
  // Base 0; vendloctab = vertloctab + 1 (compact arrays); no vertex labels, no edge weights.
  check(SCOTCH_dgraphBuild(&run.graph, 0, vertices, vertices, graph.offsets.data(), graph.offsets.data() + 1,
                           graph.weights.data(), nullptr, arcs, arcs, graph.neighbors.data(), nullptr, nullptr),
        "SCOTCH_dgraphBuild");
  check(SCOTCH_contextBindDgraph(&run.context, &run.graph, &run.bound), "SCOTCH_contextBindDgraph");
  run.bound_ready = true;

  check(SCOTCH_stratInit(&run.strategy), "SCOTCH_stratInit");
  run.strategy_ready = true;
  check(SCOTCH_stratDgraphMapBuild(&run.strategy, kStrategyFlags[static_cast<int>(strategy)], comm.size(), parts,
                                   kImbalance),
        "SCOTCH_stratDgraphMapBuild");
  std::vector<SCOTCH_Num> part(graph.weights.size());
  inject_ptscotch_failure();
  check(SCOTCH_dgraphPart(&run.bound, parts, &run.strategy, part.data()), "SCOTCH_dgraphPart");

  std::vector<std::int32_t> result(part.size());
  for (std::size_t v = 0; v < part.size(); ++v) {
    if (part[v] < 0 || part[v] >= parts)
      fail(ExitCode::kRuntime, "partitioning with PT-Scotch: vertex {} went to part {}, outside [0, {})",
           graph.first_vertex + static_cast<std::int64_t>(v), part[v], parts);
    result[v] = static_cast<std::int32_t>(part[v]);
  }
  return result;
}
#endif

/// METIS on rank 0 (a build without PT-Scotch): the ranges travel to rank 0 in rank order (the whole graph), the
/// parts back.
[[maybe_unused]] std::vector<std::int32_t> metis_on_root(const Communicator& comm, const GraphRange& graph, int parts) {
  const auto vertices = static_cast<std::int64_t>(graph.weights.size());
  comm.barrier();  // point to point follows: every rank has its range (ranks/communicator.hpp)
  if (!comm.is_root()) {
    comm.send(graph.offsets, 0, kTagGraph);
    comm.send(graph.neighbors, 0, kTagGraph);
    comm.send(graph.weights, 0, kTagGraph);
  }
  std::vector<std::int32_t> whole;
  std::vector<std::int64_t> counts;
  if (comm.is_root()) {
    GraphRange all = graph;
    counts.push_back(vertices);
    for (int r = 1; r < comm.size(); ++r) {
      const auto offsets = comm.receive<std::int64_t>(r, kTagGraph);
      const auto neighbors = comm.receive<std::int64_t>(r, kTagGraph);
      const auto weights = comm.receive<std::int64_t>(r, kTagGraph);
      const std::int64_t base = all.offsets.back();
      for (std::size_t v = 1; v < offsets.size(); ++v) all.offsets.push_back(base + offsets[v]);
      all.neighbors.insert(all.neighbors.end(), neighbors.begin(), neighbors.end());
      all.weights.insert(all.weights.end(), weights.begin(), weights.end());
      counts.push_back(static_cast<std::int64_t>(weights.size()));
    }
    whole = metis_partition(all, parts);
  }
  comm.barrier();  // METIS failing on rank 0 is every rank's error, before the others wait for their parts
  if (!comm.is_root()) return comm.receive<std::int32_t>(0, kTagGraph);
  std::int64_t first = counts.front();
  for (int r = 1; r < comm.size(); ++r) {
    comm.send(std::vector<std::int32_t>(whole.begin() + first, whole.begin() + first + counts[r]), r, kTagGraph);
    first += counts[r];
  }
  return std::vector<std::int32_t>(whole.begin(), whole.begin() + vertices);
}

}  // namespace

bool ptscotch_available() {
#if FLUXJAC_WITH_PTSCOTCH
  return true;
#else
  return false;
#endif
}

std::string ptscotch_method(ScotchStrategy strategy, PartBalance balance) {
#if FLUXJAC_WITH_PTSCOTCH
  int version = 0, release = 0, patch = 0;
  SCOTCH_version(&version, &release, &patch);
  return fmt::format(
      "PT-Scotch {}.{}.{} (SCOTCH_dgraphPart, strategy {}, imbalance {}) on the node graph read by slices: {}, "
      "unweighted edges, deterministic, seed {}",
      version, release, patch, kStrategyFlagNames[static_cast<int>(strategy)], kImbalance, balance_phrase(balance),
      kSeed);
#else
  static_cast<void>(strategy);
  static_cast<void>(balance);
  return "PT-Scotch (not in this build)";
#endif
}

std::string graph_partition_method(const Communicator& comm, int parts, ScotchStrategy strategy, PartBalance balance) {
  if (comm.size() == 1) return partition_method(parts, balance);
  if (ptscotch_available()) return ptscotch_method(strategy, balance);
  return fmt::format("METIS on rank 0: {}", balance_phrase(balance));
}

std::vector<std::int32_t> partition_graph(const Communicator& comm, GraphRange& graph, int parts,
                                          ScotchStrategy strategy) {
  if (comm.size() == 1) return metis_partition(graph, parts);
  std::vector<std::int32_t> part;
#if FLUXJAC_WITH_PTSCOTCH
  comm.barrier();  // PT-Scotch's own collectives carry no failures: every rank enters it with its range
  part = dgraph_part(comm, graph, parts, strategy);
#else
  static_cast<void>(strategy);
  part = metis_on_root(comm, graph, parts);
#endif
  return part;
}

}  // namespace fluxjac
