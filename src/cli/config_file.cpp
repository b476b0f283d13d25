#include "cli/config_file.hpp"

#include <algorithm>
#include <filesystem>

#include "util/error.hpp"

namespace fluxjac {

void add_config_option(CLI::App& subcommand) {
  subcommand.add_option("--config", "TOML file of option values (keys are the long option names, e.g. "
                                    "mesh = \"box.h5\"); options given on the command line override it");
}

std::string config_file_path(const CLI::App& subcommand) {
  const CLI::Option* config = subcommand.get_option_no_throw("--config");
  return config && config->count() > 0 ? config->as<std::string>() : std::string();
}

void apply_config_file(CLI::App& subcommand) {
  const std::string path = config_file_path(subcommand);
  if (path.empty()) return;
  if (!std::filesystem::is_regular_file(path)) fail(ExitCode::kUsage, "{}: config file not found", path);
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path);
  } catch (const CLI::Error& e) {
    fail(ExitCode::kUsage, "{}: not a valid TOML config file: {}", path, e.what());
  }
  for (const CLI::ConfigItem& item : items) {
    std::string key = item.name;  // TOML style edges_per_block and option style edges-per-block both work
    std::replace(key.begin(), key.end(), '_', '-');
    CLI::Option* option = item.parents.empty() ? subcommand.get_option_no_throw("--" + key) : nullptr;
    if (!option || item.name == "config")
      fail(ExitCode::kUsage, "{}: unknown key '{}' (keys are the long options of 'fluxjac {}')", path,
           item.fullname(), subcommand.get_name());
    if (option->count() > 0) continue;  // the command line wins
    try {
      option->add_result(item.inputs);
      option->run_callback();
    } catch (const CLI::Error& e) {
      fail(ExitCode::kUsage, "{}: key '{}': {}", path, item.name, e.what());
    }
  }
}

}  // namespace fluxjac
