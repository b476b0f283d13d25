// fluxjac — how much memory the machine can give: checked before large allocations, so that a job too big
// for the machine is refused with an estimate instead of ending in std::bad_alloc (or the OOM killer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fluxjac {

/// Memory available to a new allocation and where that figure came from.
struct AvailableMemory {
  std::int64_t bytes = 0;
  std::string source;  ///< "MemAvailable in /proc/meminfo" or "free physical pages (sysconf)"
};

/// \brief MemAvailable from /proc/meminfo (what the kernel can hand out without swapping, page cache
/// included); where that is missing, sysconf's free physical pages; nullopt when neither is known.
std::optional<AvailableMemory> available_memory();

/// \brief Bytes for messages: "512.0 MiB", "12.3 GiB", "1.1 TiB".
std::string format_bytes(double bytes);

}  // namespace fluxjac
