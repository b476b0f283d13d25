// fluxjac info: a summary of a mesh/state file or a Jacobian file.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/file_info.hpp"

namespace fluxjac {

void add_info_command(CLI::App& app, CommandAction& action) {
  auto path = std::make_shared<std::string>();
  CLI::App* info = add_command(
      app,
      {"info",
       "Summarize a fluxjac HDF5 file: for a mesh, node/edge counts, edges per node, area range, ordering "
       "bandwidth and state ranges (density, pressure, Mach); for a Jacobian, its pattern and value ranges"},
      action, [path](const CLI::App&) {
        const std::string text = describe_file(*path);
        fmt::print("{}{}", text, !text.empty() && text.back() == '\n' ? "" : "\n");
        return 0;
      });
  info->add_option("file", *path, "mesh/state or Jacobian file (.h5)")->required();
}

}  // namespace fluxjac
