// fluxjac — memory the process may still take, checked before big allocations so that a file declaring a huge
// size, or a mesh too big for the machine, ends with one line saying so instead of the kernel's OOM killer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fluxjac {

/// Memory a new allocation can still get, and the limit that sets it (for messages).
struct AvailableMemory {
  std::int64_t bytes = 0;
  std::string source;  ///< e.g. "MemAvailable in /proc/meminfo", "the cgroup memory limit", "ulimit -d"
};

/// \brief Bytes the process can still allocate: the least of the machine's available memory and swap
/// (MemAvailable + SwapFree, or sysconf's free pages where /proc/meminfo is missing), the room left under a cgroup
/// memory limit (containers, Slurm) and under the address-space and data limits (ulimit -v, ulimit -d); nullopt
/// when none of them can be read.
std::optional<AvailableMemory> available_memory();

/// \brief The peak resident set of this process so far, in bytes: VmHWM of /proc/self/status, or getrusage's
/// ru_maxrss where that is missing; 0 when neither can be read.
std::int64_t peak_resident_bytes();

/// \brief Starts the peak resident set again from the current one (Linux: "5" to /proc/self/clear_refs), so that
/// peak_resident_bytes() gives the peak of what follows, not of the process's earlier work (e.g. an earlier case of a
/// sweep); freed heap memory is returned to the system first (glibc), so that the peak starts from what is in use.
/// False where the system does not allow it; the peak then keeps counting from the start of the process.
bool restart_peak_resident();

/// \brief Bytes for messages: "512.0 MiB", "12.3 GiB", "1.1 TiB".
std::string format_bytes(double bytes);

/// \brief Error(kRuntime) "PURPOSE needs about X of memory, but only Y is available (SOURCE) ..." when bytes
/// exceeds available_memory().
void require_memory(double bytes, const std::string& purpose);

}  // namespace fluxjac
