// fluxjac — memory the process may still take, checked before big allocations so that a file declaring a huge
// size, or a mesh too big for the machine, ends with one line saying so instead of the kernel's OOM killer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fluxjac {

/// \brief Bytes the process can still allocate: the least of the machine's available memory and swap
/// (MemAvailable + SwapFree), the room left under a cgroup memory limit (containers, Slurm) and under the
/// address-space and data limits (ulimit -v, ulimit -d); nullopt when none of them can be read.
std::optional<std::uint64_t> available_memory();

/// \brief "3.20 GB", "14.0 kB": a byte count for messages (decimal units).
std::string byte_size_text(double bytes);

/// \brief Error(kRuntime) "PURPOSE needs about X of memory, but only Y is available ..." when bytes exceeds
/// available_memory().
void require_memory(double bytes, const std::string& purpose);

}  // namespace fluxjac
