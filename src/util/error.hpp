// fluxjac — the error type users see: one actionable line, turned into an exit code by main.
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace fluxjac {

/// Exit codes of the fluxjac executable.
enum class ExitCode : int {
  kOk = 0,
  kValidationFailed = 1,  ///< a variant disagrees with the reference
  kInvalidInput = 2,      ///< bad file, dataset or value
  kUsage = 3,             ///< bad command line or configuration
  kRuntime = 4,           ///< CUDA or other run-time failure
};

/// \brief An error with a message a user can act on (file, dataset, index, what to fix).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::kInvalidInput)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// \brief Throws Error with a fmt-formatted message.
template <class... Args>
[[noreturn]] void fail(ExitCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...), code);
}

/// \brief Any exception as the Error users see: an Error as it is; running out of memory, a system error (out of
/// threads, files or another resource) and anything else as run-time errors (exit code 4) with a line that says so.
inline Error as_error(const std::exception& exception) {
  if (const auto* error = dynamic_cast<const Error*>(&exception)) return *error;
  if (dynamic_cast<const std::bad_alloc*>(&exception))
    return Error(
        "out of memory: an allocation failed; use a smaller mesh or a machine with more memory (see also ulimit -v "
        "and cgroup limits)",
        ExitCode::kRuntime);
  if (dynamic_cast<const std::system_error*>(&exception))
    return Error(fmt::format("system error: {} (out of threads, files or another resource?)", exception.what()),
                 ExitCode::kRuntime);
  return Error(exception.what(), ExitCode::kRuntime);
}

}  // namespace fluxjac
