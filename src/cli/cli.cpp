#include "cli/cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/command_intent.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/output_names.hpp"
#include "part/ghost_exchange.hpp"
#include "ranks/communicator.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/error_line.hpp"
#include "util/nearest_name.hpp"
#include "util/text.hpp"
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
  print_error_line(message, world.rank(), world.size());
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

/// What a command printed on standard output and could not write (a full device, a stream closed with `>&-`) is
/// lost: a run-time error, like a failed write of `--json -`, never exit 0.
void check_standard_output() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed || std::ferror(stdout))
    fail(ExitCode::kRuntime, "standard output: writing failed: {}",
         flushed || errno == 0 ? "some of what the command printed was lost" : std::strerror(errno));
}

/// \brief Under mpirun, rank 0's standard output is a pipe to mpirun, which copies it to its own standard output and
/// says nothing when that write fails: the table and `--json -` would be lost and the job would exit 0. So before any
/// work, rank 0, when mpirun started it (Open MPI launches the ranks of its own node as its children) and its standard
/// output is relayed (a pipe, socket or terminal, not a file it was given), looks at mpirun's: closed (no descriptor
/// 1, or one mpirun opened for reading after it started without one) or /dev/full is a run-time error, which the
/// caller's guard makes every rank's. What this cannot see, mpirun still drops without a word: a disk that fills
/// while the job runs, and a rank 0 that mpirun did not start itself (an orted on another node, srun, Hydra's proxy).
/// Results written to files (-o, --json FILE, --csv FILE) are checked to the end in any case.
void check_relayed_standard_output() {
  const Communicator& world = Communicator::world();
  if (!world.is_root()) return;  // also `mpirun -np 1`: one rank, still behind mpirun
  struct stat own {};
  if (::fstat(STDOUT_FILENO, &own) != 0 || !(S_ISFIFO(own.st_mode) || S_ISSOCK(own.st_mode) || ::isatty(STDOUT_FILENO)))
    return;
  const std::string relay = fmt::format("/proc/{}", ::getppid());
  std::string name;
  std::getline(std::ifstream(relay + "/comm"), name);
  if (name != "mpirun" && name != "mpiexec" && name != "orterun" && name != "prterun") return;
  struct stat target {};
  bool closed = false, full = false;
  if (::stat((relay + "/fd/1").c_str(), &target) != 0) {
    closed = errno == ENOENT;  // anything else (no permission to look): nothing known
  } else {
    std::ifstream fdinfo(relay + "/fdinfo/1");
    std::string field;
    unsigned long flags = 0;
    while (fdinfo >> field && field != "flags:") continue;
    closed = fdinfo >> std::oct >> flags && (flags & O_ACCMODE) == O_RDONLY;
    full = S_ISCHR(target.st_mode) && target.st_rdev == makedev(1, 7);
  }
  if (closed || full)
    fail(ExitCode::kRuntime,
         "standard output: {}'s standard output is {}: what this job prints there would be lost while {} still exits "
         "0 (it drops what it cannot write); give {} a standard output it can write (a file, or /dev/null to discard "
         "it)",
         name, closed ? "closed" : "/dev/full", name, name);
}

/// Runs the selected command, turning every exception into one line and an exit code.
/// gpu: the command may run on the GPU (run, bench, solve): under mpirun each rank then takes its GPU first. The
/// others never create a CUDA context (part of a GPU node's start-up: docs/performance.md, "Partitioning").
int run_action(const CommandAction& action, bool gpu) {
  static const bool guard_registered = std::atexit(exit_during_command) == 0;
  g_command_running = guard_registered;
  struct Finished {
    ~Finished() { g_command_running = false; }
  } finished;
  try {
    const Communicator& world = Communicator::world();
    // Before any work, and before a GPU is taken: results that would be lost are refused on every rank.
    world.agree(check_relayed_standard_output);
    if (gpu && world.distributed()) select_gpu(world);  // before anything touches CUDA: rank r on GPU r mod GPUs
    int code = 0;
    // The command's guard: a rank that fails meets the others here or in their next collective, and every rank then
    // reports the same error (ranks/communicator.hpp).
    world.agree([&] {
      code = action ? action() : 0;
      check_standard_output();
    });
    return code;
  } catch (const std::exception& e) {
    const Error error = as_error(e);
    return report(error.what(), error.code());
  }
}

}  // namespace

namespace {

/// Help texts fit this many columns; option descriptions start at kHelpColumn.
constexpr std::size_t kHelpWidth = 100;
constexpr std::size_t kHelpColumn = 30;

/// `text` with every line longer than `width` broken at spaces; lines that start with a space (examples, lists)
/// are kept whole.
std::string wrap(const std::string& text, std::size_t width) {
  std::string wrapped;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.size() <= width || line.front() == ' ') {
      wrapped += line;
    } else {
      std::size_t column = 0;
      for (std::size_t word = 0; word < line.size();) {
        const std::size_t word_end = std::min(line.find(' ', word), line.size());
        const std::size_t length = word_end - word;
        if (column > 0 && column + 1 + length > width) {
          wrapped += '\n';
          column = 0;
        } else if (column > 0) {
          wrapped += ' ';
          ++column;
        }
        wrapped.append(line, word, length);
        column += length;
        word = word_end + 1;
      }
    }
    if (end < text.size()) wrapped += '\n';
    start = end + 1;
  }
  return wrapped;
}

/// A description's summary, up to its first ". " or ": ": what a command's list of subcommands shows.
std::string summary(const std::string& text) {
  for (std::size_t stop = text.find_first_of(".:"); stop != std::string::npos;
       stop = text.find_first_of(".:", stop + 1))
    if (stop + 1 < text.size() && text[stop + 1] == ' ' &&
        (stop < 3 || (text.compare(stop - 3, 3, "e.g") != 0 && text.compare(stop - 3, 3, "i.e") != 0)))
      return text.substr(0, stop);
  return text;
}

/// Help that reads at kHelpWidth columns: descriptions, footers and option texts wrapped; a subcommand's summary
/// in its parent's list. CLI11 also shows a negatable flag as "--validate,--no-validate{false}", which
/// reads as "off by default"; the option's help text says its default instead.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(kHelpColumn); }

  std::string make_description(const CLI::App* app) const override {
    const std::string description = CLI::Formatter::make_description(app);
    return description.empty() ? description : wrap(description, kHelpWidth) + "\n";
  }
  std::string make_footer(const CLI::App* app) const override {
    return wrap(CLI::Formatter::make_footer(app), kHelpWidth);
  }
  std::string make_option_desc(const CLI::Option* option) const override {
    return wrap(CLI::Formatter::make_option_desc(option), kHelpWidth - kHelpColumn);
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    const std::string name = "  " + sub->get_name();
    std::string text = name.size() < kHelpColumn ? name + std::string(kHelpColumn - name.size(), ' ')
                                                 : name + "\n" + std::string(kHelpColumn, ' ');
    for (const char c : wrap(summary(sub->get_description()), kHelpWidth - kHelpColumn))
      text += c == '\n' ? "\n" + std::string(kHelpColumn, ' ') : std::string(1, c);
    return text + "\n";
  }

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

/// A command-line error in words: what is wrong and the command whose --help tells how to fix it.
struct UsageProblem {
  std::string message;  ///< empty where the parser's own message is the better one
  std::string command;  ///< "fluxjac run"
};

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  return names;
}

/// "a, b or c"
std::string or_list(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

/// A word that names an option ("--reps", "-q", "--reps=3"), not a value such as "-1" or "-".
bool is_option_word(const std::string& word) {
  return word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.';
}

/// Reads the command line as the parser does, as far as the first word that no command knows: an unknown
/// subcommand or option, named with the nearest valid one, or a missing subcommand. CLI11's messages for these
/// ("A subcommand is required", "The following arguments were not expected") do not say which word is wrong.
UsageProblem diagnose(const CLI::App& app, const std::vector<std::string>& words) {
  const CLI::App* command = &app;
  UsageProblem problem{"", app.get_name()};
  std::string last_option;  // the last option given, and the words it may still take as its values
  std::size_t values = 0;
  int most_values = 0;
  for (const std::string& word : words) {
    if (word == "--") break;
    if (is_option_word(word)) {
      // --name=value, -qvalue: the option is the part before the value
      const std::string name = word.substr(0, word[1] == '-' ? word.find('=') : 2);
      const CLI::Option* option = command->get_option_no_throw(name);
      if (!option) {
        problem.message = fmt::format("unknown option '{}'{}", name, did_you_mean(name, option_names(*command)));
        return problem;
      }
      most_values = std::max(0, option->get_items_expected_max());
      values = name.size() == word.size() ? static_cast<std::size_t>(most_values) : 0;
      last_option = name;
      continue;
    }
    if (values > 0) {
      --values;
      continue;
    }
    const auto subcommands = subcommand_names(*command);
    const auto sub = std::find(subcommands.begin(), subcommands.end(), word);
    if (sub != subcommands.end()) {
      command = command->get_subcommand(word);
      problem.command += " " + word;
      continue;
    }
    if (!command->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty()) continue;
    if (!subcommands.empty())
      problem.message = fmt::format("unknown subcommand '{}'{}", word, did_you_mean(word, subcommands));
    else if (!last_option.empty())
      problem.message =
          fmt::format("unexpected '{}': {} takes {}", word, last_option, most_values == 0 ? "no value" : "one value");
    else
      problem.message = fmt::format("unexpected '{}': '{}' takes options only", word, problem.command);
    return problem;
  }
  if (command->get_require_subcommand_min() > 0)  // and the words name none
    problem.message = fmt::format("'{}' needs a subcommand: {}", problem.command, or_list(subcommand_names(*command)));
  return problem;
}

}  // namespace

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

CLI::App* add_command(CLI::App& parent, const CommandHelp& help, CommandAction& action, CommandRun run) {
  CLI::App* command = parent.add_subcommand(help.name, help.description);
  if (!help.footer.empty()) command->footer(help.footer);
  if (run)
    command->callback([&action, command, run = std::move(run)] { action = [command, run] { return run(*command); }; });
  return command;
}

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
  add_solve_command(app, action);
  add_output_rules(app);
  // After the subcommands: each copies its parent's footer when it is created, and these examples are the
  // top level's.
  app.footer(
      "Examples:\n"
      "  fluxjac mesh gen --kind mixed --n 20 --order rcm -o box.h5\n"
      "  fluxjac run --mesh box.h5 --variant all --csv runs.csv\n"
      "  fluxjac run --config configs/default.toml\n"
      "  fluxjac bench --config configs/paper.toml --json paper.json\n"
      "  fluxjac compare base.json paper.json --time-tolerance 0.1\n"
      "Exit codes: 0 ok, 1 validation failed (compare: a regression), 2 invalid input, 3 usage (also: a sweep in "
      "which no case can run here, e.g. GPU variants without a CUDA device), 4 run-time error (CUDA, I/O such as a "
      "full disk, out of memory or threads).");

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
    UsageProblem problem = diagnose(app, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
    if (problem.message.empty()) problem.message = plain_conversion_message(app, e.what());
    std::replace(problem.message.begin(), problem.message.end(), '\n', ' ');
    RankIntent failed;
    failed.failure = fmt::format("{} (see '{} --help')", problem.message, problem.command);
    return refused_by_ranks(failed).value_or(static_cast<int>(ExitCode::kUsage));
  }
  // The config file applied; under mpirun, every rank's command, options and files alike before anything else.
  const Communicator& world = Communicator::world();
  if (const std::optional<int> refused = refused_by_ranks(read_command_intent(app, world.distributed())))
    return *refused;
  // Only run, bench, solve, mesh gen and mesh partition share work between ranks; any other command would be done P
  // times, over the same files.
  std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
  if (command == "mesh" && !app.get_subcommands().front()->get_subcommands().empty())
    command += " " + app.get_subcommands().front()->get_subcommands().front()->get_name();
  if (world.distributed() && command != "run" && command != "bench" && command != "solve" && command != "mesh gen" &&
      command != "mesh partition")
    return report(fmt::format("'fluxjac {}' runs as one process: start it without mpirun (only 'run', 'bench', "
                              "'solve', 'mesh gen' and 'mesh partition' use {} ranks)",
                              command, world.size())
                      .c_str(),
                  ExitCode::kUsage);
  return run_action(action, command == "run" || command == "bench" || command == "solve");
}

}  // namespace fluxjac
