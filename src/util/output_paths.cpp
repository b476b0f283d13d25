#include "util/output_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>
#include <utility>

#include "util/error.hpp"

namespace fluxjac {
namespace {

namespace fs = std::filesystem;
using Identity = OutputTarget::Identity;

/// Symbolic links followed before giving up (the kernel's own limit).
constexpr int kMaxLinks = 40;

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Identity identity_of(const struct stat& status) { return {status.st_dev, status.st_ino}; }

/// The identity of the file at path (links followed), or nullopt when there is none.
std::optional<Identity> identity_at(const std::string& path) {
  struct stat status {};
  if (path.empty() || ::stat(path.c_str(), &status) != 0) return std::nullopt;
  return identity_of(status);
}

/// The canonical form of an existing folder, or nullopt with errno set.
std::optional<std::string> canonical_folder(const fs::path& folder) {
  char* resolved = ::realpath(folder.c_str(), nullptr);
  if (!resolved) return std::nullopt;
  std::string text(resolved);
  std::free(resolved);
  return text;
}

/// The folder and the file name a write to path lands on (the links of the last component followed).
std::pair<fs::path, std::string> folder_and_name(const std::string& path) {
  const fs::path target = write_target(path);
  return {target.parent_path().empty() ? fs::path(".") : target.parent_path(), target.filename().string()};
}

/// Opens a folder for openat and renameat; a folder that may be written but not listed opens as a path only.
int open_folder(const std::string& folder) {
  int descriptor = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#ifdef O_PATH
  if (descriptor < 0 && errno == EACCES) descriptor = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
#endif
  return descriptor;
}

/// The limit pathconf gives for a folder, or fallback when it gives none.
long folder_limit(const std::string& folder, int name, long fallback) {
  errno = 0;
  const long limit = ::pathconf(folder.c_str(), name);
  return limit > 0 ? limit : fallback;
}

/// Every target check_output_paths resolved, by the name as given (the latest check of a name wins).
struct CheckedTargets {
  std::mutex mutex;
  std::vector<std::shared_ptr<OutputTarget>> targets;
};

CheckedTargets& checked_targets() {
  static CheckedTargets checked;
  return checked;
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

OutputTarget::~OutputTarget() {
  if (folder_descriptor_ >= 0) ::close(folder_descriptor_);
}

std::string OutputTarget::path_in_folder(const std::string& file_name) const {
  return folder_ == "/" ? folder_ + file_name : folder_ + "/" + file_name;
}

std::shared_ptr<OutputTarget> OutputTarget::resolve(const OutputPath& output, std::vector<Input> inputs) {
  const std::shared_ptr<OutputTarget> target(new OutputTarget());
  target->given_ = output.path;
  target->shown_ = output.option.empty() ? output.path : output.option + " " + output.path;
  target->inputs_ = std::move(inputs);
  const std::string& shown = target->shown_;
  if (output.path.empty())
    fail(ExitCode::kUsage, "{}: an empty output name: give a file name{}",
         output.option.empty() ? "output" : output.option,
         output.may_be_standard_output ? " ('-' for standard output)" : "");

  const auto [folder, name] = folder_and_name(output.path);
  // The kernel resolves the path as given (also /proc's magic links such as /dev/stdout -> pipe:[...]).
  struct stat status {};
  if (::stat(output.path.c_str(), &status) == 0) {
    if (!S_ISREG(status.st_mode))
      fail(ExitCode::kUsage, "{}: is {}, not a regular file: fluxjac writes regular files only{}", shown,
           file_kind(status.st_mode), output.may_be_standard_output ? " (give '-' for standard output)" : "");
  } else if (errno == ENAMETOOLONG) {
    fail(ExitCode::kUsage, "{}: the name is too long for the file system: {}", shown, std::strerror(errno));
  }
  if (name.empty() || name == "." || name == "..")
    fail(ExitCode::kUsage, "{}: names a folder, not a file: give a file name", shown);
  std::error_code error;
  if (!fs::is_directory(folder, error)) fail(ExitCode::kUsage, "{}: folder {} does not exist", shown, folder.string());
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    fail(ExitCode::kUsage, "{}: cannot write in folder {}: {}", shown, folder.string(), std::strerror(errno));
  const std::optional<std::string> canonical = canonical_folder(folder);
  if (!canonical)
    fail(ExitCode::kUsage, "{}: cannot resolve folder {}: {}", shown, folder.string(), std::strerror(errno));
  target->folder_ = *canonical;
  target->name_ = name;

  // The temporary (AtomicOutput) lies beside the target and is named after it: it must fit the folder too.
  const long name_max = folder_limit(target->folder_, _PC_NAME_MAX, NAME_MAX);
  if (static_cast<long>(name.size() + kTemporarySuffixBytes) > name_max)
    fail(ExitCode::kUsage,
         "{}: the file name is too long: {} bytes, and the temporary written first beside it adds up to {} more "
         "(.tmp-<pid>-<random>) where folder {} takes names of at most {} bytes; use a name of at most {} bytes",
         shown, name.size(), kTemporarySuffixBytes, target->folder_, name_max,
         name_max - static_cast<long>(kTemporarySuffixBytes));
  const long path_max = folder_limit(target->folder_, _PC_PATH_MAX, PATH_MAX);
  const std::size_t temporary_length = target->path_in_folder(name).size() + kTemporarySuffixBytes;
  if (static_cast<long>(temporary_length) >= path_max)
    fail(ExitCode::kUsage,
         "{}: the path is too long: the temporary written first beside it, in folder {}, would take {} bytes, and "
         "paths may have at most {}",
         shown, target->folder_, temporary_length, path_max - 1);

  target->folder_descriptor_ = open_folder(target->folder_);
  struct stat folder_status {};
  if (target->folder_descriptor_ < 0 || ::fstat(target->folder_descriptor_, &folder_status) != 0)
    fail(ExitCode::kUsage, "{}: cannot open folder {}: {}", shown, target->folder_, std::strerror(errno));
  target->folder_identity_ = identity_of(folder_status);
  return target;
}

void OutputTarget::confirm() const {
  const std::string checked = path_in_folder(name_);
  std::pair<fs::path, std::string> now;
  try {
    now = folder_and_name(given_);
  } catch (const Error& error) {
    fail(ExitCode::kRuntime, "{}: no longer leads to {} as when it was checked ({}): nothing written", shown_, checked,
         error.what());
  }
  const std::optional<std::string> folder_now = canonical_folder(now.first);
  if (!folder_now)
    fail(ExitCode::kRuntime, "{}: folder {} cannot be reached any more ({}): nothing written", shown_,
         now.first.string(), std::strerror(errno));
  struct stat folder_status {};
  const bool same_folder = ::stat(folder_now->c_str(), &folder_status) == 0 &&
                           identity_of(folder_status) == folder_identity_ && *folder_now == folder_;
  if (!same_folder || now.second != name_) {
    const std::string leads_to = *folder_now == "/" ? "/" + now.second : *folder_now + "/" + now.second;
    if (leads_to == checked)
      fail(ExitCode::kRuntime,
           "{}: folder {} was replaced by another one since the output was checked before the run: nothing written",
           shown_, folder_);
    fail(ExitCode::kRuntime,
         "{}: now leads to {}, not to {} as when it was checked before the run (a link or folder on the way changed "
         "while fluxjac ran): nothing written",
         shown_, leads_to, checked);
  }

  struct stat status {};
  if (::fstatat(folder_descriptor_, name_.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) return;  // a new file
  if (!S_ISREG(status.st_mode))
    fail(ExitCode::kRuntime, "{}: {} is now {}, not a regular file: nothing written", shown_, checked,
         file_kind(status.st_mode));
  const Identity file = identity_of(status);
  for (const Input& input : inputs_)
    if (file == input.identity || identity_at(input.path) == file)
      fail(ExitCode::kRuntime,
           "{}: {} is now the same file as {} (it changed while fluxjac ran): fluxjac never writes over a file it "
           "reads; nothing written",
           shown_, checked, input.shown);
  CheckedTargets& registry = checked_targets();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  for (const std::shared_ptr<OutputTarget>& other : registry.targets) {
    if (other.get() == this || (other->folder_identity_ == folder_identity_ && other->name_ == name_)) continue;
    struct stat other_status {};
    if (::fstatat(other->folder_descriptor_, other->name_.c_str(), &other_status, AT_SYMLINK_NOFOLLOW) == 0 &&
        identity_of(other_status) == file)
      fail(ExitCode::kRuntime,
           "{}: {} is now the same file as {} (it changed while fluxjac ran): each output needs its own file; "
           "nothing written",
           shown_, checked, other->shown_);
  }
}

std::shared_ptr<const OutputTarget> output_target(const std::string& path) {
  {
    CheckedTargets& registry = checked_targets();
    const std::lock_guard<std::mutex> lock(registry.mutex);
    for (const std::shared_ptr<OutputTarget>& target : registry.targets)
      if (target->given() == path) return target;
  }
  return OutputTarget::resolve({"", path, false}, {});
}

namespace {
std::atomic<bool> replacing_existing_outputs{false};
}  // namespace

void set_replacing_existing_outputs(bool replace) { replacing_existing_outputs = replace; }

void check_output_paths(const std::vector<InputPath>& inputs, const std::vector<OutputPath>& outputs) {
  std::vector<OutputTarget::Input> existing_inputs;
  for (const InputPath& input : inputs)
    if (const std::optional<Identity> identity = identity_at(input.path))
      existing_inputs.push_back({input.option + " " + input.path, input.path, *identity});

  const OutputPath* standard_output = nullptr;
  struct Resolved {
    const OutputPath* named;
    std::shared_ptr<OutputTarget> target;
    std::optional<Identity> existing;
    Identity folder;
  };
  std::vector<Resolved> files;
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
    std::shared_ptr<OutputTarget> target = OutputTarget::resolve(output, existing_inputs);
    struct stat folder_status {};
    ::fstat(target->folder_descriptor(), &folder_status);
    files.push_back({&output, std::move(target), identity_at(output.path), identity_of(folder_status)});
  }

  for (std::size_t i = 0; i < files.size(); ++i) {
    const OutputPath& output = *files[i].named;
    for (const OutputTarget::Input& input : existing_inputs)
      if (files[i].existing == input.identity)
        fail(ExitCode::kUsage,
             "{} {}: is the same file as {}: fluxjac never writes over a file it reads (choose another output name)",
             output.option, output.path, input.shown);
    if (files[i].existing && !replacing_existing_outputs)
      fail(ExitCode::kInvalidInput,
           "{} {}: the file exists, and fluxjac does not replace files unasked: give --force (config key force = "
           "true) to replace it, or choose another name",
           output.option, output.path);
    for (std::size_t j = 0; j < i; ++j) {
      const bool same_place = files[i].folder == files[j].folder && files[i].target->name() == files[j].target->name();
      const bool same_file = files[i].existing && files[i].existing == files[j].existing;
      if (same_place || same_file)
        fail(ExitCode::kUsage, "{} {} and {} {}: are the same file: each output needs its own name",
             files[j].named->option, files[j].named->path, output.option, output.path);
    }
  }

  CheckedTargets& registry = checked_targets();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  for (Resolved& file : files) {
    std::vector<std::shared_ptr<OutputTarget>>& targets = registry.targets;
    targets.erase(std::remove_if(targets.begin(), targets.end(),
                                 [&](const auto& target) { return target->given() == file.target->given(); }),
                  targets.end());
    targets.push_back(std::move(file.target));
  }
}

}  // namespace fluxjac
