#include "util/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace fluxjac {
namespace {

/// Limits at or above this mean "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr std::uint64_t kNoLimit = std::uint64_t{1} << 62;

/// The first whitespace-separated number of a file, or nullopt ("max", missing file).
std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

/// "MemAvailable:   22381980 kB" and so on, in bytes.
std::optional<std::uint64_t> meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kilobytes = 0;
    if (fields >> kilobytes) return kilobytes * 1024;
  }
  return std::nullopt;
}

/// The cgroup path of this process for a controller ("" for the unified v2 hierarchy), e.g. "/slurm/job_1".
std::optional<std::string> cgroup_path(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    if (line.substr(first + 1, second - first - 1) == controller) return line.substr(second + 1);
  }
  return std::nullopt;
}

/// Room under a cgroup memory limit: v2 (memory.max - memory.current) or v1 (limit_in_bytes - usage_in_bytes),
/// looked up at the process's own cgroup and at the mount root (what a container sees).
std::optional<std::uint64_t> cgroup_room() {
  struct Files {
    std::string limit, usage;
  };
  std::vector<Files> candidates;
  if (const auto path = cgroup_path(""); path && *path != "/")
    candidates.push_back({"/sys/fs/cgroup" + *path + "/memory.max", "/sys/fs/cgroup" + *path + "/memory.current"});
  candidates.push_back({"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"});
  if (const auto path = cgroup_path("memory"); path && *path != "/")
    candidates.push_back({"/sys/fs/cgroup/memory" + *path + "/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory" + *path + "/memory.usage_in_bytes"});
  candidates.push_back({"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"});
  for (const Files& files : candidates) {
    const std::optional<std::uint64_t> limit = read_number(files.limit);
    if (!limit) continue;
    if (*limit >= kNoLimit) return std::nullopt;
    const std::uint64_t usage = read_number(files.usage).value_or(0);
    return usage < *limit ? *limit - usage : 0;
  }
  return std::nullopt;
}

/// Room under ulimit -v and ulimit -d, against the process's current size.
std::optional<std::uint64_t> rlimit_room() {
  std::optional<std::uint64_t> room;
  std::uint64_t pages_total = 0, pages_resident = 0, pages_shared = 0, pages_text = 0, pages_lib = 0, pages_data = 0;
  {
    std::ifstream statm("/proc/self/statm");
    statm >> pages_total >> pages_resident >> pages_shared >> pages_text >> pages_lib >> pages_data;
  }
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto limit_room = [&](int resource, std::uint64_t used) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
    const std::uint64_t cap = limit.rlim_cur;
    const std::uint64_t left = used < cap ? cap - used : 0;
    room = room ? std::min(*room, left) : left;
  };
  limit_room(RLIMIT_AS, pages_total * page);
  limit_room(RLIMIT_DATA, pages_data * page);
  return room;
}

}  // namespace

std::optional<AvailableMemory> available_memory() {
  std::optional<AvailableMemory> room;
  const auto take = [&](std::optional<std::uint64_t> bytes, const char* source) {
    if (bytes && (!room || static_cast<std::int64_t>(*bytes) < room->bytes))
      room = AvailableMemory{static_cast<std::int64_t>(std::min<std::uint64_t>(*bytes, kNoLimit)), source};
  };
  if (const auto available = meminfo_bytes("MemAvailable")) {
    take(*available + meminfo_bytes("SwapFree").value_or(0), "MemAvailable in /proc/meminfo");
  } else {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0)
      take(static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size), "free physical pages (sysconf)");
  }
  take(cgroup_room(), "the cgroup memory limit");
  take(rlimit_room(), "ulimit -v / ulimit -d");
  return room;
}

std::int64_t peak_resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::int64_t kilobytes = 0;
    if (fields >> kilobytes) return kilobytes * 1024;
  }
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  return 0;
}

bool restart_peak_resident() {
#if defined(__GLIBC__)
  malloc_trim(0);  // freed heap goes back to the system first: the new peak starts from what is in use
#endif
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::string format_bytes(double bytes) {
  constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 5) {
    bytes /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

void require_memory(double bytes, const std::string& purpose) {
  const std::optional<AvailableMemory> available = available_memory();
  if (!available || bytes <= static_cast<double>(available->bytes)) return;
  fail(ExitCode::kRuntime,
       "{} needs about {} of memory, but only {} is available ({}): use a machine with more memory or a smaller mesh",
       purpose, format_bytes(bytes), format_bytes(static_cast<double>(available->bytes)), available->source);
}

}  // namespace fluxjac
