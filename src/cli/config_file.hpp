// fluxjac — TOML config files for subcommands.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fluxjac {

/// \brief One `key = value` line of a config file.
struct ConfigEntry {
  std::string key;
  int line = 0;                     ///< where the key is, from 1
  std::vector<std::string> values;  ///< strings unquoted and unescaped; numbers without '_'; true / false
  bool is_list = false;             ///< the value was an array
};

/// \brief Reads the TOML subset fluxjac configs use: `key = value` lines with strings, numbers, booleans and
/// arrays of them (arrays may span lines), and # comments. Anything else (an unterminated string, a bare
/// word, a table, a key given twice, text after a value) is an Error(kUsage) "FILE:LINE: what is wrong".
std::vector<ConfigEntry> read_config_file(const std::string& path);

/// \brief Adds `--config FILE.toml` to a subcommand. CLI11 reads config files only for the top-level app
/// (CLIUtils/CLI11#1056), so apply_config_file() applies it after parsing (read_command_intent, before the
/// subcommand runs).
void add_config_option(CLI::App& subcommand);

/// \brief Applies the subcommand's --config file (if given) to every option the command line left unset.
/// Keys are the subcommand's long option names; a flag's key takes true or false and means what its name
/// says (`no-validate = true` turns validation off). An unknown key, a list for a one-value option, or a
/// missing file is a usage error naming the file and line.
void apply_config_file(CLI::App& subcommand);

/// \brief CLI11's "Could not convert: --reps = three" as "--reps three: not a whole number", naming
/// what the option (of app or of one of its subcommands) takes; any other message unchanged.
std::string plain_conversion_message(const CLI::App& app, const std::string& message);

/// \brief The subcommand's --config file, or "" when none was given (an input the outputs must not overwrite).
std::string config_file_path(const CLI::App& subcommand);

}  // namespace fluxjac
