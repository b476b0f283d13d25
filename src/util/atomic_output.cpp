#include "util/atomic_output.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "util/error.hpp"

namespace fluxjac {

AtomicOutput::AtomicOutput(std::string final_path)
    : final_path_(std::move(final_path)),
      temporary_path_(final_path_ + ".tmp-" + std::to_string(static_cast<long>(::getpid()))) {
  namespace fs = std::filesystem;
  if (final_path_.empty()) fail(ExitCode::kUsage, "output file name is empty");
  const fs::path folder = fs::path(final_path_).parent_path();
  std::error_code error;
  if (!folder.empty() && !fs::is_directory(folder, error))
    fail(ExitCode::kUsage, "{}: cannot write: folder {} does not exist", final_path_, folder.string());
  if (fs::is_directory(final_path_, error)) fail(ExitCode::kUsage, "{}: cannot write: is a directory", final_path_);
  fs::remove(temporary_path_, error);  // a leftover of an earlier process with the same pid
}

AtomicOutput::~AtomicOutput() {
  if (committed_) return;
  std::error_code ignored;
  std::filesystem::remove(temporary_path_, ignored);
}

void AtomicOutput::commit() {
  if (committed_) return;
  std::error_code error;
  std::filesystem::rename(temporary_path_, final_path_, error);
  if (error) fail(ExitCode::kRuntime, "{}: cannot move the finished file into place: {}", final_path_, error.message());
  committed_ = true;
}

}  // namespace fluxjac
