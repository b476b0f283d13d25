// fluxjac device: the GPU and its measured ceilings (copy bandwidth, FP64 FMA rate).
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "cli/commands.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

int describe_device() {
  const auto ceilings = probe_device();
  if (!ceilings) {
    std::string reason = gpu_unavailable().detail;  // "no CUDA device (...)": a sentence here
    reason[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(reason[0])));
    fmt::print("{}: the GPU variants cannot run here.\n", reason);
    return 0;
  }
  fmt::print("device            {}\n", ceilings->name);
  fmt::print("SMs               {}\n", ceilings->sm_count);
  fmt::print("SM clock          {} MHz\n", ceilings->sm_clock_mhz);
  fmt::print("memory            {:.1f} GiB, clock {} MHz\n", ceilings->memory_gib, ceilings->memory_clock_mhz);
  fmt::print("L2                {:.1f} MiB\n", ceilings->l2_mib);
  fmt::print("CUDA runtime      {}.{}, driver {}.{}\n", ceilings->runtime_version / 1000,
             ceilings->runtime_version % 1000 / 10, ceilings->driver_version / 1000,
             ceilings->driver_version % 1000 / 10);
  fmt::print("copy bandwidth    {:.0f} GB/s (device to device, read + write, measured)\n",
             ceilings->copy_bandwidth_gbs);
  fmt::print("FP64 FMA rate     {:.0f} GFLOP/s (measured)\n", ceilings->fp64_gflops);
  return 0;
}

}  // namespace

void add_device_command(CLI::App& app, CommandAction& action) {
  add_command(app,
              {"device",
               "Describe GPU 0 and measure its device-to-device copy bandwidth (bytes read + written) and FP64 "
               "FMA rate: the ceilings against which 'run' reports roofline fractions"},
              action, [](const CLI::App&) { return describe_device(); });
}

}  // namespace fluxjac
