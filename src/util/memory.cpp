#include "util/memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace fluxjac {

std::optional<AvailableMemory> available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    std::int64_t kibibytes = -1;
    if (fields >> key >> kibibytes >> unit && key == "MemAvailable:" && unit == "kB" && kibibytes >= 0)
      return AvailableMemory{kibibytes * 1024, "MemAvailable in /proc/meminfo"};
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0)
    return AvailableMemory{static_cast<std::int64_t>(pages) * page_size, "free physical pages (sysconf)"};
  return std::nullopt;
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

}  // namespace fluxjac
