#include "cli/cli.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "cli/command_intent.hpp"
#include "cli/commands.hpp"
#include "parallel/communicator.hpp"
#include "parallel/ghost_exchange.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

std::atomic<bool> g_command_running{false};

int report(const char* message, ExitCode code);

/// libgomp ends the process with exit(1) when it cannot start its threads ("libgomp: Thread creation failed"),
/// and 1 means "validation failed" here. An exit() while a command runs comes from such a library: report it as
/// the run-time failure it is, and remove the temporaries the skipped destructors would have removed.
void exit_during_command() {
  if (!g_command_running.load()) return;
  remove_live_temporaries();
  std::fflush(stdout);
  report("a library ended the run (see its message above: out of threads or memory?)", ExitCode::kRuntime);
  std::fflush(stderr);
  std::_Exit(static_cast<int>(ExitCode::kRuntime));
}

int report(const char* message, ExitCode code) {
  const Communicator& world = Communicator::world();
  if (world.distributed())
    std::fprintf(stderr, "fluxjac: error (rank %d of %d): %s\n", world.rank(), world.size(), message);
  else
    std::fprintf(stderr, "fluxjac: error: %s\n", message);
  return static_cast<int>(code);
}

/// The exit code of the error every rank reports when the ranks' commands differ (cli/command_intent.hpp), or
/// nullopt when they agree; under mpirun this is the job's first collective, before anything reads or writes.
std::optional<int> refused_by_ranks(const RankIntent& intent) {
  try {
    agree_on_intent(Communicator::world(), intent);
    return std::nullopt;
  } catch (const std::exception& e) {
    const Error error = as_error(e);
    return report(error.what(), error.code());
  }
}

/// Runs the selected command, turning every exception into one line and an exit code.
int run_action(const CommandAction& action) {
  static const bool guard_registered = std::atexit(exit_during_command) == 0;
  g_command_running = guard_registered;
  struct Finished {
    ~Finished() { g_command_running = false; }
  } finished;
  try {
    const Communicator& world = Communicator::world();
    if (world.distributed()) select_gpu(world);  // before anything touches CUDA: rank r on GPU r mod GPUs per node
    return action ? action() : 0;
  } catch (const std::exception& e) {
    const Error error = as_error(e);
    return report(error.what(), error.code());
  }
}

}  // namespace

namespace {

/// CLI11 shows a negatable flag as "--validate,--no-validate{false}", which reads as "off by default"; the
/// option's help text says its default instead.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, positional);
    for (std::size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
      const std::size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
};

/// "fluxjac run" for a parse error in `run`'s options: the command whose --help tells how to fix it.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* current = &app; !current->get_subcommands().empty();) {
    current = current->get_subcommands().front();
    path += " " + current->get_name();
  }
  return path;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{
      "fluxjac: assembles the Jacobian of the 3D Roe flux on unstructured edge meshes with\n"
      "forward-mode AD variants (CPU reference and CUDA), times it and validates it.",
      "fluxjac"};
  app.set_version_flag("--version", fmt::format("fluxjac {} ({})", kVersion, kGitRevision));
  app.require_subcommand(1);
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which copy it

  CommandAction action;
  add_run_command(app, action);
  add_list_command(app, action);
  add_info_command(app, action);
  add_mesh_command(app, action);
  add_device_command(app, action);
  add_bench_command(app, action);
  add_compare_command(app, action);
  // After the subcommands: each copies its parent's footer when it is created, and these examples are the
  // top level's.
  app.footer(
      "Examples:\n"
      "  fluxjac mesh gen --kind mixed --n 20 --order rcm -o box.h5\n"
      "  fluxjac run --mesh box.h5 --variant all --csv runs.csv\n"
      "  fluxjac run --config configs/default.toml\n"
      "  fluxjac bench --config configs/paper.toml --json paper.json\n"
      "  fluxjac compare base.json paper.json --time-tolerance 0.1\n"
      "Exit codes: 0 ok, 1 validation failed (compare: a regression), 2 invalid input, 3 usage, 4 run-time error\n"
      "(CUDA, I/O such as a full disk, out of memory or threads).");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {  // every rank asks for the same help, or none prints it
    if (const std::optional<int> refused = refused_by_ranks(request_intent(app, "--help"))) return *refused;
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    if (const std::optional<int> refused = refused_by_ranks(request_intent(app, "--help-all"))) return *refused;
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    if (const std::optional<int> refused = refused_by_ranks(request_intent(app, "--version"))) return *refused;
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line like every other error, naming the help that explains the options.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    RankIntent failed;
    failed.failure = fmt::format("{} (see '{} --help')", message, command_path(app));
    return refused_by_ranks(failed).value_or(static_cast<int>(ExitCode::kUsage));
  }
  // The config file applied; under mpirun, every rank's command, options and files alike before anything else.
  const Communicator& world = Communicator::world();
  if (const std::optional<int> refused = refused_by_ranks(read_command_intent(app, world.distributed())))
    return *refused;
  // Only run and bench share work between ranks; any other command would be done P times, over the same files.
  const std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
  if (world.distributed() && command != "run" && command != "bench")
    return report(fmt::format("'fluxjac {}' runs as one process: start it without mpirun (only 'run' and 'bench' "
                              "use {} ranks)",
                              command, world.size())
                      .c_str(),
                  ExitCode::kUsage);
  return run_action(action);
}

}  // namespace fluxjac
