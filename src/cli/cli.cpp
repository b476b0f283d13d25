#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/error.hpp"

namespace fluxjac {

int run_cli(int argc, char** argv) {
  CLI::App app{"fluxjac: Jacobian assembly of the 3D Roe flux with forward-mode AD variants"};
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace fluxjac
