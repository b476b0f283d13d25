// fluxjac run: read a mesh and state, assemble with one or more variants, time, validate, report.
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "bench/report.hpp"
#include "bench/run_case.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/output_paths.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

struct RunOptions {
  std::string mesh, state, reference, output, csv, json;
  std::vector<std::string> variants{"reference"};
  TimingOptions timing;
  std::string mode = "full";
  std::string assembly = "auto";
  bool validate = true;
  bool quiet = false;
  Tolerances tolerances;
};

/// Progress lines go to stderr so that stdout carries only the table.
Note progress_note(bool quiet) {
  if (quiet) return {};
  return [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
}

int run(RunOptions options) {
  if (options.mesh.empty()) fail(ExitCode::kUsage, "no mesh: give --mesh FILE.h5 (or 'mesh' in the --config file)");
  const std::vector<std::string> names = Registry::instance().resolve(options.variants);
  options.timing.mode = parse_assembly_mode(options.mode);
  options.timing.strategy = parse_assembly_strategy(options.assembly);
  if (options.timing.reps < 1) fail(ExitCode::kUsage, "--reps must be at least 1");
  if (options.timing.warmup < 0) fail(ExitCode::kUsage, "--warmup must not be negative");
  if (!options.output.empty() && names.size() != 1)
    fail(ExitCode::kUsage, "--output writes one Jacobian: select a single variant with --variant");
  if (!options.output.empty() && options.timing.mode != AssemblyMode::kFull)
    fail(ExitCode::kUsage, "--output needs --mode full (other modes do not assemble a complete Jacobian)");
  const bool validate = options.validate && options.timing.mode == AssemblyMode::kFull;
  const Note note = progress_note(options.quiet);

  // ---- inputs and the reference: a stored Jacobian or the CPU reference computed here -------------
  const PreparedMesh mesh = prepare_mesh(options.mesh, options.mesh, options.state, "", note);
  std::optional<ReferenceJacobian> reference;
  if (validate)
    reference = options.reference.empty() ? compute_reference(mesh, note) : read_reference(options.reference, note);

  // ---- device ceilings, measured once when a GPU variant runs ------------------------------------
  std::optional<DeviceCeilings> device;
  for (const auto& name : names)
    if (Registry::instance().create(name)->info().backend == Backend::kCuda) device = probe_device();
  if (device && note)
    note(fmt::format("device: {}, copy {:.0f} GB/s, FP64 {:.0f} GFLOP/s (measured)", device->name,
                     device->copy_bandwidth_gbs, device->fp64_gflops));

  // ---- variants ------------------------------------------------------------------------------------
  std::vector<RunRecord> records;
  bool all_passed = true;
  for (const auto& name : names) {
    if (note)
      note(fmt::format("running {} ({} warm-up + {} timed, mode {})", name, options.timing.warmup, options.timing.reps,
                       options.mode));
    const std::unique_ptr<Variant> variant = setup_variant(name, mesh);
    const CaseRequest request{name, options.timing, reference ? &*reference : nullptr, options.tolerances};
    Jacobian result;
    RunRecord record = run_case(*variant, mesh, request, device, options.output.empty() ? nullptr : &result);
    if (record.validated && !record.comparison.same_pattern)
      fmt::print(stderr, "{}: pattern differs from the reference: {}\n", name, record.comparison.pattern_message);
    all_passed = all_passed && (!record.validated || record.comparison.passed);
    if (!options.output.empty()) {
      write_jacobian(
          options.output, mesh.pattern, result,
          JacobianFileInfo{name, options.mesh, mesh.state_file, fmt::format("{} ({})", kVersion, kGitRevision)});
      if (note) note(fmt::format("wrote {}", options.output));
    }
    records.push_back(std::move(record));
  }

  // ---- report (on stderr when CSV or JSON goes to standard output) ------------------------------------
  std::FILE* const table = options.csv == kStandardOutput || options.json == kStandardOutput ? stderr : stdout;
  fmt::print(table, "\nmesh {}: {} nodes, {} edges, {} off-diagonal blocks\n", options.mesh, mesh.summary.n_nodes,
             mesh.summary.n_edges, mesh.summary.n_offdiag_blocks);
  fmt::print(table, "{}", format_table(records));
  if (validate)
    fmt::print(table, "tolerances: Adiag {:.0e}, Aoff {:.0e} (max|A - R| / max|R|); reference: {}\n",
               options.tolerances.adiag, options.tolerances.aoff, reference->source);
  if (!options.csv.empty()) write_text_output(options.csv, format_csv(records, device));
  if (!options.json.empty()) write_text_output(options.json, format_json(records, device));
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
      "run",
      "Assemble the Jacobian of a mesh and state with one or more variants, time it (CUDA events for GPU "
      "variants) and validate it against the CPU reference or a stored Jacobian. Prints a table; writes "
      "CSV/JSON and the Jacobian on request. Exit code 1 when a validation fails.");
  add_config_option(*run_app);
  run_app->add_option("--mesh", options->mesh, "edge mesh file (.h5, format fluxjac-edge-mesh)");
  run_app->add_option("--state", options->state, "state file (default: the state in the mesh file)");
  run_app
      ->add_option("--variant", options->variants,
                   "variant name(s), comma-separated or repeated, or 'all' (see 'fluxjac list')")
      ->delimiter(',')
      ->capture_default_str();
  run_app->add_option("--warmup", options->timing.warmup, "untimed runs before timing")->capture_default_str();
  run_app->add_option("--reps", options->timing.reps, "timed repetitions (min/median/max reported)")
      ->capture_default_str();
  run_app
      ->add_option("--mode", options->mode,
                   "timed region: full, compute-only (scatter switched off) or scatter-only (flux switched "
                   "off) — the paper's Table IV split; validation needs full")
      ->check(CLI::IsMember({"full", "compute-only", "scatter-only"}))
      ->capture_default_str();
  run_app
      ->add_option("--assembly", options->assembly,
                   "GPU assembly: node (each node sums its incident edges' own-side blocks: no atomics, "
                   "deterministic Adiag), edge (the paper's design: per-edge blocks, atomics into Adiag) or auto "
                   "(each variant's faster one, shown by 'fluxjac list')")
      ->check(CLI::IsMember({"auto", "node", "edge"}))
      ->capture_default_str();
  run_app
      ->add_option("--edges-per-block", options->timing.edges_per_block,
                   "GPU tuning: edges per thread block (edge assembly), or at most this many incident edges per block in whole rows (node assembly); "
                   "0 = the variant's default")
      ->capture_default_str();
  run_app->add_flag("--validate,!--no-validate", options->validate, "compare with the reference (default on)");
  run_app->add_option("--reference", options->reference,
                      "stored Jacobian (.h5 from --output) to validate against instead of the CPU reference");
  run_app
      ->add_option("--adiag-tolerance", options->tolerances.adiag, "pass if max|A-R|/max|R| of Adiag is at most this")
      ->capture_default_str();
  run_app->add_option("--aoff-tolerance", options->tolerances.aoff, "pass if max|A-R|/max|R| of Aoff is at most this")
      ->capture_default_str();
  run_app->add_option("--output", options->output,
                      "write the assembled Jacobian (.h5, block-CSR; one variant); never over an input file");
  run_app->add_option("--csv", options->csv,
                      "write one CSV row per variant ('-': standard output, the table then goes to stderr)");
  run_app->add_option("--json", options->json,
                      "write results and device/build metadata as JSON ('-': standard output, the table then goes "
                      "to stderr)");
  run_app->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
  run_app->callback([&action, options, run_app] {
    action = [options, run_app] {
      apply_config_file(*run_app);
      check_output_paths(
          {{"--config", config_file_path(*run_app)},
           {"--mesh", options->mesh},
           {"--state", options->state},
           {"--reference", options->reference}},
          {{"--output", options->output}, {"--csv", options->csv, true}, {"--json", options->json, true}});
      return run(*options);
    };
  });
}

}  // namespace fluxjac
