#include "cli/output_names.hpp"

#include <string>

#include "util/output_paths.hpp"

namespace fluxjac {

void add_output_rules(CLI::App& app) {
  const CLI::Validator not_empty(
      [](const std::string& name) {
        return name.empty() ? std::string("an empty output name: give a file name") : std::string();
      },
      "");
  bool writes = false;
  for (const char* name : {"--output", "--csv", "--json"})
    if (CLI::Option* option = app.get_option_no_throw(name)) {
      option->check(not_empty);
      writes = true;
    }
  if (writes)
    app.add_flag_callback(
        "--force", [] { set_replacing_existing_outputs(true); },
        "replace output files that exist (without it an existing output is refused and left as it is)");
  for (CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; })) add_output_rules(*subcommand);
}

}  // namespace fluxjac
