// fluxjac list: every registered variant, with kernel resources when a GPU is present.
#include <algorithm>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "cli/commands.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

void add_list_command(CLI::App& app, CommandAction& action) {
  CLI::App* list = app.add_subcommand(
      "list", "List the registered variants: description, backend, threads per edge, seeding, the assembly "
              "strategy that --assembly auto picks, and (with a GPU) that kernel's registers, local (spill) bytes, "
              "shared memory and threads per block");
  list->callback([&action] {
    action = [] {
      const bool gpu = gpu_available();
      fmt::print("{:<10} {:<6} {:>7} {:<16} {:<8} {:>5} {:>6} {:>7} {:>7}  {}\n", "variant", "backend", "thr/edge",
                 "seeding", "assembly", "regs", "local", "shared", "threads", "description");
      for (const VariantInfo& info : Registry::instance().list()) {
        std::string regs = "-", local = "-", shared = "-", threads = "-";
        if (info.backend == Backend::kCuda && info.available && gpu) {
          if (auto resources = Registry::instance().create(info.name)->resources()) {
            regs = std::to_string(resources->registers);
            local = fmt::format("{}B", resources->local_bytes);
            shared = fmt::format("{}B", resources->shared_bytes);
            threads = std::to_string(resources->block_threads);
          }
        }
        const std::string backend = info.available ? to_string(info.backend) : "cuda*";
        const std::string assembly = info.backend == Backend::kCuda ? to_string(info.preferred_assembly) : "-";
        fmt::print("{:<10} {:<7} {:>7} {:<16} {:<8} {:>5} {:>6} {:>7} {:>7}  {}\n", info.name, backend,
                   info.threads_per_edge, to_string(info.seeding), assembly, regs, local, shared, threads,
                   info.description);
      }
      const auto infos = Registry::instance().list();
      const bool any_unbuilt = std::any_of(infos.begin(), infos.end(), [](const auto& i) { return !i.available; });
      if (any_unbuilt)
        fmt::print("\ncuda* = not built: this fluxjac was built without CUDA (its lane mapping is still tested).\n");
      else if (!gpu)
        fmt::print("\nNo GPU found: kernel resources are shown when a GPU is present.\n");
      return 0;
    };
  });
}

}  // namespace fluxjac
