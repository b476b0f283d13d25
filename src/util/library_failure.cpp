#include "util/library_failure.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/error_line.hpp"

namespace fluxjac {
namespace {

// The handlers may run at any instant, so they only read the guard through a lock-free atomic and call
// async-signal-safe functions (write, unlink, _exit).
std::atomic<const LibraryFailureGuard*> g_active{nullptr};
static_assert(std::atomic<const LibraryFailureGuard*>::is_always_lock_free);

/// The handlers' own stack: a fault on a stack that could not grow (out of memory) still runs them. In static storage,
/// as nothing may be allocated once memory has run out.
alignas(16) char g_signal_stack[64 * 1024];

constexpr const char* kSignalCauses[] = {"SIGSEGV, an invalid memory access", "SIGBUS, a bus error",
                                         "SIGABRT, an abort"};
static_assert(std::size(kSignalCauses) == std::size(LibraryFailureGuard::kSignals));
constexpr int kExitCause = LibraryFailureGuard::kCauses - 1;
constexpr const char* kExitCauseText = "its error exit: see its message above";

/// Writes cause k's line (when a guard is active), removes the live temporaries and ends the process with exit code 4.
[[noreturn]] void end_with_line(int cause) noexcept {
  if (const LibraryFailureGuard* guard = g_active.load(std::memory_order_acquire)) {
    const std::string& line = guard->line(cause);
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t written = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) break;
      done += static_cast<std::size_t>(written);
    }
  }
  remove_live_temporaries();
  ::_exit(static_cast<int>(ExitCode::kRuntime));
}

extern "C" void on_fatal_signal(int signal_number) {
  for (int k = 0; k < static_cast<int>(std::size(LibraryFailureGuard::kSignals)); ++k)
    if (LibraryFailureGuard::kSignals[k] == signal_number) end_with_line(k);
  end_with_line(0);
}

/// Registered once, at the first guard: atexit handlers run last registered first, so it runs before fluxjac's
/// generic one (cli.cpp), and it does nothing while no guard stands.
extern "C" void on_exit_inside_library() {
  if (g_active.load(std::memory_order_acquire)) {
    std::fflush(stdout);  // what the command printed before the library's exit, as exit() would have flushed it
    end_with_line(kExitCause);
  }
}

}  // namespace

LibraryFailureGuard::LibraryFailureGuard(const std::function<std::string(const std::string& cause)>& message, int rank,
                                         int ranks) {
  for (int k = 0; k < kExitCause; ++k) lines_[k] = error_line(message(kSignalCauses[k]), rank, ranks);
  lines_[kExitCause] = error_line(message(kExitCauseText), rank, ranks);
  static const bool exit_handler_registered = std::atexit(on_exit_inside_library) == 0;
  static_cast<void>(exit_handler_registered);

  stack_t stack{};
  stack.ss_sp = g_signal_stack;
  stack.ss_size = sizeof g_signal_stack;
  stack_replaced_ = ::sigaltstack(&stack, &previous_stack_) == 0;
  g_active.store(this, std::memory_order_release);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK;
  for (int k = 0; k < kExitCause; ++k) ::sigaction(kSignals[k], &action, &previous_[k]);
}

LibraryFailureGuard::~LibraryFailureGuard() {
  for (int k = 0; k < kExitCause; ++k) ::sigaction(kSignals[k], &previous_[k], nullptr);
  g_active.store(nullptr, std::memory_order_release);
  if (stack_replaced_) ::sigaltstack(&previous_stack_, nullptr);
}

}  // namespace fluxjac
