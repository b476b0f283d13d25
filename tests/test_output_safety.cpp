// ctest-label: cli
// Output safety, as the user sees it: nothing the user gave is ever overwritten (an output onto an input, onto another
// output, onto a directory, FIFO or device is refused before any work), no output file appears unless complete (a full
// disk, a signal), results printed where they would be lost fail the command (under mpirun, before any work), HDF5
// input is read only from the file given and only at the size it really stores, and running out of memory or threads
// ends with exit code 4 and one clear line. Each test runs the real `fluxjac` in a child process (fork and exec) so
// that it can set resource limits (a file-size limit stands in for a full disk, a data limit for a small machine), send
// signals, and read stdout and stderr apart.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "jacobian/jacobian_io.hpp"
#include "test_support.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/output_paths.hpp"

extern char** environ;

namespace fluxjac {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// ---- running fluxjac in a child process ------------------------------------------------------------------------

struct Launch {
  std::vector<std::string> args;
  std::optional<rlim_t> file_size_limit;  ///< RLIMIT_FSIZE, bytes: a disk that is full after this many bytes
  std::optional<rlim_t> data_limit;       ///< RLIMIT_DATA, bytes: a machine with little memory
  std::vector<std::string> environment;   ///< extra NAME=value entries
  std::string stdout_file;                ///< send stdout there (e.g. /dev/full) instead of capturing it; "-": closed
};

struct Outcome {
  int exit_code = -1;  ///< -1 when a signal ended the process
  int signal = 0;      ///< the signal that ended it, else 0
  std::string out, err;
  long max_rss_kb = 0;  ///< the child's peak resident memory
};

/// \brief Forks and execs fluxjac with the launch's limits and environment, stdout to out_fd (or the launch's
/// stdout_file) and stderr to err_fd, started by `launcher` where given (e.g. mpirun -np 2). Everything the child
/// needs is built before fork.
pid_t start(const Launch& launch, int out_fd, int err_fd, const std::vector<std::string>& launcher = {}) {
  std::vector<std::string> argument_text = launcher;
  argument_text.push_back(FLUXJAC_EXECUTABLE);
  argument_text.insert(argument_text.end(), launch.args.begin(), launch.args.end());
  std::vector<char*> arguments;
  for (std::string& text : argument_text) arguments.push_back(text.data());
  arguments.push_back(nullptr);
  std::vector<std::string> environment_text;
  for (char** entry = environ; *entry; ++entry) environment_text.emplace_back(*entry);
  environment_text.insert(environment_text.end(), launch.environment.begin(), launch.environment.end());
  std::vector<char*> environment;
  for (std::string& text : environment_text) environment.push_back(text.data());
  environment.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: the signals the tests send act as they do for a user's shell, whatever the test runner set.
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) ::signal(signal_number, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (launch.file_size_limit) {
    const struct rlimit limit { *launch.file_size_limit, *launch.file_size_limit };
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  if (launch.data_limit) {
    const struct rlimit limit { *launch.data_limit, *launch.data_limit };
    ::setrlimit(RLIMIT_DATA, &limit);
  }
  const int stdout_target = launch.stdout_file.empty() ? out_fd : ::open(launch.stdout_file.c_str(), O_WRONLY);
  ::dup2(stdout_target, STDOUT_FILENO);
  if (launch.stdout_file == "-") ::close(STDOUT_FILENO);  // as the shell's `>&-`
  ::dup2(err_fd, STDERR_FILENO);
  ::execve(arguments[0], arguments.data(), environment.data());
  ::_exit(127);
}

/// \brief Runs fluxjac to the end, capturing stdout and stderr (read together, so neither pipe fills up), started by
/// `launcher` where given (as start). When given, on_stderr sees the stderr text received so far after every read,
/// while the process runs, until it returns true.
Outcome run(const Launch& launch, const std::function<bool(const std::string& err)>& on_stderr = {},
            const std::vector<std::string>& launcher = {}) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return {};
  }
  const pid_t pid = start(launch, out_pipe[1], err_pipe[1], launcher);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Outcome outcome;
  struct pollfd streams[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* texts[2] = {&outcome.out, &outcome.err};
  int open_streams = 2;
  std::function<bool(const std::string&)> watching = on_stderr;
  while (open_streams > 0 && ::poll(streams, 2, -1) >= 0) {
    for (int i = 0; i < 2; ++i) {
      if (streams[i].fd < 0 || streams[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(streams[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        texts[i]->append(buffer, static_cast<std::size_t>(n));
        if (i == 1 && watching && watching(outcome.err)) watching = nullptr;
        continue;
      }
      ::close(streams[i].fd);
      streams[i].fd = -1;
      --open_streams;
    }
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  outcome.max_rss_kb = usage.ru_maxrss;
  return outcome;
}

Outcome fluxjac(std::vector<std::string> args) { return run(Launch{std::move(args), {}, {}, {}, {}}); }

/// The arguments of a quick reference run (timings are not the point here).
std::vector<std::string> quick_run(std::vector<std::string> more) {
  std::vector<std::string> args{"run", "-q", "--warmup", "0", "--reps", "1"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

/// \brief Expects the exit code, no signal, and exactly one stderr line "fluxjac: error: ..." holding every fragment.
void expect_error_line(const Outcome& outcome, int exit_code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(outcome.signal, 0) << "ended by signal " << outcome.signal << "\n" << outcome.err;
  EXPECT_EQ(outcome.exit_code, exit_code) << outcome.err;
  EXPECT_EQ(outcome.err.rfind("fluxjac: error: ", 0), 0u) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << "not one line:\n" << outcome.err;
  for (const std::string& fragment : fragments)
    EXPECT_TRUE(contains(outcome.err, fragment)) << "\"" << fragment << "\" missing in: " << outcome.err;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The names in a folder (not recursive).
std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// \brief Expects no temporary ("*.tmp-*") anywhere under folder.
void expect_no_temporary(const fs::path& folder) {
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    EXPECT_FALSE(contains(entry.path().filename().string(), ".tmp-")) << "left behind: " << entry.path();
}

/// \brief A mixed n = 3 mesh (64 nodes, 246 edges) with its state, made once per test process.
const std::string& small_mesh() {
  static const TempDir folder;
  static const std::string path = [] {
    const std::string mesh = folder.file("mixed-3.h5");
    const Outcome made = fluxjac({"mesh", "gen", "-q", "--kind", "mixed", "--n", "3", "-o", mesh});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    return mesh;
  }();
  return path;
}

/// \brief A copy of the small mesh in folder.
std::string copy_of_mesh(const TempDir& folder, const std::string& name = "m.h5") {
  const std::string copy = folder.file(name);
  fs::copy_file(small_mesh(), copy);
  return copy;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// ---- an output onto an input or onto another output: exit 3 before any work, the input byte for byte intact ----

/// What a same-file case runs, and the file that must come through unchanged (empty: none may appear at `absent`).
struct SameFileSetup {
  std::vector<std::string> args;
  std::string kept;    ///< an input that must keep its bytes
  std::string absent;  ///< an output path where no file may appear
};

struct SameFileCase {
  std::string name;
  std::function<SameFileSetup(const TempDir& folder)> prepare;
  std::vector<std::string> fragments;  ///< both options and the file
};

void PrintTo(const SameFileCase& same, std::ostream* out) { *out << same.name; }

std::vector<SameFileCase> same_file_cases() {
  return {
      {"run_output_onto_mesh",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         return SameFileSetup{quick_run({"--mesh", mesh, "--output", mesh}), mesh, ""};
       },
       {"--output", "--mesh", "m.h5", "same file"}},
      {"run_json_onto_mesh",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         return SameFileSetup{quick_run({"--mesh", mesh, "--json", mesh}), mesh, ""};
       },
       {"--json", "--mesh", "m.h5"}},
      {"run_csv_onto_mesh",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         return SameFileSetup{quick_run({"--mesh", mesh, "--csv", mesh}), mesh, ""};
       },
       {"--csv", "--mesh", "m.h5"}},
      {"run_output_onto_state",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder), state = copy_of_mesh(folder, "s.h5");
         return SameFileSetup{quick_run({"--mesh", mesh, "--state", state, "--output", state}), state, ""};
       },
       {"--output", "--state", "s.h5"}},
      {"run_output_onto_reference",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder), reference = folder.file("r.h5");
         const Outcome stored = fluxjac(quick_run({"--mesh", mesh, "--output", reference}));
         EXPECT_EQ(stored.exit_code, 0) << stored.err;
         return SameFileSetup{quick_run({"--mesh", mesh, "--reference", reference, "--output", reference}), reference,
                              ""};
       },
       {"--output", "--reference", "r.h5"}},
      {"run_output_through_parent_folder",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         fs::create_directory(folder.path() / "sub");
         return SameFileSetup{quick_run({"--mesh", mesh, "--output", folder.file("sub/../m.h5")}), mesh, ""};
       },
       {"--output", "sub/../m.h5", "--mesh"}},
      {"run_output_through_symbolic_link",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         fs::create_symlink("m.h5", folder.path() / "link.h5");
         return SameFileSetup{quick_run({"--mesh", mesh, "--output", folder.file("link.h5")}), mesh, ""};
       },
       {"--output", "link.h5", "--mesh", "m.h5"}},
      {"run_output_through_hard_link",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         fs::create_hard_link(mesh, folder.path() / "hard.h5");
         return SameFileSetup{quick_run({"--mesh", mesh, "--output", folder.file("hard.h5")}), mesh, ""};
       },
       {"--output", "hard.h5", "--mesh"}},
      {"config_output_onto_mesh",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder), config = folder.file("run.toml");
         write_text(config, fmt::format("mesh = \"{}\"\noutput = \"{}\"\nreps = 1\nwarmup = 0\n", mesh, mesh));
         return SameFileSetup{{"run", "-q", "--config", config}, mesh, ""};
       },
       {"--output", "--mesh", "m.h5"}},
      {"config_json_onto_the_config",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder), config = folder.file("run.toml");
         write_text(config, fmt::format("mesh = \"{}\"\njson = \"{}\"\nreps = 1\nwarmup = 0\n", mesh, config));
         return SameFileSetup{{"run", "-q", "--config", config}, config, ""};
       },
       {"--json", "--config", "run.toml"}},
      {"csv_and_json_onto_one_new_file",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         fs::create_directory(folder.path() / "sub");
         return SameFileSetup{
             quick_run({"--mesh", mesh, "--csv", folder.file("x.txt"), "--json", folder.file("sub/../x.txt")}), "",
             folder.file("x.txt")};
       },
       {"--csv", "--json", "x.txt", "same file"}},
      {"mesh_dual_output_onto_input",
       [](const TempDir& folder) {
         const std::string input = copy_of_mesh(folder, "e.h5");
         return SameFileSetup{{"mesh", "dual", "-q", input, "-o", input}, input, ""};
       },
       {"--output", "the input", "e.h5"}},
      {"bench_json_onto_mesh",
       [](const TempDir& folder) {
         const std::string mesh = copy_of_mesh(folder);
         return SameFileSetup{
             {"bench", "-q", "--mesh", mesh, "--reps", "1", "--warmup", "0", "--json", mesh}, mesh, ""};
       },
       {"--json", "--mesh", "m.h5"}},
  };
}

class SameFile : public ::testing::TestWithParam<SameFileCase> {};

TEST_P(SameFile, IsRefusedWithExitThreeAndTheInputKeepsEveryByte) {
  const TempDir folder;
  const SameFileSetup setup = GetParam().prepare(folder);
  const std::string before = setup.kept.empty() ? std::string() : bytes_of(setup.kept);
  const Outcome outcome = fluxjac(setup.args);
  expect_error_line(outcome, 3, GetParam().fragments);
  if (!setup.kept.empty()) {
    EXPECT_FALSE(before.empty());
    EXPECT_TRUE(bytes_of(setup.kept) == before) << setup.kept << " changed";
  }
  if (!setup.absent.empty()) {
    EXPECT_FALSE(fs::exists(setup.absent)) << setup.absent;
  }
  expect_no_temporary(folder.path());
}

INSTANTIATE_TEST_SUITE_P(OutputSafety, SameFile, ::testing::ValuesIn(same_file_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- an output that exists and is not a regular file: exit 3, the node stays what it was ---------------------

struct NotRegularCase {
  std::string name;
  std::function<std::vector<std::string>(const TempDir& folder, const std::string& mesh)> prepare;
  std::vector<std::string> fragments;
};

void PrintTo(const NotRegularCase& bad, std::ostream* out) { *out << bad.name; }

std::vector<NotRegularCase> not_regular_cases() {
  const auto fifo = [](const TempDir& folder) {
    const std::string path = folder.file("fifo");
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  };
  return {
      {"json_onto_directory",
       [](const TempDir& folder, const std::string& mesh) {
         fs::create_directory(folder.path() / "d");
         return quick_run({"--mesh", mesh, "--json", folder.file("d")});
       },
       {"--json", "a directory", "'-'"}},
      {"csv_onto_fifo",
       [fifo](const TempDir& folder, const std::string& mesh) {
         return quick_run({"--mesh", mesh, "--csv", fifo(folder)});
       },
       {"--csv", "FIFO"}},
      {"output_through_link_to_fifo",
       [fifo](const TempDir& folder, const std::string& mesh) {
         fs::create_symlink(fifo(folder), folder.path() / "link");
         return quick_run({"--mesh", mesh, "--output", folder.file("link")});
       },
       {"--output", "FIFO"}},
      {"mesh_gen_onto_directory",
       [](const TempDir& folder, const std::string&) {
         fs::create_directory(folder.path() / "d");
         return std::vector<std::string>{"mesh", "gen", "-q", "--n", "2", "-o", folder.file("d")};
       },
       {"--output", "a directory"}},
      {"hdf5_output_to_standard_output",
       [](const TempDir&, const std::string& mesh) {
         return quick_run({"--mesh", mesh, "--output", "-"});
       },
       {"--output -", "standard output"}},
      {"csv_and_json_both_to_standard_output",
       [](const TempDir&, const std::string& mesh) {
         return quick_run({"--mesh", mesh, "--csv", "-", "--json", "-"});
       },
       {"--csv", "--json", "standard output"}},
      {"output_in_missing_folder",
       [](const TempDir& folder, const std::string& mesh) {
         return quick_run({"--mesh", mesh, "--output", folder.file("absent/J.h5")});
       },
       {"--output", "does not exist"}},
  };
}

class NotRegular : public ::testing::TestWithParam<NotRegularCase> {};

TEST_P(NotRegular, IsRefusedWithExitThreeAndNothingIsReplaced) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  const std::vector<std::string> args = GetParam().prepare(folder, mesh);
  std::vector<std::pair<std::string, fs::file_type>> before;
  for (const auto& entry : fs::directory_iterator(folder.path()))
    before.emplace_back(entry.path().filename().string(), fs::symlink_status(entry.path()).type());
  const Outcome outcome = fluxjac(args);
  expect_error_line(outcome, 3, GetParam().fragments);
  std::vector<std::pair<std::string, fs::file_type>> after;
  for (const auto& entry : fs::directory_iterator(folder.path()))
    after.emplace_back(entry.path().filename().string(), fs::symlink_status(entry.path()).type());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_TRUE(before == after) << "the folder changed";
  EXPECT_FALSE(fs::exists(folder.path() / "-"));
}

INSTANTIATE_TEST_SUITE_P(OutputSafety, NotRegular, ::testing::ValuesIn(not_regular_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- symbolic links and standard output ------------------------------------------------------------------------

TEST(OutputSafetyLinks, WritingThroughALinkKeepsTheLinkAndReplacesItsTarget) {
  const TempDir folder;
  fs::create_directory(folder.path() / "links");
  fs::create_directory(folder.path() / "results");
  write_text(folder.file("results/runs.json"), "old");
  fs::create_symlink("../results/runs.json", folder.path() / "links/runs.json");
  fs::create_symlink("../results/new.csv", folder.path() / "links/new.csv");  // dangling: the target is created
  const Outcome outcome = fluxjac(quick_run({"--mesh", small_mesh(), "--force", "--json",
                                             folder.file("links/runs.json"), "--csv", folder.file("links/new.csv")}));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_TRUE(fs::is_symlink(folder.path() / "links/runs.json"));
  EXPECT_EQ(fs::read_symlink(folder.path() / "links/runs.json"), "../results/runs.json");
  EXPECT_TRUE(fs::is_symlink(folder.path() / "links/new.csv"));
  EXPECT_TRUE(contains(bytes_of(folder.file("results/runs.json")), "\"runs\""));
  EXPECT_TRUE(contains(bytes_of(folder.file("results/new.csv")), "variant"));
  EXPECT_EQ(names_in(folder.path() / "results"), (std::vector<std::string>{"new.csv", "runs.json"}));
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyStandardOutput, JsonDashPrintsTheDocumentAloneOnStdout) {
  const Outcome outcome = run(Launch{quick_run({"--mesh", small_mesh(), "--json", "-"}), {}, {}, {}, {}});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const std::size_t first = outcome.out.find_first_not_of(" \n");
  const std::size_t last = outcome.out.find_last_not_of(" \n");
  ASSERT_NE(first, std::string::npos) << "nothing on stdout";
  EXPECT_EQ(outcome.out[first], '{') << outcome.out;
  EXPECT_EQ(outcome.out[last], '}') << outcome.out;
  EXPECT_TRUE(contains(outcome.out, "\"schema\": \"fluxjac-bench\"")) << outcome.out;
  EXPECT_TRUE(contains(outcome.err, "median ms")) << "the table belongs on stderr:\n" << outcome.err;
  EXPECT_FALSE(contains(outcome.out, "median ms"));
  EXPECT_FALSE(fs::exists("-")) << "a file named '-' was written";
}

// ---- a full disk (a file-size limit): exit 4, one line, no file, no temporary, an old file intact ------------

TEST(OutputSafetyFullDisk, JacobianOutputFailsCleanlyAndKeepsTheOldFile) {
  const TempDir folder;
  write_text(folder.file("J.h5"), "old contents");
  Launch launch{quick_run({"--mesh", small_mesh(), "--force", "--output", folder.file("J.h5")}), 4096, {}, {}, {}};
  const Outcome outcome = run(launch);
  expect_error_line(outcome, 4, {"J.h5", "File too large"});
  EXPECT_EQ(bytes_of(folder.file("J.h5")), "old contents");
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"J.h5"});
}

TEST(OutputSafetyFullDisk, CsvThatCannotBeWrittenLeavesNoFile) {
  const TempDir folder;
  const Outcome outcome =
      run(Launch{quick_run({"--mesh", small_mesh(), "--csv", folder.file("runs.csv")}), 0, {}, {}, {}});
  expect_error_line(outcome, 4, {"runs.csv", "writing the file failed"});
  EXPECT_TRUE(names_in(folder.path()).empty());
}

TEST(OutputSafetyFullDisk, MeshGenerationFailsCleanly) {
  const TempDir folder;
  const Outcome outcome =
      run(Launch{{"mesh", "gen", "-q", "--n", "8", "-o", folder.file("box.h5")}, 16384, {}, {}, {}});
  expect_error_line(outcome, 4, {"box.h5", "File too large"});
  EXPECT_FALSE(contains(outcome.err, ".tmp-")) << "the message names the user's file, not the temporary";
  EXPECT_TRUE(names_in(folder.path()).empty());
}

TEST(OutputSafetyFullDisk, StandardOutputOnAFullDeviceIsAnError) {
  const Outcome outcome = run(Launch{quick_run({"--mesh", small_mesh(), "--json", "-"}), {}, {}, {}, "/dev/full"});
  EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
  EXPECT_TRUE(contains(outcome.err, "fluxjac: error: standard output")) << outcome.err;
  EXPECT_TRUE(contains(outcome.err, "No space left on device")) << outcome.err;
}

/// The table of every command that prints one, to a full device or a closed stream: the results are lost, so the
/// command fails (exit 4) and says so, where it used to exit 0.
TEST(OutputSafetyFullDisk, TheTableOnAFullDeviceOrAClosedStandardOutputIsAnError) {
  const TempDir folder;
  for (const std::string target : {"/dev/full", "-"}) {
    for (const std::vector<std::string>& args :
         {quick_run({"--mesh", small_mesh()}),
          quick_run({"--mesh", small_mesh(), "-o", folder.file("J.h5"), "--force"}), std::vector<std::string>{"list"},
          std::vector<std::string>{"info", small_mesh()}}) {
      std::string command = "fluxjac";
      for (const std::string& arg : args) command += " " + arg;
      SCOPED_TRACE(command + (target == "-" ? " >&-" : " > " + target));
      const Outcome outcome = run(Launch{args, {}, {}, {}, target});
      expect_error_line(
          outcome, 4,
          {"standard output: writing failed", target == "-" ? "Bad file descriptor" : "No space left on device"});
    }
  }
  // The Jacobian went where it was asked to, whole: only the table was lost.
  EXPECT_NO_THROW(read_jacobian(folder.file("J.h5")));
}

/// Under mpirun the ranks print into mpirun's pipe, and mpirun drops what it cannot write to its own standard output
/// and exits 0. A job whose mpirun has a closed or full standard output is refused before any work, on every rank
/// (exit 4, one line each, nothing written), where it used to exit 0 with the results lost; with a writable one (a
/// file, /dev/null, a pipe) the job runs as before.
TEST(OutputSafetyFullDisk, UnderMpirunAClosedOrFullStandardOutputOfMpirunIsRefusedBeforeAnyWork) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const std::vector<std::string> two_ranks{test::mpiexec_path(), "-np", "2"};
  for (const std::string target : {"/dev/full", "-"}) {
    for (const std::vector<std::string>& args : {quick_run({"--mesh", small_mesh(), "--json", "-"}),
                                                 quick_run({"--mesh", small_mesh(), "-o", folder.file("J.h5")})}) {
      std::string command = "mpirun -np 2 fluxjac";
      for (const std::string& arg : args) command += " " + arg;
      SCOPED_TRACE(command + (target == "-" ? " >&-" : " > " + target));
      const Outcome outcome = run(Launch{args, {}, {}, test::mpirun_environment(), target}, {}, two_ranks);
      EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
      EXPECT_EQ(test::count_lines(outcome.err, "fluxjac: error (rank"), 2u) << outcome.err;
      EXPECT_EQ(test::count_lines(outcome.err, target == "-" ? "'s standard output is closed: what this job prints"
                                                             : "'s standard output is /dev/full: what this job prints"),
                2u)
          << outcome.err;
      EXPECT_TRUE(names_in(folder.path()).empty())
          << "written before the refusal: " << ::testing::PrintToString(names_in(folder.path()));
    }
  }
  // One rank behind mpirun is refused alike, with the one-process line.
  const Outcome one = run(Launch{quick_run({"--mesh", small_mesh()}), {}, {}, test::mpirun_environment(), "/dev/full"},
                          {}, {test::mpiexec_path(), "-np", "1"});
  EXPECT_EQ(one.exit_code, 4) << one.err;
  EXPECT_EQ(test::count_lines(one.err, "fluxjac: error: standard output: "), 1u) << one.err;
  EXPECT_EQ(test::count_lines(one.err, "'s standard output is /dev/full"), 1u) << one.err;
  // A writable standard output, captured or discarded: the job runs and succeeds.
  const Outcome captured =
      run(Launch{quick_run({"--mesh", small_mesh()}), {}, {}, test::mpirun_environment(), {}}, {}, two_ranks);
  EXPECT_EQ(captured.exit_code, 0) << captured.err;
  EXPECT_TRUE(contains(captured.out, "PASS")) << captured.out;
  const Outcome discarded =
      run(Launch{quick_run({"--mesh", small_mesh()}), {}, {}, test::mpirun_environment(), "/dev/null"}, {}, two_ranks);
  EXPECT_EQ(discarded.exit_code, 0) << discarded.err;
}

// ---- signals during a write: the temporary goes, the process ends by that signal ----------------------------

/// \brief The first name starting with `prefix` created in the folder `watch` watches (inotify, IN_CREATE), waiting
/// up to two minutes; empty when none appeared.
std::string created_name(int watch, const std::string& prefix) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    struct pollfd ready {
      watch, POLLIN, 0
    };
    if (::poll(&ready, 1, 100) <= 0) continue;
    alignas(struct inotify_event) char buffer[4096];
    const ssize_t n = ::read(watch, buffer, sizeof buffer);
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(buffer + at);
      const std::string name = event->len > 0 ? event->name : "";
      if (name.rfind(prefix, 0) == 0) return name;
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
    }
  }
  return {};
}

class InterruptedWrite : public ::testing::TestWithParam<int> {};

TEST_P(InterruptedWrite, LeavesNoTemporaryBehind) {
  const TempDir folder;
  const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, folder.path().c_str(), IN_CREATE), 0);
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  // Big enough that writing takes a while after the temporary appears (about 8 MB).
  const Launch launch{
      {"mesh", "gen", "-q", "--kind", "mixed", "--n", "30", "-o", folder.file("big.h5")}, {}, {}, {}, {}};
  const pid_t pid = start(launch, null_fd, null_fd);
  ::close(null_fd);

  const std::string temporary = created_name(watch, "big.h5.tmp-");
  ::kill(pid, temporary.empty() ? SIGKILL : GetParam());
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(watch);
  ASSERT_FALSE(temporary.empty()) << "no temporary appeared within the time limit";

  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == GetParam())
      << "expected the process to end by signal " << GetParam() << ", status " << status
      << (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? " (the write finished before the signal)" : "");
  EXPECT_TRUE(names_in(folder.path()).empty()) << "left behind: " << ::testing::PrintToString(names_in(folder.path()));
  // Unique beyond the pid: nodes of a cluster writing into one shared folder can share pids.
  EXPECT_TRUE(std::regex_match(temporary, std::regex(fmt::format(R"(big\.h5\.tmp-{}-[0-9a-f]{{16}})", pid))))
      << temporary;
}

INSTANTIATE_TEST_SUITE_P(OutputSafety, InterruptedWrite, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& info) -> std::string {
                           return info.param == SIGTERM ? "SIGTERM" : info.param == SIGINT ? "SIGINT" : "SIGHUP";
                         });

/// \brief The processes whose parent is `parent` (an mpirun's ranks).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const std::size_t close = text.rfind(')');  // "pid (comm) state ppid ..."
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

/// Signals during a file written by every rank in turn (ranks/write_in_turn.hpp), as they reach the ranks: mpirun
/// answers INT, TERM and HUP by sending its ranks SIGCONT, then SIGTERM a second later; a rank may also be signalled
/// on its own. Either way the job ends without replacing the file and without leaving rank 0's temporary, also when
/// the write would end within mpirun's second (docs/design.md, "Errors"). How soon mpirun relays a signal sent to it
/// is its own: a write that ends before mpirun relays anything has nothing to learn it from.
/// Starts `mpirun -np 2 fluxjac run ... -o J.h5 --force` over the user's J.h5, waits for rank 0's temporary, calls
/// signal_it(mpirun, rank 0, rank 1), and checks that J.h5 is the user's and nothing else is left.
void run_and_signal(const std::function<void(pid_t mpirun, pid_t owner, pid_t other)>& signal_it) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const std::string output = folder.file("J.h5");
  std::ofstream(output) << "the user's J.h5";
  const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, folder.path().c_str(), IN_CREATE), 0);
  // A write of about 300 MB: the signals below reach the ranks while they write.
  Launch launch{
      {"run", "-q", "--mesh", "mixed:60:rcm", "--no-validate", "--warmup", "0", "--reps", "1", "-o", output, "--force"},
      {},
      {},
      test::mpirun_environment(),
      {}};
  const int log_fd = ::open(folder.file("log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  const pid_t pid = start(launch, log_fd, log_fd, {test::mpiexec_path(), "-np", "2"});
  ::close(log_fd);
  const std::string temporary = created_name(watch, "J.h5.tmp-");
  ::close(watch);
  pid_t owner = 0, other = 0;
  if (!temporary.empty()) {
    owner = static_cast<pid_t>(std::stol(temporary.substr(std::string("J.h5.tmp-").size())));  // rank 0's pid
    for (const pid_t child : children_of(pid))
      if (child != owner) other = child;
  }
  if (owner > 0 && other > 0)
    signal_it(pid, owner, other);
  else
    ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream log(folder.file("log"));
  const std::string printed(std::istreambuf_iterator<char>(log), {});
  ASSERT_FALSE(temporary.empty()) << "no temporary appeared within the time limit:\n" << printed;
  ASSERT_GT(other, 0) << "the rank besides rank 0 (pid " << owner << ") was not found among mpirun's children";
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mpirun ended with success after the signal";
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a rank that outlives mpirun, a moment
  std::ifstream kept(output);
  const std::string content(std::istreambuf_iterator<char>(kept), {});
  EXPECT_TRUE(content == "the user's J.h5")
      << "the signalled job replaced the file (now " << content.size() << " bytes)";
  std::vector<std::string> names = names_in(folder.path());
  names.erase(std::remove(names.begin(), names.end(), "log"), names.end());
  EXPECT_EQ(names, std::vector<std::string>{"J.h5"}) << "left behind: " << ::testing::PrintToString(names);
}

class InterruptedMpiWrite : public ::testing::TestWithParam<int> {};

TEST_P(InterruptedMpiWrite, MpirunsSequenceCommitsNothing) {
  // What mpirun relays, at once: SIGCONT to every rank, then the signal to mpirun, which sends SIGTERM a second later.
  run_and_signal([](pid_t mpirun, pid_t owner, pid_t other) {
    ::kill(owner, SIGCONT);
    ::kill(other, SIGCONT);
    ::kill(mpirun, GetParam());
  });
}

TEST_P(InterruptedMpiWrite, TheRankWithoutTheTemporaryRemovesIt) {
  run_and_signal([](pid_t, pid_t, pid_t other) { ::kill(other, GetParam()); });
}

TEST(InterruptedMpiWriteOutright, ARankZeroKilledOutrightLeavesNoTemporary) {
  // Rank 0 cannot remove its temporary after SIGKILL: the other rank does, on the SIGTERM mpirun sends it then.
  run_and_signal([](pid_t, pid_t owner, pid_t) { ::kill(owner, SIGKILL); });
}

TEST(InterruptedWriteFlush, ASigcontDuringTheFlushToDiskStillHoldsTheRenameForMpirunsSigterm) {
  // mpirun's SIGCONT can arrive while the finished temporary is flushed to disk (fsync of a large file): the commit
  // must still wait its grace, so that the SIGTERM mpirun sends a second later removes the temporary. The commit had
  // looked for a SIGCONT before the flush, and renamed at once after it. FLUXJAC_TEST_SIGCONT_IN_FLUSH raises the
  // SIGCONT just after the fsync; the test is mpirun, sending SIGTERM a second after the temporary appeared.
  const TempDir folder;
  const std::string output = folder.file("g.h5");
  std::ofstream(output) << "the user's g.h5";
  const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, folder.path().c_str(), IN_CREATE), 0);
  Launch launch{{"mesh", "gen", "--kind", "tet", "--n", "6", "-q", "-o", output, "--force"},
                {},
                {},
                {"FLUXJAC_TEST_SIGCONT_IN_FLUSH=1"},
                {}};
  const int log_fd = ::open(folder.file("log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  const pid_t pid = start(launch, log_fd, log_fd);
  ::close(log_fd);
  const std::string temporary = created_name(watch, "g.h5.tmp-");
  ::close(watch);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_FALSE(temporary.empty()) << "no temporary appeared";
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the job ended with success after SIGTERM";
  std::ifstream kept(output);
  const std::string content(std::istreambuf_iterator<char>(kept), {});
  EXPECT_EQ(content, "the user's g.h5") << "the signalled job replaced the file (now " << content.size() << " bytes)";
  std::vector<std::string> names = names_in(folder.path());
  names.erase(std::remove(names.begin(), names.end(), "log"), names.end());
  EXPECT_EQ(names, std::vector<std::string>{"g.h5"}) << "left behind: " << ::testing::PrintToString(names);
}

INSTANTIATE_TEST_SUITE_P(OutputSafety, InterruptedMpiWrite, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const auto& info) -> std::string {
                           return info.param == SIGTERM ? "SIGTERM" : info.param == SIGINT ? "SIGINT" : "SIGHUP";
                         });

// ---- declared sizes against real storage, and memory ----------------------------------------------------------

/// \brief Replaces a dataset of the mesh copy by one of the given type and shape whose values are never written;
/// configure sets its creation properties (chunking, allocation time).
void replace_with_unwritten(const std::string& path, const std::string& dataset, hid_t type,
                            const std::vector<hsize_t>& shape, const std::function<void(hid_t)>& configure) {
  h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
  h5::remove(file, dataset);
  const h5::Dataspace space(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr));
  const h5::PropertyList creation(H5Pcreate(H5P_DATASET_CREATE));
  configure(creation.id());
  const h5::Dataset created(
      H5Dcreate2(file.id(), dataset.c_str(), type, space.id(), H5P_DEFAULT, creation.id(), H5P_DEFAULT));
  ASSERT_TRUE(created.valid()) << dataset;
  file.close();
}

/// Peak memory that proves nothing big was allocated (the mesh itself needs a few MB).
constexpr long kSmallProcessKb = 200 * 1024;

TEST(OutputSafetySizes, UnwrittenChunksDeclaringFourHundredMillionEdgesAreRefusedBeforeAllocation) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  constexpr hsize_t kEdges = 400'000'000;
  const auto chunked = [](hsize_t rows, hsize_t columns) {
    return [=](hid_t creation) {
      const hsize_t chunk[2] = {rows, columns};
      H5Pset_chunk(creation, columns > 0 ? 2 : 1, chunk);
    };
  };
  replace_with_unwritten(mesh, "/mesh/edges", H5T_STD_I32LE, {kEdges, 2}, chunked(1 << 20, 2));
  replace_with_unwritten(mesh, "/mesh/normals", H5T_IEEE_F64LE, {kEdges, 3}, chunked(1 << 20, 3));
  replace_with_unwritten(mesh, "/mesh/areas", H5T_IEEE_F64LE, {kEdges}, chunked(1 << 20, 0));
  ASSERT_LT(fs::file_size(mesh), 200'000u) << "the premise: a small file";
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"m.h5", "/mesh/edges", "[400000000, 2]", "chunks are stored"});
  EXPECT_LT(outcome.max_rss_kb, kSmallProcessKb) << "allocated before refusing";
}

TEST(OutputSafetySizes, ContiguousDatasetNeverWrittenIsRefused) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  replace_with_unwritten(mesh, "/mesh/areas", H5T_IEEE_F64LE, {246},
                         [](hid_t creation) { H5Pset_alloc_time(creation, H5D_ALLOC_TIME_LATE); });
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"/mesh/areas", "stores 0 bytes"});
}

TEST(OutputSafetySizes, HugeNodeCountIsRefusedWithoutCommittingMemory) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  {
    h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
    h5::remove(file, "/mesh/coords");
    h5::remove(file, "/mesh/volumes");
    h5::write_attribute(file, "/mesh", "n_nodes", std::int64_t{2147483647});
    file.close();
  }
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"/state/Q", "2147483647"});
  EXPECT_LT(outcome.max_rss_kb, kSmallProcessKb) << "memory committed for the declared node count";
}

TEST(OutputSafetySizes, MeshTooBigForTheMemoryLimitIsRefusedWithAnEstimate) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  // Five million edges allocated in the file but never written: a sparse file, real storage as far as HDF5 knows.
  constexpr hsize_t kEdges = 5'000'000;
  const auto allocated_now = [](hid_t creation) {
    H5Pset_alloc_time(creation, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(creation, H5D_FILL_TIME_NEVER);
  };
  replace_with_unwritten(mesh, "/mesh/edges", H5T_STD_I32LE, {kEdges, 2}, allocated_now);
  replace_with_unwritten(mesh, "/mesh/normals", H5T_IEEE_F64LE, {kEdges, 3}, allocated_now);
  replace_with_unwritten(mesh, "/mesh/areas", H5T_IEEE_F64LE, {kEdges}, allocated_now);
  const Outcome outcome = run(Launch{quick_run({"--mesh", mesh}), {}, rlim_t{128} << 20, {}, {}});
  expect_error_line(outcome, 4, {"m.h5", "reading the mesh", "5000000 edges", "needs about", "available"});
}

TEST(OutputSafetyMemory, OutOfMemoryExitsFourSayingSo) {
  // The mesh reads under the limit (about 40 MB) and passes every up-front estimate, but its Jacobian (Aoff alone is
  // 140 MB) does not fit: the allocation fails mid-run. (mesh gen itself refuses such a limit up front, exit 3.)
  const TempDir folder;
  const std::string mesh = folder.file("m.h5");
  ASSERT_EQ(run(Launch{{"mesh", "gen", "-q", "--kind", "mixed", "--n", "50", "-o", mesh}, {}, {}, {}, {}}).exit_code,
            0);
  const Outcome outcome =
      run(Launch{{"run", "-q", "--mesh", mesh, "--warmup", "0", "--reps", "1", "--json", folder.file("r.json")},
                 {},
                 rlim_t{128} << 20,
                 {"OMP_NUM_THREADS=1"},
                 {}});
  expect_error_line(outcome, 4, {"out of memory"});
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"m.h5"}) << "no JSON, no temporary";
}

TEST(OutputSafetyMemory, ThreadsThatCannotStartExitFourNotOne) {
  const TempDir folder;
  // 64 OpenMP threads with their stacks do not fit under 128 MB of data; the mesh itself is tiny.
  const Outcome outcome = run(Launch{
      {"mesh", "gen", "-q", "--n", "2", "-o", folder.file("b.h5")}, {}, rlim_t{128} << 20, {"OMP_NUM_THREADS=64"}, {}});
  if (outcome.exit_code == 0) GTEST_SKIP() << "all 64 threads started under the limit (or no OpenMP): nothing to test";
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
  EXPECT_TRUE(contains(outcome.err, "fluxjac: error: ")) << outcome.err;
  EXPECT_TRUE(names_in(folder.path()).empty());
}

// ---- data outside the file: external links, external raw storage, virtual datasets --------------------------

/// \brief The small mesh as m.h5 with /mesh/areas replaced through edit, and a second copy other.h5 to point at.
std::string mesh_with_foreign_areas(const TempDir& folder, const std::function<void(const h5::File&)>& edit) {
  const std::string mesh = copy_of_mesh(folder);
  copy_of_mesh(folder, "other.h5");
  h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
  h5::remove(file, "/mesh/areas");
  edit(file);
  file.close();
  return mesh;
}

TEST(OutputSafetyForeignData, ExternalLinkIsRefused) {
  const TempDir folder;
  const std::string other = folder.file("other.h5");
  const std::string mesh = mesh_with_foreign_areas(folder, [&](const h5::File& file) {
    ASSERT_GE(H5Lcreate_external(other.c_str(), "/mesh/areas", file.id(), "/mesh/areas", H5P_DEFAULT, H5P_DEFAULT), 0);
  });
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"m.h5", "/mesh/areas", "external link", "other.h5"});
}

TEST(OutputSafetyForeignData, SoftLinkThroughAnExternalLinkIsRefused) {
  const TempDir folder;
  const std::string other = folder.file("other.h5");
  const std::string mesh = mesh_with_foreign_areas(folder, [&](const h5::File& file) {
    ASSERT_GE(H5Lcreate_external(other.c_str(), "/mesh", file.id(), "/elsewhere", H5P_DEFAULT, H5P_DEFAULT), 0);
    ASSERT_GE(H5Lcreate_soft("/elsewhere/areas", file.id(), "/mesh/areas", H5P_DEFAULT, H5P_DEFAULT), 0);
  });
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"m.h5", "/mesh/areas", "another file"});
}

TEST(OutputSafetyForeignData, ExternalRawStorageIsRefused) {
  const TempDir folder;
  const std::string raw = folder.file("areas.bin");
  const std::vector<double> areas(246, 1.0);
  std::ofstream(raw, std::ios::binary).write(reinterpret_cast<const char*>(areas.data()), 246 * sizeof(double));
  const std::string mesh = mesh_with_foreign_areas(folder, [&](const h5::File& file) {
    const hsize_t shape[1] = {246};
    const h5::Dataspace space(H5Screate_simple(1, shape, nullptr));
    const h5::PropertyList creation(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_external(creation.id(), raw.c_str(), 0, 246 * sizeof(double));
    const h5::Dataset dataset(
        H5Dcreate2(file.id(), "/mesh/areas", H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, creation.id(), H5P_DEFAULT));
    ASSERT_TRUE(dataset.valid());
  });
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"m.h5", "/mesh/areas", "external file", "areas.bin"});
}

TEST(OutputSafetyForeignData, VirtualDatasetIsRefused) {
  const TempDir folder;
  const std::string other = folder.file("other.h5");
  const std::string mesh = mesh_with_foreign_areas(folder, [&](const h5::File& file) {
    const hsize_t shape[1] = {246};
    const h5::Dataspace space(H5Screate_simple(1, shape, nullptr));
    const h5::PropertyList creation(H5Pcreate(H5P_DATASET_CREATE));
    ASSERT_GE(H5Pset_virtual(creation.id(), space.id(), other.c_str(), "/mesh/areas", space.id()), 0);
    const h5::Dataset dataset(
        H5Dcreate2(file.id(), "/mesh/areas", H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, creation.id(), H5P_DEFAULT));
    ASSERT_TRUE(dataset.valid());
  });
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh}));
  expect_error_line(outcome, 2, {"m.h5", "/mesh/areas", "virtual dataset"});
}

// ---- values the output format cannot hold -------------------------------------------------------------------

TEST(OutputSafetyValues, AoffBeyondFloat32FailsBeforeTheFileIsWritten) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  {
    h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
    std::vector<double> areas = h5::read<double>(file, h5::describe_dataset(file, "/mesh/areas"));
    for (double& area : areas) area *= 1e40;  // finite and positive, but the blocks pass 3.4e38
    h5::replace(file, "/mesh/areas", areas, {static_cast<std::int64_t>(areas.size())});
    file.close();
  }
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh, "--output", folder.file("J.h5")}));
  expect_error_line(outcome, 2, {"J.h5", "/jacobian/aoff", "is inf, not a finite number", "float32"});
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"m.h5"});
}

/// Sets node 20's state in a mesh file to node_q (its five conserved values).
void set_node_state(const std::string& mesh, const std::vector<double>& node_q) {
  h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
  const h5::DatasetInfo info = h5::describe_dataset(file, "/state/Q");
  std::vector<double> q = h5::read<double>(file, info);
  std::copy(node_q.begin(), node_q.end(), q.begin() + 5 * 20);
  h5::write_rows(file, "/state/Q", {{0, info.shape.front()}}, q);
  file.close();
}

TEST(OutputSafetyValues, ANanJacobianIsCalledNotFiniteAndBlamesADensityNearZero) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  // At rest with p = 1: a valid state, but 1e-300 is a density near 0, and the flux's arithmetic overflows.
  set_node_state(mesh, {1e-300, 0.0, 0.0, 0.0, 2.5});
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh, "--output", folder.file("J.h5")}));
  expect_error_line(outcome, 2, {"J.h5", "/jacobian/adiag[", "is NaN, not a finite number", "density near 0"});
  EXPECT_FALSE(contains(outcome.err, "exceeds the range")) << outcome.err;
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"m.h5"});
}

TEST(OutputSafetyValues, AJacobianPastFloat32FromATinyDensityNamesADensityNearZero) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  // A moving flow with a density of 1e-100: the blocks grow as 1 / density past float32's 3.4e38 (inf, not NaN),
  // while the mesh and the rest of the state are ordinary.
  const double rho = 1e-100;
  set_node_state(mesh, {rho, rho * 0.8, rho * 0.1, 0.0, 0.7 / 0.4 + 0.5 * rho * 0.65});
  const Outcome outcome = fluxjac(quick_run({"--mesh", mesh, "--output", folder.file("J.h5")}));
  expect_error_line(outcome, 2, {"J.h5", "not a finite number", "a density near 0 in the state"});
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"m.h5"});
}

// ---- AtomicOutput in process ---------------------------------------------------------------------------------

TEST(OutputSafetyAtomicOutput, TemporariesAreUniqueAndLieBesideTheLinkTarget) {
  const TempDir folder;
  fs::create_directory(folder.path() / "target");
  fs::create_symlink("target/out.txt", folder.path() / "out.txt");
  AtomicOutput first(folder.file("out.txt")), second(folder.file("out.txt"));
  EXPECT_NE(first.temporary_path(), second.temporary_path());
  EXPECT_EQ(fs::path(first.temporary_path()).parent_path(), folder.path() / "target");
  EXPECT_TRUE(fs::exists(first.temporary_path())) << "the name is taken when the output starts";
  std::ofstream(first.temporary_path()) << "new";
  first.commit();
  EXPECT_TRUE(fs::is_symlink(folder.path() / "out.txt"));
  EXPECT_EQ(bytes_of(folder.file("target/out.txt")), "new");
}

TEST(OutputSafetyAtomicOutput, WriteTextOutputReplacesAFileAtomically) {
  const TempDir folder;
  write_text(folder.file("a.txt"), "old");
  write_text_output(folder.file("a.txt"), "new text");
  EXPECT_EQ(bytes_of(folder.file("a.txt")), "new text");
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"a.txt"});
}

// ---- an output redirected while the command runs: refused before the commit, exit 4, nothing written ---------
// The checks run before any work; the commit, seconds or hours later, goes to the folder and name they resolved,
// and only after confirming that the name as given still leads there and that the file there is no input.

/// \brief Expects commit() to throw Error(kRuntime) holding every fragment.
void expect_commit_refused(AtomicOutput& output, const std::vector<std::string>& fragments) {
  try {
    output.commit();
    ADD_FAILURE() << "the commit went through";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kRuntime) << error.what();
    for (const std::string& fragment : fragments)
      EXPECT_TRUE(contains(error.what(), fragment)) << "\"" << fragment << "\" missing in: " << error.what();
  }
  EXPECT_FALSE(output.committed());
}

/// \brief Points the symbolic link at path to target, in one step (a new link renamed over the old one).
void repoint_link(const fs::path& path, const std::string& target) {
  const fs::path fresh = path.string() + ".new-link";
  fs::create_symlink(target, fresh);
  fs::rename(fresh, path);
}

TEST(OutputSafetyRedirect, LinkRepointedAtTheInputBeforeTheCommitIsRefused) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), link = folder.file("out.h5");
  const std::string mesh_bytes = bytes_of(mesh);
  write_text(folder.file("harmless.h5"), "harmless");
  fs::create_symlink("harmless.h5", link);
  set_replacing_existing_outputs(true);  // --force: harmless.h5 exists
  check_output_paths({{"--mesh", mesh}}, {{"--output", link}});
  set_replacing_existing_outputs(false);
  {
    AtomicOutput output(link);
    write_text(output.temporary_path(), "the Jacobian");
    repoint_link(link, "m.h5");  // while the command runs
    expect_commit_refused(output, {"--output", "out.h5", "now leads to", "m.h5", "harmless.h5", "nothing written"});
  }
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input changed";
  EXPECT_EQ(bytes_of(folder.file("harmless.h5")), "harmless");
  EXPECT_EQ(fs::read_symlink(link), "m.h5");
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyRedirect, LinkRepointedBeforeTheOutputStartsIsRefused) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), link = folder.file("out.json");
  const std::string mesh_bytes = bytes_of(mesh);
  fs::create_symlink("runs.json", link);  // dangling when checked: the output creates runs.json
  check_output_paths({{"--mesh", mesh}}, {{"--json", link, true}});
  repoint_link(link, "m.h5");
  try {
    write_text_output(link, "{}");
    ADD_FAILURE() << "written";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kRuntime);
    EXPECT_TRUE(contains(error.what(), "--json")) << error.what();
  }
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input changed";
  EXPECT_FALSE(fs::exists(folder.file("runs.json")));
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyRedirect, FolderLinkRepointedAtTheInputsFolderIsRefused) {
  const TempDir folder;
  fs::create_directory(folder.path() / "inputs");
  fs::create_directory(folder.path() / "results");
  const std::string mesh = copy_of_mesh(folder, "inputs/J.h5");
  const std::string mesh_bytes = bytes_of(mesh);
  fs::create_symlink("results", folder.path() / "out");
  const std::string output_name = folder.file("out/J.h5");  // results/J.h5 when checked
  check_output_paths({{"--mesh", mesh}}, {{"--output", output_name}});
  {
    AtomicOutput output(output_name);
    write_text(output.temporary_path(), "the Jacobian");
    repoint_link(folder.path() / "out", "inputs");  // out/J.h5 is now the input
    expect_commit_refused(output, {"--output", "out/J.h5", "inputs/J.h5", "results/J.h5", "nothing written"});
  }
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input changed";
  EXPECT_TRUE(fs::is_empty(folder.path() / "results"));
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyRedirect, TargetReplacedByAHardLinkToTheInputIsRefused) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), output_name = folder.file("J.h5");
  const std::string mesh_bytes = bytes_of(mesh);
  write_text(output_name, "old");
  set_replacing_existing_outputs(true);  // --force: J.h5 exists
  check_output_paths({{"--mesh", mesh}}, {{"--output", output_name}});
  set_replacing_existing_outputs(false);
  {
    AtomicOutput output(output_name);
    write_text(output.temporary_path(), "the Jacobian");
    fs::remove(output_name);
    fs::create_hard_link(mesh, output_name);  // the same name, now the input's file
    expect_commit_refused(output, {"--output", "J.h5", "same file as --mesh", "nothing written"});
  }
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input changed";
  EXPECT_EQ(fs::hard_link_count(mesh), 2u);
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyRedirect, FolderReplacedByAnotherOfTheSameNameIsRefused) {
  const TempDir folder;
  fs::create_directory(folder.path() / "results");
  const std::string output_name = folder.file("results/runs.csv");
  check_output_paths({}, {{"--csv", output_name, true}});
  {
    AtomicOutput output(output_name);
    EXPECT_EQ(fs::path(output.temporary_path()).parent_path(), fs::canonical(folder.path() / "results"));
    write_text(output.temporary_path(), "variant\n");
    fs::rename(folder.path() / "results", folder.path() / "old");
    fs::create_directory(folder.path() / "results");
    expect_commit_refused(output, {"--csv", "runs.csv", "was replaced", "nothing written"});
  }
  EXPECT_TRUE(fs::is_empty(folder.path() / "results"));
  EXPECT_TRUE(fs::is_empty(folder.path() / "old")) << "the temporary stayed in the folder it was made in";
}

/// \brief Runs fluxjac with a link re-pointed at `input` as soon as stderr shows `started` (the work under way), when
/// cases_done cases have printed their outcome: more would mean that the run was too quick to test anything (the
/// test then fails, saying so).
Outcome run_and_repoint(std::vector<std::string> args, const fs::path& link, const std::string& input,
                        const std::string& started, std::size_t cases_done) {
  bool repointed = false;
  std::string seen;
  const Outcome outcome = run(Launch{std::move(args), {}, {}, {}, {}}, [&](const std::string& err) {
    if (!contains(err, started)) return false;
    seen = err;
    repoint_link(link, input);
    repointed = true;
    return true;
  });
  EXPECT_TRUE(repointed) << "never saw \"" << started << "\":\n" << outcome.err;
  std::size_t outcomes = 0;
  for (std::size_t at = seen.find("ms median"); at != std::string::npos; at = seen.find("ms median", at + 1))
    ++outcomes;
  EXPECT_EQ(outcomes, cases_done) << "the case ended before the link changed (give it more --reps):\n" << seen;
  return outcome;
}

/// The last line of text.
std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return {};
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

TEST(OutputSafetyRedirect, RunWhoseOutputLinkIsRepointedAtTheMeshMidRunExitsFourAndKeepsTheMesh) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), link = folder.file("out.h5");
  const std::string mesh_bytes = bytes_of(mesh);
  write_text(folder.file("harmless.h5"), "harmless");
  fs::create_symlink("harmless.h5", link);
  const Outcome outcome = run_and_repoint(
      {"run", "--mesh", mesh, "--warmup", "0", "--reps", "400", "--force", "-o", link}, link, "m.h5", "[case 1/1]", 0);
  EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
  // The error ends the line of the case whose outcome it is (the progress line "[case 1/1] ... " is open).
  const std::string line = last_line(outcome.err);
  const std::string error = line.substr(std::min(line.find("fluxjac: error: "), line.size()));
  EXPECT_EQ(error.rfind("fluxjac: error: --output ", 0), 0u) << outcome.err;
  for (const char* fragment : {"out.h5", "now leads to", "m.h5", "nothing written"})
    EXPECT_TRUE(contains(error, fragment)) << "\"" << fragment << "\" missing in: " << error;
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input was overwritten";
  EXPECT_EQ(bytes_of(folder.file("harmless.h5")), "harmless");
  expect_no_temporary(folder.path());
}

TEST(OutputSafetyRedirect, BenchJsonLinkRepointedBetweenCasesKeepsTheMeshAndTheLastGoodJson) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), second = copy_of_mesh(folder, "second.h5");
  const std::string link = folder.file("out.json"), mesh_bytes = bytes_of(mesh);
  fs::create_symlink("runs.json", link);
  // The JSON is rewritten after every case: the first case's is in runs.json when the second case starts.
  const Outcome outcome = run_and_repoint({"bench", "--mesh", mesh + "," + second, "--variant", "reference", "--warmup",
                                           "0", "--reps", "400", "--json", link},
                                          link, "m.h5", "[case 2/2]", 1);
  EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
  const std::string error = last_line(outcome.err);
  EXPECT_EQ(error.rfind("fluxjac: error: --json ", 0), 0u) << outcome.err;
  EXPECT_TRUE(contains(error, "now leads to")) << error;
  EXPECT_TRUE(bytes_of(mesh) == mesh_bytes) << "the input was overwritten";
  const std::string kept = bytes_of(folder.file("runs.json"));
  EXPECT_TRUE(contains(kept, "\"runs\"")) << kept;
  EXPECT_FALSE(contains(kept, "second.h5")) << "the second case's JSON went to the old target";
  expect_no_temporary(folder.path());
}

// ---- every output name checked before any work: empty, too long for its temporary; control characters escaped

class EmptyOutputName : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(EmptyOutputName, IsRefusedWithExitThreeBeforeAnyWork) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  std::vector<std::string> args = GetParam();
  for (std::string& arg : args)
    if (arg == "MESH") arg = mesh;
  const std::vector<std::string> before = names_in(folder.path());
  const Outcome outcome = fluxjac(args);
  expect_error_line(outcome, 3, {"an empty output name"});
  EXPECT_EQ(names_in(folder.path()), before) << "something was written";
  EXPECT_TRUE(outcome.out.empty()) << "work was done:\n" << outcome.out;
}

INSTANTIATE_TEST_SUITE_P(
    OutputSafety, EmptyOutputName,
    ::testing::Values(std::vector<std::string>{"run", "--mesh", "MESH", "--reps", "1", "-o", ""},
                      std::vector<std::string>{"run", "--mesh", "MESH", "--reps", "1", "--json", ""},
                      std::vector<std::string>{"run", "--mesh", "MESH", "--reps", "1", "--csv", ""},
                      std::vector<std::string>{"bench", "--mesh", "MESH", "--reps", "1", "--json", ""},
                      std::vector<std::string>{"bench", "--mesh", "MESH", "--reps", "1", "--csv", ""},
                      std::vector<std::string>{"mesh", "gen", "--n", "2", "-o", ""},
                      std::vector<std::string>{"mesh", "dual", "MESH", "-o", ""}),
    [](const auto& info) {
      std::string name = info.param[0] == "mesh" ? "mesh_" + info.param[1] : info.param[0];
      name +=
          "_" + std::string(info.param[info.param.size() - 2] == "-o" ? "output"
                                                                      : info.param[info.param.size() - 2].substr(2));
      return name;
    });

TEST(OutputSafetyNames, EmptyOutputNameInAConfigFileIsRefused) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder), config = folder.file("run.toml");
  write_text(config, fmt::format("mesh = \"{}\"\njson = \"\"\nreps = 1\n", mesh));
  const Outcome outcome = fluxjac({"run", "--config", config});
  expect_error_line(outcome, 3, {"run.toml:2", "--json", "an empty output name"});
  EXPECT_EQ(names_in(folder.path()), (std::vector<std::string>{"m.h5", "run.toml"}));
}

TEST(OutputSafetyNames, NameTooLongForItsTemporaryIsRefusedBeforeAnyWork) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  const std::string name = std::string(251, 'j') + ".h5";  // 254 bytes: fits the folder, its temporary does not
  const auto start = std::chrono::steady_clock::now();
  const Outcome outcome = fluxjac({"run", "--mesh", mesh, "--warmup", "0", "--reps", "50", "-o", folder.file(name)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  expect_error_line(outcome, 3, {"--output", "too long", "254 bytes", "at most 223 bytes"});
  EXPECT_TRUE(outcome.out.empty()) << "work was done:\n" << outcome.out;
  EXPECT_LT(seconds, 5.0) << "refused only after the run";
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"m.h5"});
}

TEST(OutputSafetyNames, LinkToANameTooLongForItsTemporaryIsRefusedBeforeAnyWork) {
  const TempDir folder;
  const std::string mesh = copy_of_mesh(folder);
  fs::create_symlink(std::string(240, 'r') + ".csv", folder.path() / "runs.csv");
  const Outcome outcome = fluxjac({"run", "--mesh", mesh, "--reps", "1", "--csv", folder.file("runs.csv")});
  expect_error_line(outcome, 3, {"--csv", "runs.csv", "too long", "244 bytes"});
  EXPECT_TRUE(outcome.out.empty()) << "work was done:\n" << outcome.out;
}

TEST(OutputSafetyNames, ControlCharactersInANameAreEscapedInTheErrorLine) {
  const TempDir folder;
  const std::string hostile = folder.file(
      "x\n\x1b[2J\r\x7f\xc2\x9b"
      "31m.h5");  // newline, clear screen, CR, DEL, CSI
  const Outcome input = fluxjac({"run", "--mesh", hostile});
  expect_error_line(input, 2, {"x\\n\\x1b[2J\\r\\x7f\\u009b31m.h5", "file not found"});
  EXPECT_FALSE(contains(input.err, "\x1b")) << "a raw escape reached the terminal";
  const Outcome output = fluxjac({"run", "--mesh", copy_of_mesh(folder), "-o", folder.file("no\nsuch\x1b/J.h5")});
  expect_error_line(output, 3, {"--output", "no\\nsuch\\x1b/J.h5", "does not exist"});
  const Outcome option = fluxjac({"run", "--mesh", hostile, "--reps", "x\n\x1b[1m"});
  expect_error_line(option, 3, {"--reps", "\\x1b[1m"});
}

// ---- the rows a rank writes into the shared temporary: errors name the output the user gave -------------------

TEST(OutputSafetyNames, RowWriterErrorsNameTheOutputNotItsTemporary) {
  const TempDir folder;
  // The temporary is gone, as it is when another rank's failure made rank 0 remove it.
  const std::string temporary = folder.file("J.h5.tmp-1-0123456789abcdef");
  JacobianRows rows;
  rows.local_ptr = {0};
  try {
    write_jacobian_rows(temporary, "J.h5", rows);
    ADD_FAILURE() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("J.h5: ", 0), 0u) << error.what();
    EXPECT_FALSE(contains(error.what(), ".tmp-")) << error.what();
  }
}

// ---- an input that is not a regular file ----------------------------------------------------------------------------

TEST(InputSafety, AFifoAsAnyHdf5InputIsRefusedAtOnce) {
  const TempDir folder;
  const std::string fifo = folder.file("pipe.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO for reading waits for a writer: `timeout` turns a hang into exit code 124.
  for (const std::string& args :
       {fmt::format("run --mesh '{}' --state '{}'", small_mesh(), fifo),
        fmt::format("run --mesh '{}' --reference '{}'", small_mesh(), fifo), fmt::format("info '{}'", fifo),
        fmt::format("mesh partition '{}' --parts 2 -o '{}'", fifo, folder.file("p.h5")),
        fmt::format("mesh dual '{}' -o '{}'", fifo, folder.file("d.h5"))}) {
    const test::CommandResult result = test::run_command(fmt::format("timeout 20 '{}' {}", FLUXJAC_EXECUTABLE, args));
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, "pipe.h5: is not a regular file")) << args << "\n" << result.output;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"pipe.h5"}) << "an output was written";
}

// ---- an existing output is replaced only with --force ------------------------------------------------------------

/// One writer of an existing file: the command line that writes it (the file's name last in its arguments).
struct ExistingOutputCase {
  std::string name;
  std::function<std::vector<std::string>(const std::string& output)> command;
};

std::vector<ExistingOutputCase> existing_output_cases() {
  return {
      {"run --output",
       [](const std::string& out) {
         return quick_run({"--mesh", small_mesh(), "--output", out});
       }},
      {"run --json",
       [](const std::string& out) {
         return quick_run({"--mesh", small_mesh(), "--json", out});
       }},
      {"run --csv",
       [](const std::string& out) {
         return quick_run({"--mesh", small_mesh(), "--csv", out});
       }},
      {"bench --json",
       [](const std::string& out) {
         return std::vector<std::string>{"bench",    "-q", "--mesh", small_mesh(), "--variant", "reference",
                                         "--warmup", "0",  "--reps", "1",          "--json",    out};
       }},
      {"mesh gen --output",
       [](const std::string& out) {
         return std::vector<std::string>{"mesh", "gen", "--kind", "tet", "--n", "2", "-q", "--output", out};
       }},
      {"mesh partition --output",
       [](const std::string& out) {
         return std::vector<std::string>{"mesh", "partition", small_mesh(), "--parts", "1", "--output", out};
       }},
  };
}

TEST(OutputSafetyExisting, AnExistingOutputIsRefusedUnlessForcedAndForceReplacesIt) {
  for (const ExistingOutputCase& writer : existing_output_cases()) {
    const TempDir folder;
    const std::string out = folder.file("existing.out");
    write_text(out, "the user's file");
    const Outcome refused = fluxjac(writer.command(out));
    expect_error_line(refused, 2, {"existing.out", "exists", "--force", "force = true"});
    EXPECT_EQ(bytes_of(out), "the user's file") << writer.name << ": the existing file changed";
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"existing.out"}) << writer.name;

    std::vector<std::string> forced = writer.command(out);
    forced.insert(forced.end() - 2, "--force");
    const Outcome replaced = fluxjac(forced);
    EXPECT_EQ(replaced.exit_code, 0) << writer.name << ": " << replaced.err;
    EXPECT_NE(bytes_of(out), "the user's file") << writer.name << ": --force did not replace the file";
    EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"existing.out"}) << writer.name;
  }
}

TEST(OutputSafetyExisting, TheConfigKeyForceReplacesAsTheOptionDoes) {
  const TempDir folder;
  const std::string out = folder.file("runs.json"), config = folder.file("run.toml");
  write_text(out, "the user's file");
  write_text(config, "variant = \"reference\"\nwarmup = 0\nreps = 1\nforce = true\n");
  const Outcome outcome = fluxjac({"run", "-q", "--config", config, "--mesh", small_mesh(), "--json", out});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_TRUE(contains(bytes_of(out), "\"schema\": \"fluxjac-bench\"")) << bytes_of(out);
}

}  // namespace
}  // namespace fluxjac
