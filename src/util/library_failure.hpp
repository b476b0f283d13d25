// fluxjac — a library that fails inside itself (a fatal signal, its own exit()) ends the process with fluxjac's line.
#pragma once

#include <signal.h>

#include <functional>
#include <string>

namespace fluxjac {

/// \brief While alive, a fatal signal (SIGSEGV, SIGBUS, SIGABRT) or a call of exit() ends the process with one
/// `fluxjac: error` line prepared when the guard is made (error_line of message(cause), rank and ranks), the live
/// temporaries removed (remove_live_temporaries) and exit code 4 (ExitCode::kRuntime). It stands around a library
/// call that fails inside the library instead of returning an error: PT-Scotch out of memory dereferences a null
/// pointer, and an error-exit build of it calls exit(). The handlers only write(2) the ready line and _exit(2)
/// (async-signal-safe), on a stack of their own, so that a stack that could not grow still gets its line; they stand
/// only while the guard lives, and the previous handlers (Open MPI's backtrace printer) come back after it. One guard
/// at a time, made and destroyed on the thread that calls the library.
///
/// Under mpirun the other ranks are then inside the library's collectives, where no failure of fluxjac's reaches them:
/// mpirun ends them when this rank exits non-zero before MPI_Finalize (Open MPI's default), and the job's exit code is
/// this rank's 4.
class LibraryFailureGuard {
 public:
  /// message(cause): the error message for a cause, e.g. "SIGSEGV, an invalid memory access" or "its error exit:
  /// see its message above".
  LibraryFailureGuard(const std::function<std::string(const std::string& cause)>& message, int rank, int ranks);
  ~LibraryFailureGuard();
  LibraryFailureGuard(const LibraryFailureGuard&) = delete;
  LibraryFailureGuard& operator=(const LibraryFailureGuard&) = delete;

  /// The fatal signals the guard catches; its lines are one per signal, then exit()'s.
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT};
  static constexpr int kCauses = 4;

  /// The prepared line of cause k (read by the handlers).
  const std::string& line(int k) const { return lines_[k]; }

 private:
  std::string lines_[kCauses];
  struct sigaction previous_[kCauses - 1] = {};  ///< the handlers the guard replaced
  stack_t previous_stack_ = {};                  ///< the signal stack it replaced
  bool stack_replaced_ = false;
};

}  // namespace fluxjac
