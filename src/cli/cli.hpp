// fluxjac — command-line entry: subcommands run, list, info, mesh, device.
#pragma once

namespace fluxjac {

/// \brief Parses the command line, runs the subcommand and maps errors to exit codes.
int run_cli(int argc, char** argv);

}  // namespace fluxjac
