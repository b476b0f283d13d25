#include "cli/output_names.hpp"

#include <string>

namespace fluxjac {

void refuse_empty_output_names(CLI::App& app) {
  const CLI::Validator not_empty(
      [](const std::string& name) {
        return name.empty() ? std::string("an empty output name: give a file name") : std::string();
      },
      "");
  for (const char* name : {"--output", "--csv", "--json"})
    if (CLI::Option* option = app.get_option_no_throw(name)) option->check(not_empty);
  for (CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; }))
    refuse_empty_output_names(*subcommand);
}

}  // namespace fluxjac
