// fluxjac — TOML config files for subcommands.
#pragma once

#include <CLI/CLI.hpp>

namespace fluxjac {

/// \brief Adds `--config FILE.toml` to a subcommand. CLI11 reads config files only for the top-level app
/// (CLIUtils/CLI11#1056), so apply_config_file() applies it when the subcommand runs.
void add_config_option(CLI::App& subcommand);

/// \brief Applies the subcommand's --config file (if given) to every option the command line left unset.
/// Keys are the subcommand's long option names; an unknown key or a missing file is a usage error.
void apply_config_file(CLI::App& subcommand);

/// \brief The subcommand's --config file, or "" when none was given (an input the outputs must not overwrite).
std::string config_file_path(const CLI::App& subcommand);

}  // namespace fluxjac
