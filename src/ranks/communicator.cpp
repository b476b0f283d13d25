#include "ranks/communicator.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/error_line.hpp"

#if defined(FLUXJAC_WITH_MPI)
#include <mpi.h>
#endif

namespace fluxjac {

double exit_patience_seconds() {
  const char* text = std::getenv("FLUXJAC_EXIT_PATIENCE_SECONDS");
  return text ? std::atof(text) : 60.0;
}

#if defined(FLUXJAC_WITH_MPI)
namespace {

static_assert(sizeof(MPI_Comm) <= sizeof(std::uintptr_t), "MPI_Comm must fit the stored handle");

MPI_Comm handle_of(const void* stored) {
  MPI_Comm comm;
  std::memcpy(&comm, stored, sizeof comm);
  return comm;
}

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    fail(ExitCode::kRuntime, "{} failed: {}", call, std::string(text, static_cast<std::size_t>(length)));
  }
}

/// MPI counts are int: large transfers go in pieces of at most this many bytes.
constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 30;

/// \brief Whether this call of all_to_all on this rank fails as if its receive buffers could not be allocated: the
/// CALL-th (1-based, counted on this rank) when the test-only environment variable
/// FLUXJAC_TEST_ALL_TO_ALL_FAILURE=RANK:CALL names this rank (a rank of the whole job). tests/test_mpi.cpp uses it to
/// run one rank out of memory between the sizes and the lists, where an allocation fails under a ulimit; no other code
/// reads it.
bool injected_all_to_all_failure() {
  static const long long failing_call = [] {
    const char* value = std::getenv("FLUXJAC_TEST_ALL_TO_ALL_FAILURE");
    int rank = -1;
    long long call = 0;
    if (!value || std::sscanf(value, "%d:%lld", &rank, &call) != 2 || rank != Communicator::world().rank()) return 0LL;
    return call;
  }();
  static long long calls = 0;
  return failing_call > 0 && ++calls == failing_call;
}

}  // namespace

bool mpi_available() { return true; }

namespace {

/// True when a launcher (mpirun, mpiexec, srun) started this process: then it joins its job. Run on its own, fluxjac
/// does not start MPI at all, so a plain run needs nothing of MPI's (its shared-memory files, its daemons) and
/// behaves exactly as a build without MPI.
bool started_by_launcher() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(variable)) return true;
  return false;
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  if (!started_by_launcher()) return;
  // MPI's start-up is watched: Open MPI whose shared memory cannot be mapped on one rank (too little memory under
  // `ulimit -v`) can wait for ever in the first collective. Past the exit patience (FLUXJAC_EXIT_PATIENCE_SECONDS,
  // 60 s) the rank ends with its line and exit code 4, and mpirun ends the others.
  const double patience = exit_patience_seconds();
  const auto started = std::make_shared<std::atomic<bool>>(false);
  const auto env_int = [](const char* name) {
    const char* text = std::getenv(name);
    return text ? std::atoi(text) : -1;
  };
  const std::string line =
      error_line(fmt::format("MPI's start-up did not finish within {:g} s on this process (MPI's own messages above "
                             "say why, e.g. its shared memory could not be mapped with too little memory per "
                             "process): ending it",
                             patience),
                 env_int("OMPI_COMM_WORLD_RANK"), env_int("OMPI_COMM_WORLD_SIZE"));
  std::thread([started, patience, line] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience);
    while (!started->load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        write_to_stderr(line);
        std::_Exit(static_cast<int>(ExitCode::kRuntime));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }).detach();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // Errors come back as codes (turned into fluxjac::Error), not as an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  // Tests: this rank's start-up never finishes (FLUXJAC_TEST_MPI_START_HANG=RANK).
  if (const int hung = env_int("FLUXJAC_TEST_MPI_START_HANG"); hung >= 0 && hung == env_int("OMPI_COMM_WORLD_RANK"))
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  Communicator::world();  // its first collectives (the ranks of each node), inside the watch
  started->store(true);
}

MpiSession::~MpiSession() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

const Communicator& Communicator::world() {
  static const Communicator world = [] {
    Communicator c;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) return c;  // e.g. a unit test without MpiSession: one rank
    const MPI_Comm comm = MPI_COMM_WORLD;
    std::memcpy(&c.handle_, &comm, sizeof comm);
    c.read_ranks();
    return c;
  }();
  return world;
}

Communicator Communicator::split(int color) const {
  Communicator c;
  if (size_ == 1 && handle_ == 0) {  // one process, no MPI running
    if (color < 0) c.size_ = 0;
    return c;
  }
  meet(nullptr);
  MPI_Comm comm;
  check(MPI_Comm_split(handle_of(&handle_), color < 0 ? MPI_UNDEFINED : color, rank_, &comm), "MPI_Comm_split");
  if (comm == MPI_COMM_NULL) {
    c.size_ = 0;
    return c;
  }
  std::memcpy(&c.handle_, &comm, sizeof comm);
  c.read_ranks();
  return c;
}

void Communicator::read_ranks() {
  const MPI_Comm comm = handle_of(&handle_);
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  MPI_Comm node;  // the ranks that share this one's node (and its GPUs)
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank_);
  MPI_Comm_size(node, &node_size_);
  MPI_Comm_free(&node);
}

// handle_ == 0: MPI is not running (fluxjac started without a launcher), so this is the one process and every
// collective below is the identity.

void Communicator::barrier() const { meet(nullptr); }

namespace {
template <class T>
T reduce(const void* handle, T value, MPI_Datatype type, MPI_Op op) {
  T result{};
  check(MPI_Allreduce(&value, &result, 1, type, op, handle_of(handle)), "MPI_Allreduce");
  return result;
}
}  // namespace

double Communicator::max(double value) const {
  if (handle_ == 0) return value;
  meet(nullptr);
  return reduce(&handle_, value, MPI_DOUBLE, MPI_MAX);
}
double Communicator::min(double value) const {
  if (handle_ == 0) return value;
  meet(nullptr);
  return reduce(&handle_, value, MPI_DOUBLE, MPI_MIN);
}
double Communicator::sum(double value) const {
  if (handle_ == 0) return value;
  meet(nullptr);
  return reduce(&handle_, value, MPI_DOUBLE, MPI_SUM);
}
std::int64_t Communicator::max(std::int64_t value) const {
  if (handle_ == 0) return value;
  meet(nullptr);
  return reduce(&handle_, value, MPI_INT64_T, MPI_MAX);
}
std::int64_t Communicator::sum(std::int64_t value) const {
  if (handle_ == 0) return value;
  meet(nullptr);
  return reduce(&handle_, value, MPI_INT64_T, MPI_SUM);
}

namespace {
std::vector<double> reduce_each(const void* handle, const std::vector<double>& values, MPI_Op operation) {
  std::vector<double> result(values.size());
  check(MPI_Allreduce(values.data(), result.data(), static_cast<int>(values.size()), MPI_DOUBLE, operation,
                      handle_of(handle)),
        "MPI_Allreduce");
  return result;
}
}  // namespace

std::vector<double> Communicator::max(const std::vector<double>& values) const {
  if (handle_ == 0) return values;
  meet(nullptr);
  return reduce_each(&handle_, values, MPI_MAX);
}

std::vector<double> Communicator::sum(const std::vector<double>& values) const {
  if (handle_ == 0) return values;
  meet(nullptr);
  return reduce_each(&handle_, values, MPI_SUM);
}

std::int64_t Communicator::exclusive_sum(std::int64_t value) const {
  if (handle_ == 0) return 0;
  meet(nullptr);
  std::int64_t result = 0;
  check(MPI_Exscan(&value, &result, 1, MPI_INT64_T, MPI_SUM, handle_of(&handle_)), "MPI_Exscan");
  return rank_ == 0 ? 0 : result;  // MPI leaves rank 0's result undefined
}

std::vector<std::int64_t> Communicator::all_gather(std::int64_t value) const {
  if (handle_ == 0) return std::vector<std::int64_t>{value};
  meet(nullptr);
  std::vector<std::int64_t> values(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, handle_of(&handle_)), "MPI_Allgather");
  return values;
}

std::vector<double> Communicator::all_gather(double value) const {
  if (handle_ == 0) return std::vector<double>{value};
  meet(nullptr);
  std::vector<double> values(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, handle_of(&handle_)), "MPI_Allgather");
  return values;
}

std::vector<std::string> Communicator::all_gather(const std::string& text) const {
  if (handle_ == 0) return {text};
  const std::vector<std::int64_t> lengths = all_gather(static_cast<std::int64_t>(text.size()));
  const std::int64_t total = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  if (total > static_cast<std::int64_t>(std::numeric_limits<int>::max()))
    fail(ExitCode::kRuntime, "MPI_Allgatherv: {} bytes from {} ranks is more than one call carries", total, size_);
  std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  for (std::size_t r = 0, at = 0; r < counts.size(); at += counts[r], ++r) {
    counts[r] = static_cast<int>(lengths[r]);
    offsets[r] = static_cast<int>(at);
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  meet(nullptr);  // a rank that could not allocate `all` meets the others here, not in MPI_Allgatherv
  check(MPI_Allgatherv(text.data(), static_cast<int>(text.size()), MPI_BYTE, all.data(), counts.data(), offsets.data(),
                       MPI_BYTE, handle_of(&handle_)),
        "MPI_Allgatherv");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < counts.size(); ++r) texts.push_back(all.substr(offsets[r], counts[r]));
  return texts;
}

namespace {
/// MPI_Bcast in pieces, without the failure round (Communicator::meet uses it inside its own).
void broadcast_raw(const void* handle, void* data, std::size_t bytes, int root) {
  for (std::size_t done = 0; done < bytes; done += kMaxMessageBytes) {
    const std::size_t piece = std::min(kMaxMessageBytes, bytes - done);
    check(MPI_Bcast(static_cast<char*>(data) + done, static_cast<int>(piece), MPI_BYTE, root, handle_of(handle)),
          "MPI_Bcast");
  }
}
void broadcast_raw(const void* handle, std::string& text, int root) {
  std::uint64_t length = text.size();
  broadcast_raw(handle, &length, sizeof length, root);
  text.resize(length);
  broadcast_raw(handle, text.data(), length, root);
}
}  // namespace

void Communicator::broadcast(std::string& text, int root) const {
  if (handle_ == 0) return;
  meet(nullptr);
  broadcast_raw(&handle_, text, root);
}

void Communicator::broadcast_bytes(void* data, std::size_t bytes, int root) const {
  if (handle_ == 0) return;
  meet(nullptr);
  broadcast_raw(&handle_, data, bytes, root);
}

void Communicator::send_bytes(const void* data, std::size_t bytes, int destination, int tag) const {
  for (std::size_t done = 0; done == 0 || done < bytes; done += kMaxMessageBytes) {
    const std::size_t piece = std::min(kMaxMessageBytes, bytes - done);
    check(MPI_Send(static_cast<const char*>(data) + done, static_cast<int>(piece), MPI_BYTE, destination, tag,
                   handle_of(&handle_)),
          "MPI_Send");
    if (bytes == 0) break;
  }
}

void Communicator::receive_bytes(void* data, std::size_t bytes, int source, int tag) const {
  for (std::size_t done = 0; done == 0 || done < bytes; done += kMaxMessageBytes) {
    const std::size_t piece = std::min(kMaxMessageBytes, bytes - done);
    check(MPI_Recv(static_cast<char*>(data) + done, static_cast<int>(piece), MPI_BYTE, source, tag, handle_of(&handle_),
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    if (bytes == 0) break;
  }
}

std::vector<std::vector<std::int64_t>> Communicator::all_to_all(
    const std::vector<std::vector<std::int64_t>>& to_rank) const {
  if (handle_ == 0) return to_rank;
  meet(nullptr);
  const auto n = static_cast<std::size_t>(size_);
  std::vector<std::uint64_t> send_counts(n), receive_counts(n);
  for (std::size_t r = 0; r < n; ++r) send_counts[r] = to_rank[r].size();
  check(MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, receive_counts.data(), 1, MPI_UINT64_T, handle_of(&handle_)),
        "MPI_Alltoall");
  // Each list travels from its own vector into its own vector (no packing into one buffer and out again), in pieces
  // of at most kMaxMessageBytes; messages between two ranks with one tag arrive in order.
  constexpr int kTag = 78;
  constexpr std::size_t kPiece = kMaxMessageBytes / sizeof(std::int64_t);
  // Everything the lists need is allocated before any of their messages is posted, and a failure round follows: a
  // rank that cannot allocate (out of memory) leaves here and meets the others at its guard while they wait in that
  // round, instead of leaving them in MPI_Waitall for messages it never sends.
  if (injected_all_to_all_failure()) throw std::bad_alloc();
  std::vector<std::vector<std::int64_t>> from_rank(n);
  std::vector<MPI_Request> requests;
  std::size_t messages = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == rank_) {
      from_rank[r] = to_rank[r];
      continue;
    }
    from_rank[r].resize(receive_counts[r]);
    messages += (receive_counts[r] + kPiece - 1) / kPiece + (send_counts[r] + kPiece - 1) / kPiece;
  }
  requests.reserve(messages);
  meet(nullptr);
  for (std::size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == rank_) continue;
    for (std::size_t first = 0; first < receive_counts[r]; first += kPiece) {
      requests.emplace_back();
      check(MPI_Irecv(from_rank[r].data() + first, static_cast<int>(std::min(kPiece, receive_counts[r] - first)),
                      MPI_INT64_T, static_cast<int>(r), kTag, handle_of(&handle_), &requests.back()),
            "MPI_Irecv");
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == rank_) continue;
    for (std::size_t first = 0; first < send_counts[r]; first += kPiece) {
      requests.emplace_back();
      check(MPI_Isend(to_rank[r].data() + first, static_cast<int>(std::min(kPiece, send_counts[r] - first)),
                      MPI_INT64_T, static_cast<int>(r), kTag, handle_of(&handle_), &requests.back()),
            "MPI_Isend");
    }
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  return from_rank;
}

void Communicator::exchange(const std::vector<int>& peers, const std::vector<const double*>& send,
                            const std::vector<std::size_t>& send_count, const std::vector<double*>& receive,
                            const std::vector<std::size_t>& receive_count) const {
  if (handle_ == 0) return;
  std::vector<MPI_Request> requests;
  requests.reserve(2 * peers.size());  // before the failure round: no allocation between two messages
  meet(nullptr);
  constexpr int kTag = 77;
  for (std::size_t k = 0; k < peers.size(); ++k) {
    requests.emplace_back();
    check(MPI_Irecv(receive[k], static_cast<int>(receive_count[k]), MPI_DOUBLE, peers[k], kTag, handle_of(&handle_),
                    &requests.back()),
          "MPI_Irecv");
  }
  for (std::size_t k = 0; k < peers.size(); ++k) {
    requests.emplace_back();
    check(MPI_Isend(send[k], static_cast<int>(send_count[k]), MPI_DOUBLE, peers[k], kTag, handle_of(&handle_),
                    &requests.back()),
          "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

int Communicator::leave(int exit_code, double patience_seconds) const {
  if (handle_ == 0 || size_ == 1) return exit_code;
  MPI_Request request;
  if (MPI_Ibarrier(handle_of(&handle_), &request) != MPI_SUCCESS) return exit_code;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience_seconds);
  int done = 0;
  while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
    if (std::chrono::steady_clock::now() > deadline)
      abort(fmt::format("the other ranks did not finish within {:.0f} s of this one (they wait in a step it left)",
                        patience_seconds),
            exit_code != 0 ? exit_code : static_cast<int>(ExitCode::kRuntime));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return exit_code;
}

void Communicator::abort(const std::string& message, int exit_code) const {
  print_error_line(message, rank_, size_, "ending every rank");
  if (handle_ != 0) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

#else  // ---- one process ---------------------------------------------------------------------------------------

bool mpi_available() { return false; }
MpiSession::MpiSession(int&, char**&) {}
MpiSession::~MpiSession() = default;

const Communicator& Communicator::world() {
  static const Communicator world;
  return world;
}

Communicator Communicator::split(int color) const {
  Communicator c;
  if (color < 0) c.size_ = 0;
  return c;
}

void Communicator::barrier() const {}
double Communicator::max(double value) const { return value; }
double Communicator::min(double value) const { return value; }
double Communicator::sum(double value) const { return value; }
std::int64_t Communicator::max(std::int64_t value) const { return value; }
std::int64_t Communicator::sum(std::int64_t value) const { return value; }
std::vector<double> Communicator::max(const std::vector<double>& values) const { return values; }
std::vector<double> Communicator::sum(const std::vector<double>& values) const { return values; }
std::int64_t Communicator::exclusive_sum(std::int64_t) const { return 0; }
std::vector<std::int64_t> Communicator::all_gather(std::int64_t value) const { return {value}; }
std::vector<double> Communicator::all_gather(double value) const { return {value}; }
std::vector<std::string> Communicator::all_gather(const std::string& text) const { return {text}; }
void Communicator::broadcast(std::string&, int) const {}
void Communicator::broadcast_bytes(void*, std::size_t, int) const {}
void Communicator::send_bytes(const void*, std::size_t, int destination, int) const {
  fail(ExitCode::kRuntime, "no rank {} to send to: this build has one process (FLUXJAC_MPI)", destination);
}
void Communicator::receive_bytes(void*, std::size_t, int source, int) const {
  fail(ExitCode::kRuntime, "no rank {} to receive from: this build has one process (FLUXJAC_MPI)", source);
}
std::vector<std::vector<std::int64_t>> Communicator::all_to_all(
    const std::vector<std::vector<std::int64_t>>& to_rank) const {
  return to_rank;
}
void Communicator::exchange(const std::vector<int>&, const std::vector<const double*>&, const std::vector<std::size_t>&,
                            const std::vector<double*>&, const std::vector<std::size_t>&) const {}
int Communicator::leave(int exit_code, double) const { return exit_code; }
void Communicator::abort(const std::string& message, int exit_code) const {
  print_error_line(message);
  std::exit(exit_code);
}

#endif

AgreedError::AgreedError(const std::string& plain, ExitCode code, int origin, Guard guard, std::uintptr_t met_on)
    : Error(origin == Communicator::world().rank() ? plain : fmt::format("{} (on rank {})", plain, origin), code),
      plain_(plain),
      origin_(origin),
      guard_(guard),
      met_on_(met_on) {}

void Communicator::agree(const std::function<void()>& step, Guard guard) const {
  std::optional<AgreedError> mine;
  try {
    step();
  } catch (const AgreedError& error) {
    if (error.met_on() == handle_) throw;  // met on this communicator inside step: every rank throws it already
    // Met by some ranks (a communicator of part of the job): now by these, naming the rank it came from.
    mine.emplace(error.plain(), error.code(), error.origin(), guard, handle_);
  } catch (const std::exception& error) {
    const Error known = as_error(error);
    mine.emplace(known.what(), known.code(), Communicator::world().rank(), guard, handle_);
  }
  meet(mine ? &*mine : nullptr);
}

void Communicator::meet(const AgreedError* mine) const {
  if (handle_ == 0 || size_ <= 1) {
    if (mine) throw *mine;
    return;
  }
#if defined(FLUXJAC_WITH_MPI)
  // One reduction: the highest size - rank of the failing ranks is the lowest failing rank, which speaks for all.
  const std::int64_t failing =
      reduce(&handle_, mine ? std::int64_t{size_ - rank_} : std::int64_t{0}, MPI_INT64_T, MPI_MAX);
  if (failing == 0) return;
  const int root = size_ - static_cast<int>(failing);
  std::string message = mine ? mine->plain() : std::string();
  std::int32_t figures[3] = {mine ? static_cast<std::int32_t>(mine->code()) : 0, mine ? mine->origin() : 0,
                             mine && mine->case_only() ? 1 : 0};
  broadcast_raw(&handle_, message, root);
  broadcast_raw(&handle_, figures, sizeof figures, root);
  throw AgreedError(message, static_cast<ExitCode>(figures[0]), figures[1],
                    figures[2] != 0 ? Guard::kCase : Guard::kCommand, handle_);
#endif
}

}  // namespace fluxjac
