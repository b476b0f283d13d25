#include "util/input_path.hpp"

#include <filesystem>
#include <system_error>

#include "util/error.hpp"

namespace fluxjac {

InputPathKind input_path_kind(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error) {
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory)
      return InputPathKind::kMissing;
    fail(ExitCode::kInvalidInput, "{}: {}", path, error.message());
  }
  if (!std::filesystem::exists(status)) return InputPathKind::kMissing;
  if (std::filesystem::is_regular_file(status)) return InputPathKind::kFile;
  if (std::filesystem::is_directory(status)) return InputPathKind::kDirectory;
  return InputPathKind::kOther;
}

}  // namespace fluxjac
