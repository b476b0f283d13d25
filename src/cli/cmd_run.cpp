// fluxjac run: assemble a mesh's Jacobian with one or more variants, time, validate, report. It is the sweep
// of one mesh (cli/sweep_command.hpp), with a state file, a stored reference and the Jacobian file as extras.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/sweep_command.hpp"
#include "jacobian/jacobian_io.hpp"
#include "part/owned_rows.hpp"
#include "ranks/communicator.hpp"
#include "util/error.hpp"
#include "util/output_paths.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

struct RunOptions {
  SweepConfig sweep;
  std::string mesh, output;
  ReportFiles reports;
  bool quiet = false;
};

/// Where --output puts the Jacobian of each variant: the path itself for one case; with several variants (one full
/// case each), J.h5 becomes J-hd.h5, J-dn_10.h5, ... (J-hd-cpu.h5 for hd:cpu: no colon in a file name).
std::map<std::string, std::string> output_files(const SweepPlan& plan, const std::string& output) {
  std::map<std::string, std::string> files;
  if (output.empty()) return files;
  for (const SweepCase& sweep_case : plan.cases) {
    if (sweep_case.assembly.mode != AssemblyMode::kFull)
      fail(ExitCode::kUsage, "--output needs --mode full (other modes do not assemble a complete Jacobian)");
    if (files.count(sweep_case.variant))
      fail(ExitCode::kUsage,
           "--output writes one Jacobian per variant, and '{}' has several cases here: select one assembly, one "
           "edges per block and one Aoff precision",
           sweep_case.variant);
    files[sweep_case.variant] = output;
  }
  if (files.size() > 1) {
    const std::filesystem::path path(output);
    for (auto& [variant, file] : files) {
      std::string suffix = variant;
      std::replace(suffix.begin(), suffix.end(), ':', '-');
      file = (path.parent_path() / (path.stem().string() + "-" + suffix + path.extension().string())).string();
    }
  }
  return files;
}

int run(RunOptions options, const std::vector<InputPath>& inputs) {
  SweepConfig& sweep = options.sweep;
  if (!options.mesh.empty()) sweep.meshes = {options.mesh};
  sweep.named_cases_must_run = true;
  // The plan and the output checks read the file system, which ranks may see differently: a rank that fails here
  // meets the others in the sweep's first collective (ranks/communicator.hpp).
  const SweepPlan plan = plan_sweep(sweep);
  check_some_case_runs(plan);
  // The Jacobian files are known once the plan is: J.h5 itself for one variant, J-hd.h5, ... for several.
  const std::map<std::string, std::string> outputs = output_files(plan, options.output);
  std::vector<OutputPath> checked{{"--csv", options.reports.csv, true}, {"--json", options.reports.json, true}};
  for (const auto& [variant, file] : outputs) checked.push_back({"--output", file});
  check_output_paths(inputs, checked);
  print_notes(plan);

  SweepObserver observer = progress_observer(plan, options.quiet, options.reports);
  if (!outputs.empty())
    observer.assembled = [outputs, note = observer.note](const SweepCase& sweep_case, const PreparedMesh& mesh,
                                                         const Jacobian& jacobian) {
      const std::string& output = outputs.at(sweep_case.variant);
      JacobianFileInfo info{sweep_case.variant, mesh.summary.file, mesh.state_file,
                            fmt::format("{} ({})", kVersion, kGitRevision)};
      info.orientation = sweep_case.assembly.orientation;
      info.aoff_precision = sweep_case.assembly.aoff_precision;
      // One file in the mesh file's numbering, of every rank's owned rows.
      write_owned_rows(*mesh.comm, output, mesh.layout, mesh.pattern, jacobian, info);
      if (note) note(fmt::format("wrote {}", output));
    };
  const SweepResult result = run_sweep(plan, sweep, observer);
  // Rank 0 prints and writes what goes to standard output; a failure there is every rank's at the command's guard.
  return report_sweep(plan, result, sweep, options.reports);
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run_app = add_command(
      app,
      {"run",
       "Assemble the Jacobian of a mesh and state with one or more variants, time it (CUDA events for GPU "
       "variants) and validate it against the CPU reference or a stored Jacobian. Prints progress on stderr and a "
       "table on stdout; writes CSV/JSON and the Jacobian on request. 'run' is a 'bench' sweep of one mesh: the "
       "case options are the same. Exit code 1 when a validation fails, 3 when a variant asked for by name "
       "cannot run here (a GPU variant without a CUDA device) or no case runs, 4 when a case fails with a run-time "
       "error.",
       "Examples:\n"
       "  fluxjac run --mesh box.h5                                   # the CPU reference, validated\n"
       "  fluxjac run --mesh box.h5 --variant all --json runs.json    # every variant this machine can run\n"
       "  fluxjac run --mesh box.h5 --variant reference -o ref.h5\n"
       "  fluxjac run --mesh box.h5 --variant hd --reference ref.h5   # needs a GPU\n"
       "  fluxjac run --config configs/default.toml --reps 3\n"
       "  mpirun -np 4 fluxjac run --mesh box.h5 --variant all -o J.h5  # one rank per GPU: J-hd.h5, ..."},
      action, [options](const CLI::App& command) {  // its --config file is applied already (cli/command_intent.hpp)
        const std::vector<InputPath> inputs{{"--config", config_file_path(command)},
                                            {"--mesh", options->mesh},
                                            {"--state", options->sweep.state},
                                            {"--reference", options->sweep.reference}};
        check_output_paths(inputs, {{"--csv", options->reports.csv, true}, {"--json", options->reports.json, true}});
        return run(*options, inputs);
      });
  add_config_option(*run_app);
  run_app->add_option("--mesh", options->mesh,
                      "edge mesh file (.h5, format fluxjac-edge-mesh) or a generator spec kind:n:order[:seed] "
                      "(see 'bench --help')");
  run_app->add_option("--state", options->sweep.state, "state file (default: the state in the mesh file)");
  add_case_options(*run_app, options->sweep.cases);
  run_app->add_option("--reference", options->sweep.reference,
                      "stored Jacobian (.h5 from --output) of the same mesh to validate against instead of the CPU "
                      "reference");
  run_app->add_option("-o,--output", options->output,
                      "write the assembled Jacobian (.h5, block-CSR; mode full); with several variants, one file "
                      "each: J.h5 becomes J-hd.h5, J-dn_10.h5, ...; never over an input file. Under mpirun: one file "
                      "in the mesh file's numbering, the same as one process writes");
  run_app->add_option("--csv", options->reports.csv,
                      "write one CSV row per case ('-': standard output, the table then goes to stderr)");
  run_app->add_option("--json", options->reports.json,
                      "write results and device/build metadata as JSON ('-': standard output, the table then goes "
                      "to stderr)");
  run_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
}

}  // namespace fluxjac
