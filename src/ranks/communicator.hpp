// fluxjac — the processes of a many-GPU run: a thin layer over MPI (docs/design.md, "Many GPUs").
//
// One rank per GPU. A build without MPI (FLUXJAC_MPI=OFF, or no MPI found) has exactly one rank, and every
// collective below is then the identity, so the rest of fluxjac is written once for any number of ranks.
// Collectives must be called by every rank of the communicator in the same order. Every collective carries
// failures (docs/design.md, "Many GPUs", "Errors"): a rank whose step throws meets the others at the guard that
// catches it (agree), in whatever collective they wait, and every rank then throws the same AgreedError. Guards
// stand only at the phase boundaries: the command, the sweep and each case.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace fluxjac {

/// \brief True when this build runs under MPI (FLUXJAC_MPI).
bool mpi_available();

/// \brief How long a rank waits for the others before it ends the job, at its last step (Communicator::leave) and in
/// MPI's start-up (MpiSession): FLUXJAC_EXIT_PATIENCE_SECONDS, 60 s unless set (tests shorten it).
double exit_patience_seconds();

/// \brief Starts MPI for the life of the object (main holds one), or does nothing in a build without MPI.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

/// \brief Where a failing rank met the others: at a case's guard (the failure ends the case, and the sweep goes on)
/// or at any other guard (it ends the command).
enum class Guard { kCommand, kCase };

/// \brief The Error every rank throws once a failure has been met (Communicator::agree): the failing rank's message,
/// with "(on rank R)" on the other ranks. It keeps the plain message, R (a rank of the whole job) and the guard the
/// failing rank met the others at, so that a failure met by some ranks and then by all names R once.
class AgreedError : public Error {
 public:
  AgreedError(const std::string& plain, ExitCode code, int origin, Guard guard, std::uintptr_t met_on);
  const std::string& plain() const { return plain_; }
  int origin() const { return origin_; }
  /// The failure ends only the case it happened in.
  bool case_only() const { return guard_ == Guard::kCase; }
  /// The communicator it was met on (its stored handle).
  std::uintptr_t met_on() const { return met_on_; }

 private:
  std::string plain_;
  int origin_;
  Guard guard_;
  std::uintptr_t met_on_;
};

/// \brief A group of ranks that take part in the same collective steps.
class Communicator {
 public:
  /// \brief Every rank of the job (MPI_COMM_WORLD), or the single process.
  static const Communicator& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  /// More than one rank: the many-GPU path.
  bool distributed() const { return size_ > 1; }
  /// Ranks on this rank's node, and this rank's place among them (it picks the GPU).
  int node_size() const { return node_size_; }
  int node_rank() const { return node_rank_; }

  /// \brief The ranks whose color equals this rank's, in rank order (MPI_Comm_split); a negative color gives
  /// an empty communicator (size 0) that takes part in nothing.
  Communicator split(int color) const;

  /// A meeting of every rank, carrying failures like every collective (one reduction of one integer).
  void barrier() const;
  /// Reductions over all ranks.
  double max(double value) const;
  double min(double value) const;
  double sum(double value) const;
  std::int64_t max(std::int64_t value) const;
  std::int64_t sum(std::int64_t value) const;
  /// Element-wise over all ranks (every rank passes the same length).
  std::vector<double> max(const std::vector<double>& values) const;
  std::vector<double> sum(const std::vector<double>& values) const;
  /// The sum of value over the ranks before this one.
  std::int64_t exclusive_sum(std::int64_t value) const;
  /// Each rank's value, in rank order.
  std::vector<std::int64_t> all_gather(std::int64_t value) const;
  std::vector<double> all_gather(double value) const;
  /// Each rank's text, in rank order (texts of any length; the lengths travel first).
  std::vector<std::string> all_gather(const std::string& text) const;
  /// Root's text on every rank.
  void broadcast(std::string& text, int root = 0) const;
  /// Root's bytes on every rank (every rank passes a buffer of the same size).
  void broadcast_bytes(void* data, std::size_t bytes, int root = 0) const;

  /// \brief Point to point: a vector of trivially copyable values, its length first. Only the two ranks take part,
  /// so these carry no failures: a collective must come before them (a barrier), so that no rank waits in a receive
  /// for a rank that failed.
  void send_bytes(const void* data, std::size_t bytes, int destination, int tag) const;
  void receive_bytes(void* data, std::size_t bytes, int source, int tag) const;
  template <class T>
  void send(const std::vector<T>& values, int destination, int tag) const {
    const std::uint64_t count = values.size();
    send_bytes(&count, sizeof count, destination, tag);
    send_bytes(values.data(), count * sizeof(T), destination, tag);
  }
  template <class T>
  std::vector<T> receive(int source, int tag) const {
    std::uint64_t count = 0;
    receive_bytes(&count, sizeof count, source, tag);
    std::vector<T> values(count);
    receive_bytes(values.data(), count * sizeof(T), source, tag);
    return values;
  }

  /// \brief Each rank sends to_rank[r] to rank r and returns what every rank sent to it (MPI_Alltoallv).
  std::vector<std::vector<std::int64_t>> all_to_all(const std::vector<std::vector<std::int64_t>>& to_rank) const;

  /// \brief Exchanges rows of doubles with some ranks at once (non-blocking sends and receives, then a wait):
  /// send[k] goes to peers[k], receive[k] comes from peers[k] (sizes known to both sides). Every rank calls it, with
  /// or without peers: it carries failures like the collectives.
  void exchange(const std::vector<int>& peers, const std::vector<const double*>& send,
                const std::vector<std::size_t>& send_count, const std::vector<double*>& receive,
                const std::vector<std::size_t>& receive_count) const;

  /// \brief The guard of a phase: runs step; when it throws on any rank, every rank throws the same AgreedError (the
  /// lowest failing rank's message and exit code, as as_error gives them), so that they all leave together. A rank
  /// that fails inside step meets the others here, while they wait in step's next collective (which then throws
  /// the AgreedError) or at this guard. Used at the phase boundaries only: the command (cli.cpp), the sweep and each
  /// of its cases (sweep.cpp).
  void agree(const std::function<void()>& step, Guard guard = Guard::kCommand) const;

  /// \brief The last step of every rank (main): returns exit_code once every rank has come this far. A rank that
  /// left with an error the others did not share would otherwise wait forever in MPI_Finalize while they wait in
  /// a step it left; after `patience_seconds` it ends the whole job instead (MPI_Abort with its exit code).
  int leave(int exit_code, double patience_seconds = exit_patience_seconds()) const;

  /// \brief Ends the whole job after an error that not every rank can see (MPI_Abort); prints message first.
  [[noreturn]] void abort(const std::string& message, int exit_code) const;

  /// The MPI_Comm handle (as an integer-sized value; meaningful only with MPI), for NCCL bootstrap.
  const void* native() const { return &handle_; }

 private:
  Communicator() = default;
  /// Fills rank, size and the node figures from the handle (MPI builds).
  void read_ranks();
  /// \brief The failure round every collective starts with: each rank gives its own failure or none; when any rank
  /// failed, every rank throws the lowest failing rank's error (an AgreedError), else returns.
  void meet(const AgreedError* mine) const;
  int rank_ = 0;
  int size_ = 1;
  int node_rank_ = 0;
  int node_size_ = 1;
  std::uintptr_t handle_ = 0;  ///< MPI_Comm, stored without the MPI header
};

}  // namespace fluxjac
