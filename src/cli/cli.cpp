#include "cli/cli.hpp"

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "util/error.hpp"
#include "version.hpp"

namespace fluxjac {

int run_cli(int argc, char** argv) {
  CLI::App app{"fluxjac: assembles the Jacobian of the 3D Roe flux on unstructured edge meshes with\n"
               "forward-mode AD variants (CPU reference and CUDA), times it and validates it.",
               "fluxjac"};
  app.set_version_flag("--version", fmt::format("fluxjac {} ({})", kVersion, kGitRevision));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  fluxjac mesh gen --kind mixed --n 20 --order rcm -o box.h5\n"
      "  fluxjac run --mesh box.h5 --variant all --csv runs.csv\n"
      "  fluxjac run --config configs/default.toml\n"
      "  fluxjac bench --config configs/paper.toml --json paper.json\n"
      "  fluxjac compare base.json paper.json --time-tolerance 0.1\n"
      "Exit codes: 0 ok, 1 validation failed (compare: a regression), 2 invalid input, 3 usage, 4 run-time (CUDA)\n"
      "error.");

  CommandAction action;
  add_run_command(app, action);
  add_list_command(app, action);
  add_info_command(app, action);
  add_mesh_command(app, action);
  add_device_command(app, action);
  add_bench_command(app, action);
  add_compare_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  try {
    return action ? action() : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "fluxjac: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fluxjac: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kRuntime);
  }
}

}  // namespace fluxjac
