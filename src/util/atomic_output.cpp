#include "util/atomic_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

namespace fs = std::filesystem;

// ---- live temporaries, removed by the handler of SIGINT, SIGTERM and SIGHUP ------------------------------------
// The handler may run at any instant on any thread, so it only reads lock-free atomics and fixed buffers and calls
// async-signal-safe functions (unlink, signal, raise).

constexpr int kSlots = 32;
constexpr std::size_t kMaxPath = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};

TemporarySlot g_temporaries[kSlots];

/// SIGCONTs received: mpirun ends a job by sending its processes SIGCONT, then SIGTERM a second later, then SIGKILL
/// (Open MPI's default odls_base_sigkill_timeout), so an output finished in that second waits for the rest of the
/// sequence before it commits (AtomicOutput::commit).
std::atomic<unsigned> g_continued{0};
static_assert(std::atomic<unsigned>::is_always_lock_free);

/// Longer than mpirun's second between SIGCONT and SIGTERM.
constexpr auto kEndOfJobGrace = std::chrono::milliseconds(2500);

}  // namespace

void remove_live_temporaries() noexcept {
  for (TemporarySlot& slot : g_temporaries)
    if (slot.state.load(std::memory_order_acquire) == kLive) ::unlink(slot.path);
}

namespace {

void remove_temporaries_and_reraise(int signal_number) {
  remove_live_temporaries();
  // SA_RESETHAND restored the default action; the signal stays blocked until the handler returns, then ends the
  // process the way the sender expects (exit status 128 + signal for the shell).
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

void note_continued(int) { g_continued.fetch_add(1, std::memory_order_relaxed); }

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction continued {};
    if (::sigaction(SIGCONT, nullptr, &continued) == 0 && continued.sa_handler == SIG_DFL) {
      struct sigaction action {};
      action.sa_handler = note_continued;  // the process continues either way: the handler only counts
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      ::sigaction(SIGCONT, &action, nullptr);
    }
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      // A signal the parent chose to ignore (nohup ignores SIGHUP) stays ignored.
      if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      ::sigaction(signal_number, &action, nullptr);
    }
    // Past a file-size limit (ulimit -f) a write then fails with EFBIG and is reported like a full disk, instead
    // of SIGXFSZ killing the process with the temporary left behind.
    struct sigaction current {};
    if (::sigaction(SIGXFSZ, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGXFSZ, SIG_IGN);
  });
}

/// The slot now holding path, or -1 when the path is too long or every slot is taken (then only the destructor
/// removes that temporary).
int register_temporary(const std::string& path) {
  install_signal_handlers();
  std::error_code error;
  const std::string absolute = fs::absolute(path, error).string();
  if (error || absolute.size() >= kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_temporaries[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    std::memcpy(g_temporaries[i].path, absolute.c_str(), absolute.size() + 1);
    g_temporaries[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_temporaries[slot].state.store(kFree, std::memory_order_release);
}

// ---- names and flushing ------------------------------------------------------------------------------------------

/// "<pid>-<16 hex digits>": the pid alone repeats across the nodes of a cluster sharing a folder, so the host name,
/// the clock, a per-process counter and the system's random source go in too.
std::string unique_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::uint64_t mix = std::hash<std::string>{}(host);
  mix ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9E3779B97F4A7C15u;
  mix ^= counter.fetch_add(1) << 48;
  try {
    std::random_device device;
    mix ^= static_cast<std::uint64_t>(device()) << 32 | device();
  } catch (const std::exception&) {
    // no random source: the host, the clock and the counter still tell processes apart
  }
  return fmt::format("{}-{:016x}", static_cast<long>(::getpid()), mix);
}

[[noreturn]] void fail_write(const std::string& shown, int error_number) {
  fail(ExitCode::kRuntime, "{}: writing the file failed: {}", shown, std::strerror(error_number));
}

/// Flushes a file's data to the disk: a full disk or an I/O error of delayed writes shows here at the latest.
void flush_to_disk(int folder, const std::string& name, const std::string& shown) {
  const int descriptor = ::openat(folder, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (descriptor < 0) fail_write(shown, errno);
  if (::fsync(descriptor) != 0) {
    const int error_number = errno;
    ::close(descriptor);
    fail_write(shown, error_number);
  }
  // Tests: mpirun's SIGCONT arriving while the flush runs (FLUXJAC_TEST_SIGCONT_IN_FLUSH=1).
  static const bool continued_in_flush = std::getenv("FLUXJAC_TEST_SIGCONT_IN_FLUSH") != nullptr;
  if (continued_in_flush) std::raise(SIGCONT);
  if (::close(descriptor) != 0) fail_write(shown, errno);
}

}  // namespace

RemovedOnSignal::RemovedOnSignal(const std::string& path) : slot_(register_temporary(path)) {}

RemovedOnSignal::~RemovedOnSignal() { unregister_temporary(slot_); }

AtomicOutput::AtomicOutput(std::string final_path, const std::function<void(const std::string& temporary)>& announce)
    : final_path_(std::move(final_path)), target_(output_target(final_path_)) {
  target_->confirm();
  const int folder = target_->folder_descriptor();
  for (int attempt = 0;; ++attempt) {
    temporary_name_ = target_->name() + ".tmp-" + unique_suffix();
    temporary_path_ = target_->path_in_folder(temporary_name_);
    struct stat existing {};
    if (announce && attempt < 8 && ::fstatat(folder, temporary_name_.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0)
      continue;                                            // announced names are final: pick one that is free now
    registry_slot_ = register_temporary(temporary_path_);  // before the file exists: no instant without cover
    if (announce) announce(temporary_path_);
    const int descriptor =
        ::openat(folder, temporary_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (descriptor >= 0) {
      ::close(descriptor);
      continued_at_start_ = g_continued.load(std::memory_order_relaxed);
      return;
    }
    const int error_number = errno;
    unregister_temporary(std::exchange(registry_slot_, -1));
    if (error_number != EEXIST || attempt == 8 || announce)
      fail(ExitCode::kRuntime, "{}: cannot create a temporary file in folder {}: {}", target_->shown(),
           target_->folder(), std::strerror(error_number));
  }
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) ::unlinkat(target_->folder_descriptor(), temporary_name_.c_str(), 0);
  unregister_temporary(registry_slot_);
}

void AtomicOutput::commit() {
  if (committed_) return;
  const int folder = target_->folder_descriptor();
  const std::string& shown = target_->shown();
  flush_to_disk(folder, temporary_name_, shown);
  target_->confirm();  // the rename below goes where the check said, or nowhere
  struct stat replaced {};
  if (::fstatat(folder, target_->name().c_str(), &replaced, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(replaced.st_mode))
    ::fchmodat(folder, temporary_name_.c_str(), replaced.st_mode & 07777, 0);  // the replaced file's permissions
  // A SIGCONT since the output began (its writing and its flush to disk, which can take a while) may be the start of
  // mpirun ending the job: its SIGTERM then comes within the grace and removes the temporary instead of letting the
  // output replace what was there. Checked last, just before the rename.
  if (g_continued.load(std::memory_order_relaxed) != continued_at_start_) std::this_thread::sleep_for(kEndOfJobGrace);
  if (::renameat(folder, temporary_name_.c_str(), folder, target_->name().c_str()) != 0)
    fail(ExitCode::kRuntime, "{}: cannot move the finished file into place: {}", shown, std::strerror(errno));
  committed_ = true;
  unregister_temporary(std::exchange(registry_slot_, -1));
  ::fsync(folder);  // makes the rename durable (best effort: not every file system syncs folders)
}

void write_text_output(const std::string& path, const std::string& text) {
  if (path == kStandardOutput) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      fail(ExitCode::kRuntime, "standard output: writing failed: {}", std::strerror(errno));
    return;
  }
  AtomicOutput output(path);
  const int descriptor = ::open(output.temporary_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (descriptor < 0) fail_write(path, errno);
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(descriptor, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error_number = n < 0 ? errno : ENOSPC;
      ::close(descriptor);
      fail_write(path, error_number);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(descriptor) != 0) fail_write(path, errno);
  output.commit();
}

}  // namespace fluxjac
