// fluxjac — the subcommands; each adds itself to the CLI11 app and runs when selected.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fluxjac {

/// The action of a parsed subcommand; returns the process exit code.
using CommandAction = std::function<int()>;
/// What a subcommand does when it is selected, given the parsed subcommand (e.g. for the --config file it read).
using CommandRun = std::function<int(const CLI::App& command)>;

/// The help of a subcommand.
struct CommandHelp {
  std::string name;
  std::string description;  ///< up to its first ". " or ": ", the summary in the parent's list of subcommands
  std::string footer{};     ///< after the options (examples); empty for none
};

/// \brief Adds the subcommand `help.name` to `parent`, with its help; when it is selected, `action` becomes `run`
/// applied to it. A group of subcommands (`mesh`) passes no `run`: its subcommands set the action. Returns the
/// subcommand, for its options.
CLI::App* add_command(CLI::App& parent, const CommandHelp& help, CommandAction& action, CommandRun run);

/// \brief Each adds a subcommand to `app` and sets `action` when that subcommand is selected.
void add_run_command(CLI::App& app, CommandAction& action);
void add_list_command(CLI::App& app, CommandAction& action);
void add_info_command(CLI::App& app, CommandAction& action);
void add_mesh_command(CLI::App& app, CommandAction& action);
void add_device_command(CLI::App& app, CommandAction& action);
void add_bench_command(CLI::App& app, CommandAction& action);
void add_compare_command(CLI::App& app, CommandAction& action);
void add_solve_command(CLI::App& app, CommandAction& action);

/// \brief The option names of a command as typed ("--reps", "-q"), for "did you mean" (cli.cpp).
std::vector<std::string> option_names(const CLI::App& command);

/// \brief Adds `partition` to the `mesh` subcommand (cmd_mesh_partition.cpp).
void add_mesh_partition_command(CLI::App& mesh, CommandAction& action);

}  // namespace fluxjac
