// fluxjac — command-line entry: subcommands run, bench, compare, list, info, mesh (gen, dual), device.
#pragma once

namespace fluxjac {

/// \brief Parses the command line, runs the subcommand and maps errors to exit codes.
int run_cli(int argc, char** argv);

}  // namespace fluxjac
