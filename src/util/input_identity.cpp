#include "util/input_identity.hpp"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

#include "util/error.hpp"

namespace fluxjac {
namespace {

namespace fs = std::filesystem;

/// A pinned input: the descriptor held open (never closed: the process ends first) and its status when pinned.
struct PinnedFile {
  int descriptor = -1;
  struct stat status {};
};

/// The process's pinned inputs, by path: each file under its absolute and its canonical path.
struct PinnedInputs {
  std::mutex mutex;
  std::map<std::string, PinnedFile> by_path;
};

PinnedInputs& pinned_inputs() {
  static PinnedInputs inputs;
  return inputs;
}

/// The names path is pinned under: as given made absolute (a link swapped later still leads to the entry), and
/// canonical where it resolves.
std::vector<std::string> pin_keys(const std::string& path) {
  std::vector<std::string> keys;
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  if (!error) keys.push_back(absolute.lexically_normal().string());
  const fs::path canonical = fs::canonical(path, error);
  if (!error) keys.push_back(canonical.string());
  return keys;
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/// The same file (device and inode: exact within one process, since the pinned descriptor keeps the inode from being
/// reused), not rewritten since: the same size, modification time and change time (which no one can set back).
bool same_file(const struct stat& pinned, const struct stat& now) {
  return pinned.st_dev == now.st_dev && pinned.st_ino == now.st_ino && pinned.st_size == now.st_size &&
         same_time(pinned.st_mtim, now.st_mtim) && same_time(pinned.st_ctim, now.st_ctim);
}

/// Network and cluster file systems by their statfs(2) type (the magic numbers of the kernel's and the vendors'
/// headers): one file has one inode number on every client.
struct SharedFileSystem {
  std::uint32_t type;
  const char* name;
};
constexpr SharedFileSystem kSharedFileSystems[] = {
    {0x6969, "nfs"},       {0x0bd00bd0, "lustre"}, {0x47504653, "gpfs"}, {0x19830326, "beegfs"}, {0x00c36400, "ceph"},
    {0xaad7aaea, "panfs"}, {0x7461636f, "ocfs2"},  {0x01161970, "gfs2"}, {0xff534d42, "cifs"},   {0xfe534d42, "smb2"},
    {0x517b, "smb"},       {0x5346414f, "afs"},    {0x6b414653, "kafs"},
};

}  // namespace

std::optional<struct stat> pin_input(const std::string& path) {
  const std::vector<std::string> keys = pin_keys(path);
  PinnedInputs& inputs = pinned_inputs();
  const std::lock_guard<std::mutex> lock(inputs.mutex);
  for (const std::string& key : keys)
    if (const auto pinned = inputs.by_path.find(key); pinned != inputs.by_path.end()) return pinned->second.status;
  // Non-blocking: opening a FIFO for reading would wait for a writer; it is then refused as no regular file.
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (descriptor < 0) return std::nullopt;
  PinnedFile file{descriptor, {}};
  if (::fstat(descriptor, &file.status) != 0 || !S_ISREG(file.status.st_mode)) {
    ::close(descriptor);
    return std::nullopt;
  }
  for (const std::string& key : keys) inputs.by_path.emplace(key, file);
  return file.status;
}

void require_pinned_input(const std::string& path, int descriptor, const std::string& name) {
  PinnedInputs& inputs = pinned_inputs();
  const std::lock_guard<std::mutex> lock(inputs.mutex);
  if (inputs.by_path.empty()) return;
  const PinnedFile* pinned = nullptr;
  for (const std::string& key : pin_keys(path))
    if (const auto found = inputs.by_path.find(key); found != inputs.by_path.end()) {
      pinned = &found->second;
      break;
    }
  if (!pinned) return;
  struct stat now {};
  if (descriptor < 0 || ::fstat(descriptor, &now) != 0 || !same_file(pinned->status, now))
    throw InputChanged(fmt::format("{}: the file changed while the ranks started (replaced or rewritten since every "
                                   "rank agreed on it); run again once it stays put",
                                   name),
                       ExitCode::kInvalidInput);
}

std::optional<std::string> shared_file_system(const std::string& path) {
  struct statfs system {};
  if (::statfs(path.c_str(), &system) != 0) return std::nullopt;
  for (const SharedFileSystem& shared : kSharedFileSystems)
    if (static_cast<std::uint32_t>(system.f_type) == shared.type) return shared.name;
  return std::nullopt;
}

}  // namespace fluxjac
