// fluxjac solve: one implicit pseudo-time step (docs/design.md, "The solve"): assemble the Jacobian and its residual
// with a variant, form M = diag(s) (x) I5 + Adiag + Aoff with the local time step's shift at a CFL number, solve
// M dQ = -R with FGMRES and block Jacobi, report and write the Jacobian file with /solve.
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/device_probe.hpp"
#include "bench/mesh_source.hpp"
#include "bench/run_case.hpp"
#include "bench/solve_case.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "ranks/communicator.hpp"
#include "reference/reference.hpp"
#include "registry/registry.hpp"
#include "solve/solve_step.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/output_paths.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

struct SolveCommandOptions {
  std::string mesh, state, variant, output, json;
  std::string cache = default_mesh_cache();
  std::string aoff_precision = "f32";  ///< parsed into solve.aoff_precision
  SolveOptions solve;
  int warmup = 1, reps = 3;
  bool quiet = false;
};

/// The table row of a solve, and its JSON document (schema fluxjac-solve).
void report(const SolveCommandOptions& options, const PreparedMesh& mesh, const RunRecord& assembly,
            const SolveOutcome& outcome) {
  const KrylovResult& krylov = outcome.krylov;
  const double per_iteration = krylov.iterations > 0 ? outcome.solve_ms / krylov.iterations : 0.0;
  fmt::print("{:<10} {:>7} {:<9} {:<4} {:>12} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}  {}\n", "variant", "cfl", "pc",
             "aoff", "assembly ms", "setup ms", "iterations", "ms/iter", "product ms", "solve ms", "rel. res.",
             "converged");
  fmt::print("{:<10} {:>7g} {:<9} {:<4} {:>12.4f} {:>9.3f} {:>10} {:>9.3f} {:>10.4f} {:>10.3f} {:>10.2e}  {}\n",
             assembly.variant.name, options.solve.cfl, options.solve.preconditioner,
             to_string(options.solve.aoff_precision), assembly.assembly_ms.median, outcome.setup_ms, krylov.iterations,
             per_iteration, outcome.product_ms, outcome.solve_ms, outcome.relative_residual,
             krylov.converged ? "yes" : "NO");
  // --cusparse: cuSPARSE's product of the same M and x per precision, and how many times faster fluxjac's is.
  if (!outcome.cusparse.empty())
    fmt::print("{:<24} {:>10} {:>8} {:>10}  {}\n", "cusparse", "product ms", "speedup", "rel. diff.",
               "types (cusparseSpMV, BSR)");
  for (const CusparseProduct& product : outcome.cusparse) {
    if (product.product_ms)
      fmt::print("{:<24} {:>10.4f} {:>7.2f}x {:>10.2e}  matrix {}, vectors {}, compute {}\n", product.precision,
                 *product.product_ms, *product.product_ms / outcome.product_ms, product.relative_difference,
                 product.matrix, product.vectors, product.compute);
    else
      fmt::print("{:<24} {:>10} {:>8} {:>10}  none accepted\n", product.precision, "-", "-", "-");
    for (const std::string& refusal : product.refused) fmt::print("  refused: {}\n", refusal);
  }
  if (options.json.empty()) return;
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const double value : krylov.history) history.push_back(value);
  nlohmann::ordered_json document = {
      {"schema", "fluxjac-solve"},
      {"schema_version", 1},
      {"fluxjac", {{"version", kVersion}, {"git_revision", kGitRevision}}},
      {"mesh", mesh.summary.name},
      {"n_nodes", mesh.summary.n_nodes},
      {"n_edges", mesh.summary.n_edges},
      {"ranks", Communicator::world().size()},
      {"variant", assembly.variant.name},
      {"assembly_ms", assembly.assembly_ms.median},
      {"residual_error", std::isfinite(assembly.comparison.residual_error)
                             ? nlohmann::ordered_json(assembly.comparison.residual_error)
                             : nlohmann::ordered_json()},
      {"cfl", options.solve.cfl},
      {"preconditioner", options.solve.preconditioner},
      {"sweeps", options.solve.preconditioner == kMulticolorGaussSeidel ? options.solve.sweeps : 0},
      {"restart", options.solve.krylov.restart},
      {"tolerance", options.solve.krylov.tolerance},
      {"max_iterations", options.solve.krylov.max_iterations},
      {"aoff_precision", to_string(options.solve.aoff_precision)},
      {"solved_on", assembly.variant.backend == Backend::kCuda ? "gpu" : "cpu"},
      {"setup_ms", outcome.setup_ms},
      {"iterations", krylov.iterations},
      {"converged", krylov.converged},
      {"solve_ms", outcome.solve_ms},
      {"ms_per_iteration", per_iteration},
      {"product_ms", outcome.product_ms},
      {"exchange_ms", outcome.exchange_ms},
      {"reduction_ms", outcome.reduction_ms},
      {"relative_residual", outcome.relative_residual}};
  if (!outcome.cusparse.empty()) {
    nlohmann::ordered_json ms, speedup, difference, types, refused = nlohmann::ordered_json::object();
    for (const CusparseProduct& product : outcome.cusparse) {
      const std::string& key = product.precision;
      const auto if_run = [&](nlohmann::ordered_json value) {
        return product.product_ms ? value : nlohmann::ordered_json();
      };
      const double product_ms = product.product_ms.value_or(0.0);
      ms[key] = if_run(product_ms);
      speedup[key] = if_run(product_ms / outcome.product_ms);
      difference[key] = if_run(product.relative_difference);
      types[key] = if_run({{"matrix", product.matrix}, {"vectors", product.vectors}, {"compute", product.compute}});
      if (!product.refused.empty()) refused[key] = product.refused;
    }
    document["cusparse_ms"] = ms;
    document["cusparse_speedup"] = speedup;
    document["cusparse_relative_difference"] = difference;
    document["cusparse_types"] = types;
    document["cusparse_refused"] = refused;
  }
  document["history"] = history;
  write_text_output(options.json, document.dump(2) + "\n");
}

int solve(const SolveCommandOptions& options) {
  check_solve_options(options.solve);
  const Communicator& comm = Communicator::world();
  // Many ranks: rank 0 speaks for all (progress, table, JSON); the file is written by every rank, its rows each.
  const Note note = options.quiet || !comm.is_root()
                        ? Note()
                        : Note([](const std::string& line) { fmt::print(stderr, "{}\n", line); });

  // The variant: hd where a GPU is, else the CPU reference, said so.
  std::string variant = options.variant;
  if (variant.empty()) {
    variant = gpu_available() ? "hd" : "reference";
    if (variant == "reference")
      say(note, fmt::format("no GPU ({}): the CPU reference assembles", gpu_unavailable().brief));
  }
  const std::string refusal = aoff_precision_refusal(variant, options.solve.aoff_precision);
  if (!refusal.empty()) fail(ExitCode::kUsage, "--aoff-precision f64: {}", refusal);
  // --cusparse: cuSPARSE's product is timed beside the GPU solve's.
  const VariantInfo* info = Registry::instance().find(variant);
  if (options.solve.cusparse && info && info->backend != Backend::kCuda) {
    if (options.variant.empty())
      fail(ExitCode::kRuntime, "--cusparse times cuSPARSE's product on the GPU: no GPU here ({})",
           gpu_unavailable().brief);
    fail(ExitCode::kUsage,
         "--cusparse times cuSPARSE's product on the GPU, but variant {} solves on the host: choose a GPU variant "
         "(e.g. --variant hd)",
         variant);
  }
  if (options.solve.cusparse && comm.distributed())
    fail(ExitCode::kUsage, "--cusparse times one GPU's product of the whole M: start the solve without mpirun");
  const MeshSource source = resolve_mesh_source(options.mesh, options.cache);
  const PreparedMesh mesh = prepare_mesh_source(source, options.state, note, comm, PartBalance::kSolve);
  const ReferenceJacobian reference = compute_reference(mesh, Orientation::kA, note);

  auto assembly_variant = setup_variant(variant, mesh);
  CaseRequest request;
  request.variant = variant;
  request.assembly.residual = true;
  request.assembly.aoff_precision = assembly_precision(options.solve.aoff_precision);
  request.timing.warmup = options.warmup;
  request.timing.reps = options.reps;
  request.reference = &reference;
  Jacobian jacobian;
  const RunRecord assembly = run_case(*assembly_variant, mesh, request, std::nullopt, &jacobian);
  if (!assembly.comparison.passed)
    fail(ExitCode::kValidationFailed,
         "{}: the assembled Jacobian fails validation against the CPU reference (Adiag {:.2e}, Aoff {:.2e}, residual "
         "{:.2e}): nothing solved",
         variant, assembly.comparison.adiag_error, assembly.comparison.aoff_error, assembly.comparison.residual_error);
  say(note, fmt::format("assembled with {} in {:.4f} ms (median of {}), residual error {:.1e}", variant,
                        assembly.assembly_ms.median, options.reps, assembly.comparison.residual_error));
  // Aoff in the precision asked, then the solve where the variant assembled (a GPU variant's on the GPU). Many
  // ranks: each solves for its owned rows (docs/design.md, "The solve", "Many ranks").
  if (comm.distributed() && options.solve.preconditioner == kMulticolorGaussSeidel)
    say(note, mcgs_on_ranks_note(fmt::format("{} ranks", comm.size())));
  const SolveOutcome outcome = solve_assembled(mesh, assembly.variant, jacobian, options.solve);
  const SolveRanks ranks{&comm, &mesh.layout};
  if (comm.distributed())
    say(note,
        fmt::format("rank 0 of {}: of the solve's {:.1f} ms, {:.1f} ms in the products' halo exchanges and {:.1f} "
                    "ms in the sums over the ranks",
                    comm.size(), outcome.solve_ms, outcome.exchange_ms, outcome.reduction_ms));
  if (comm.is_root()) report(options, mesh, assembly, outcome);
  if (!options.output.empty()) {
    JacobianFileInfo info{variant, mesh.summary.file, mesh.state_file, fmt::format("{} ({})", kVersion, kGitRevision)};
    info.aoff_precision = request.assembly.aoff_precision;
    write_solve_file(options.output, mesh.pattern, jacobian, info, options.solve, outcome, ranks);
    say(note, fmt::format("wrote {}", options.output));
  }
  return outcome.krylov.converged ? 0 : static_cast<int>(ExitCode::kValidationFailed);
}

}  // namespace

void add_solve_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<SolveCommandOptions>();
  CLI::App* command = add_command(
      app,
      {"solve",
       "Solve one implicit pseudo-time step with the Jacobian: assemble it and the residual R with a variant, form "
       "M = V/dt I + Adiag + Aoff with the local time step at a CFL number, and solve M dQ = -R with FGMRES, "
       "preconditioned by block Jacobi or multicolor Gauss-Seidel, where the variant assembled (a GPU variant's on "
       "the GPU; docs/design.md, \"The solve\"); prints a row (assembly, set-up, iterations, time per "
       "iteration, product, the true relative residual |M dQ + R| / |R| in float64); writes the Jacobian file with "
       "/solve (shift, delta) and a JSON document with the convergence history. Under mpirun each rank assembles and "
       "solves for its part's rows (the product's ghost values by the halo exchange, dot products summed over the "
       "ranks): block Jacobi takes one process's iterations; mcgs sweeps each rank's own nodes. Exit code 1 when the "
       "solve does not reach the tolerance or the assembly fails validation.",
       "Examples:\n"
       "  fluxjac solve --mesh box.h5 --cfl 100                       # hd on a GPU, else the CPU reference\n"
       "  fluxjac solve --mesh mixed:30:rcm --variant reference --cfl 1000 --tolerance 1e-10 -o step.h5\n"
       "  fluxjac solve --mesh box.h5 --json solve.json                # with the convergence history\n"
       "  mpirun -np 2 fluxjac solve --mesh mixed:100:rcm -o step.h5   # 2 GPUs: one file of all rows"},
      action, [options](const CLI::App& parsed) {
        options->solve.aoff_precision = parse_named<AoffPrecision>(options->aoff_precision, "--aoff-precision");
        const std::vector<InputPath> inputs{
            {"--config", config_file_path(parsed)}, {"--mesh", options->mesh}, {"--state", options->state}};
        check_output_paths(inputs, {{"--output", options->output}, {"--json", options->json, true}});
        return solve(*options);
      });
  add_config_option(*command);
  command->add_option("--mesh", options->mesh, "edge mesh file (.h5) or a generator spec kind:n:order[:seed]")
      ->required();
  command->add_option("--state", options->state, "state file (default: the state in the mesh file)");
  command->add_option("--variant", options->variant,
                      "the variant that assembles (default: hd where a GPU is, else the CPU reference)");
  command->add_option("--cfl", options->solve.cfl, "CFL number of the local time step (positive)")
      ->capture_default_str();
  command
      ->add_option("--preconditioner", options->solve.preconditioner,
                   "pbjacobi: block Jacobi (the 5x5 diagonal blocks of M inverted); mcgs: multicolor block "
                   "Gauss-Seidel, --sweeps sweeps over the colors of the node graph (FUN3D's point-implicit scheme)")
      ->capture_default_str();
  command
      ->add_option("--aoff-precision", options->aoff_precision,
                   "the precision Aoff enters M in: f32 as assembled; bf16, assembled in bfloat16 (8 significant "
                   "bits; a GPU variant's kernels store it); f64, the CPU reference's values before rounding "
                   "(--variant reference, host solve)")
      ->capture_default_str();
  command->add_option("--sweeps", options->solve.sweeps, "Gauss-Seidel sweeps per application of mcgs (1 to 100)")
      ->capture_default_str();
  command->add_option("--restart", options->solve.krylov.restart, "FGMRES restart length m (1 or more)")
      ->capture_default_str();
  command->add_option("--tolerance", options->solve.krylov.tolerance, "relative residual to reach, in (0, 1)")
      ->capture_default_str();
  command->add_option("--max-iterations", options->solve.krylov.max_iterations, "FGMRES iterations at most")
      ->capture_default_str();
  command->add_flag("--cusparse", options->solve.cusparse,
                    "after a GPU solve, time cuSPARSE's product of the same M (cusparseSpMV on one BSR matrix) in "
                    "three precisions beside fluxjac's: float32 matrix with float64 vectors, float64, float32; needs "
                    "device memory for the largest of them (float64: 200 bytes per block of M)");
  command->add_option("--warmup", options->warmup, "untimed assemblies first")->capture_default_str();
  command->add_option("--reps", options->reps, "timed assemblies (the median is reported)")->capture_default_str();
  command->add_option("--cache", options->cache, "folder of generated meshes")->capture_default_str();
  command->add_option("-o,--output", options->output, "the Jacobian file with /solve (docs/formats.md)");
  command->add_option("--json", options->json, "the solve's figures and convergence history ('-' for stdout)");
  command->add_flag("-q,--quiet", options->quiet, "no progress lines on stderr");
}

}  // namespace fluxjac
