// fluxjac run: read a mesh and state, assemble with one or more variants, time, validate, report.
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "bench/report.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "reference/reference.hpp"
#include "util/error.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

struct RunOptions {
  std::string mesh, state, reference, output, csv, json;
  std::vector<std::string> variants{"reference"};
  TimingOptions timing;
  std::string mode = "full";
  bool validate = true;
  bool quiet = false;
  Tolerances tolerances;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Progress lines go to stderr so that stdout carries only the table.
template <class... Args>
void note(bool quiet, fmt::format_string<Args...> format, Args&&... args) {
  if (!quiet) fmt::print(stderr, "{}\n", fmt::format(format, std::forward<Args>(args)...));
}

int run(RunOptions options) {
  if (options.mesh.empty()) fail(ExitCode::kUsage, "no mesh: give --mesh FILE.h5 (or 'mesh' in the --config file)");
  const std::vector<std::string> names = Registry::instance().resolve(options.variants);
  options.timing.mode = parse_assembly_mode(options.mode);
  if (options.timing.reps < 1) fail(ExitCode::kUsage, "--reps must be at least 1");
  if (options.timing.warmup < 0) fail(ExitCode::kUsage, "--warmup must not be negative");
  if (!options.output.empty() && names.size() != 1)
    fail(ExitCode::kUsage, "--output writes one Jacobian: select a single variant with --variant");
  if (!options.output.empty() && options.timing.mode != AssemblyMode::kFull)
    fail(ExitCode::kUsage, "--output needs --mode full (other modes do not assemble a complete Jacobian)");
  const bool validate = options.validate && options.timing.mode == AssemblyMode::kFull;

  // ---- inputs ------------------------------------------------------------------------------------
  auto start = std::chrono::steady_clock::now();
  const EdgeMesh mesh = read_edge_mesh(options.mesh);
  const std::string state_path = options.state.empty() ? options.mesh : options.state;
  const FlowState state = read_flow_state(state_path, mesh.n_nodes);
  note(options.quiet, "read {}: {} nodes, {} edges ({:.2f} s)", options.mesh, mesh.n_nodes, mesh.n_edges(),
       seconds_since(start));
  start = std::chrono::steady_clock::now();
  const JacobianPattern pattern = JacobianPattern::build(mesh);
  note(options.quiet, "block-CSR pattern: {} off-diagonal blocks ({:.2f} s)", pattern.nnz(), seconds_since(start));

  // ---- reference: a stored Jacobian or the CPU reference computed here -----------------------------
  JacobianPattern reference_pattern;
  Jacobian reference;
  if (validate) {
    start = std::chrono::steady_clock::now();
    if (!options.reference.empty()) {
      StoredJacobian stored = read_jacobian(options.reference);
      reference_pattern = std::move(stored.pattern);
      reference = std::move(stored.jacobian);
      note(options.quiet, "reference: {} ({:.2f} s)", options.reference, seconds_since(start));
    } else {
      reference_pattern = pattern;
      assemble_reference(mesh, state, pattern, reference);
      note(options.quiet, "reference: CPU multivariate dual ({:.2f} s)", seconds_since(start));
    }
  }

  // ---- device ceilings, measured once when a GPU variant runs ------------------------------------
  std::optional<DeviceCeilings> device;
  for (const auto& name : names)
    if (Registry::instance().create(name)->info().backend == Backend::kCuda) device = probe_device();
  if (device)
    note(options.quiet, "device: {}, copy {:.0f} GB/s, FP64 {:.0f} GFLOP/s (measured)", device->name,
         device->copy_bandwidth_gbs, device->fp64_gflops);

  // ---- variants ------------------------------------------------------------------------------------
  std::vector<RunRecord> records;
  bool all_passed = true;
  for (const auto& name : names) {
    auto variant = Registry::instance().create(name);
    note(options.quiet, "running {} ({} warm-up + {} timed, mode {})", name, options.timing.warmup,
         options.timing.reps, options.mode);
    variant->setup(mesh, state, pattern);
    const TimingSamples samples = variant->run(options.timing);
    RunRecord record;
    record.mesh = options.mesh;
    record.n_nodes = mesh.n_nodes;
    record.n_edges = mesh.n_edges();
    record.variant = name;
    record.backend = to_string(variant->info().backend);
    record.mode = options.mode;
    record.threads_per_edge = variant->info().threads_per_edge;
    record.reps = options.timing.reps;
    record.assembly_ms = Stats::of(samples.assembly_ms);
    record.zero_ms = Stats::of(samples.zero_ms);
    record.resources = variant->resources();
    if (validate || !options.output.empty()) {
      Jacobian result;
      variant->fetch(result);
      if (validate) {
        record.validated = true;
        record.comparison = compare_jacobians(pattern, result, reference_pattern, reference, options.tolerances);
        if (!record.comparison.same_pattern)
          note(false, "{}: pattern differs from the reference: {}", name, record.comparison.pattern_message);
        all_passed = all_passed && record.comparison.passed;
      }
      if (!options.output.empty()) {
        write_jacobian(options.output, pattern, result,
                       JacobianFileInfo{name, options.mesh, state_path, fmt::format("{} ({})", kVersion, kGitRevision)});
        note(options.quiet, "wrote {}", options.output);
      }
    }
    finish_record(record, device);
    records.push_back(std::move(record));
  }

  // ---- report ----------------------------------------------------------------------------------------
  fmt::print("\nmesh {}: {} nodes, {} edges, {} off-diagonal blocks\n", options.mesh, mesh.n_nodes, mesh.n_edges(),
             pattern.nnz());
  fmt::print("{}", format_table(records));
  if (validate)
    fmt::print("tolerances: Adiag {:.0e}, Aoff {:.0e} (max|A - R| / max|R|); reference: {}\n",
               options.tolerances.adiag, options.tolerances.aoff,
               options.reference.empty() ? "CPU multivariate dual" : options.reference);
  if (!options.csv.empty()) write_text_file(options.csv, format_csv(records));
  if (!options.json.empty()) write_text_file(options.json, format_json(records, device));
  if (!all_passed) {
    std::fprintf(stderr, "fluxjac: validation FAILED for at least one variant\n");
    return static_cast<int>(ExitCode::kValidationFailed);
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run_app = app.add_subcommand(
      "run", "Assemble the Jacobian of a mesh and state with one or more variants, time it (CUDA events for GPU "
             "variants) and validate it against the CPU reference or a stored Jacobian. Prints a table; writes "
             "CSV/JSON and the Jacobian on request. Exit code 1 when a validation fails.");
  add_config_option(*run_app);
  run_app->add_option("--mesh", options->mesh, "edge mesh file (.h5, format fluxjac-edge-mesh)");
  run_app->add_option("--state", options->state, "state file (default: the state in the mesh file)");
  run_app->add_option("--variant", options->variants,
                      "variant name(s), comma-separated or repeated, or 'all' (see 'fluxjac list')")
      ->delimiter(',')
      ->capture_default_str();
  run_app->add_option("--warmup", options->timing.warmup, "untimed runs before timing")->capture_default_str();
  run_app->add_option("--reps", options->timing.reps, "timed repetitions (min/median/max reported)")
      ->capture_default_str();
  run_app->add_option("--mode", options->mode,
                      "timed region: full, compute-only (scatter switched off) or scatter-only (flux switched "
                      "off) — the paper's Table IV split; validation needs full")
      ->check(CLI::IsMember({"full", "compute-only", "scatter-only"}))
      ->capture_default_str();
  run_app->add_option("--edges-per-block", options->timing.edges_per_block,
                      "GPU tuning: edges per thread block (0 = the variant's default)")
      ->capture_default_str();
  run_app->add_flag("--validate,!--no-validate", options->validate,
                    "compare with the reference (default on)");
  run_app->add_option("--reference", options->reference,
                      "stored Jacobian (.h5 from --output) to validate against instead of the CPU reference");
  run_app->add_option("--adiag-tolerance", options->tolerances.adiag, "pass if max|A-R|/max|R| of Adiag is at most this")
      ->capture_default_str();
  run_app->add_option("--aoff-tolerance", options->tolerances.aoff, "pass if max|A-R|/max|R| of Aoff is at most this")
      ->capture_default_str();
  run_app->add_option("--output", options->output, "write the assembled Jacobian (.h5, block-CSR; one variant)");
  run_app->add_option("--csv", options->csv, "write one CSV row per variant");
  run_app->add_option("--json", options->json, "write results and device/build metadata as JSON");
  run_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
  run_app->callback([&action, options, run_app] {
    action = [options, run_app] {
      apply_config_file(*run_app);
      return run(*options);
    };
  });
}

}  // namespace fluxjac
