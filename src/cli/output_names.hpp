// fluxjac — the rules every output option of the command line carries, whichever command it belongs to.
#pragma once

#include <CLI/CLI.hpp>

namespace fluxjac {

/// \brief Gives every output option (--output, --csv, --json) of app and of its subcommands a check that refuses an
/// empty name, on the command line (`-o ""`) or in a config file (`json = ""`), as it is read, before any work:
/// an empty value would otherwise read as "not given", and the command would run and write nothing. Every command
/// with an output option also gets `--force` (config key `force`), which lets check_output_paths replace outputs that
/// exist (util/output_paths.hpp); without it an existing output is refused. The other checks of an output name need
/// its folder and the inputs: check_output_paths makes them, also before any work.
void add_output_rules(CLI::App& app);

}  // namespace fluxjac
