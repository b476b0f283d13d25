#include "util/output_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "util/error.hpp"

namespace fluxjac {
namespace {

namespace fs = std::filesystem;

/// Symbolic links followed before giving up (the kernel's own limit).
constexpr int kMaxLinks = 40;

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

/// One output as it will be written: the file already there, if any, and otherwise the canonical name it will get.
struct ResolvedOutput {
  const OutputPath* named = nullptr;
  std::optional<struct stat> existing;
  std::string canonical;
};

ResolvedOutput resolve_output(const OutputPath& output) {
  ResolvedOutput resolved;
  resolved.named = &output;
  const fs::path target = write_target(output.path);
  // The kernel resolves the path as given (also /proc's magic links such as /dev/stdout -> pipe:[...]).
  struct stat status {};
  if (::stat(output.path.c_str(), &status) == 0) {
    if (!S_ISREG(status.st_mode))
      fail(ExitCode::kUsage, "{} {}: is {}, not a regular file: fluxjac writes regular files only{}", output.option,
           output.path, file_kind(status.st_mode),
           output.may_be_standard_output ? " (give '-' for standard output)" : "");
    resolved.existing = status;
  }
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code error;
  if (!fs::is_directory(folder, error))
    fail(ExitCode::kUsage, "{} {}: folder {} does not exist", output.option, output.path, folder.string());
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    fail(ExitCode::kUsage, "{} {}: cannot write in folder {}: {}", output.option, output.path, folder.string(),
         std::strerror(errno));
  const fs::path canonical_folder = fs::canonical(folder, error);
  resolved.canonical = ((error ? folder : canonical_folder) / target.filename()).string();
  return resolved;
}

}  // namespace

std::string write_target(const std::string& path) {
  fs::path current = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    std::error_code error;
    if (!fs::is_symlink(current, error)) return current.string();
    const fs::path link = fs::read_symlink(current, error);
    if (error) fail(ExitCode::kUsage, "{}: cannot read the symbolic link: {}", path, error.message());
    current = link.is_absolute() ? link : current.parent_path() / link;
  }
  fail(ExitCode::kUsage, "{}: too many levels of symbolic links", path);
}

void check_output_paths(const std::vector<InputPath>& inputs, const std::vector<OutputPath>& outputs) {
  std::vector<std::pair<const InputPath*, struct stat>> existing_inputs;
  for (const InputPath& input : inputs) {
    struct stat status {};
    if (!input.path.empty() && ::stat(input.path.c_str(), &status) == 0) existing_inputs.emplace_back(&input, status);
  }

  const OutputPath* standard_output = nullptr;
  std::vector<ResolvedOutput> files;
  for (const OutputPath& output : outputs) {
    if (output.path.empty()) continue;
    if (output.path == kStandardOutput) {
      if (!output.may_be_standard_output)
        fail(ExitCode::kUsage,
             "{} -: standard output takes text outputs only; give a file name (./- for a file named '-')",
             output.option);
      if (standard_output)
        fail(ExitCode::kUsage, "{} and {} both write to standard output ('-'): give one of them a file name",
             standard_output->option, output.option);
      standard_output = &output;
      continue;
    }
    files.push_back(resolve_output(output));
  }

  for (std::size_t i = 0; i < files.size(); ++i) {
    const OutputPath& output = *files[i].named;
    for (const auto& [input, status] : existing_inputs)
      if (files[i].existing && same_file(*files[i].existing, status))
        fail(ExitCode::kUsage,
             "{} {}: is the same file as {} {}: fluxjac never writes over a file it reads (choose another output "
             "name)",
             output.option, output.path, input->option, input->path);
    for (std::size_t j = 0; j < i; ++j) {
      bool same = false;
      if (files[i].existing && files[j].existing) same = same_file(*files[i].existing, *files[j].existing);
      if (!files[i].existing && !files[j].existing) same = files[i].canonical == files[j].canonical;
      if (same)
        fail(ExitCode::kUsage, "{} {} and {} {}: are the same file: each output needs its own name",
             files[j].named->option, files[j].named->path, output.option, output.path);
    }
  }
}

}  // namespace fluxjac
