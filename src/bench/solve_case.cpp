#include "bench/solve_case.hpp"

#include <fmt/format.h>

#include "reference/reference.hpp"
#include "solve/device_solve.hpp"
#include "util/error.hpp"

namespace fluxjac {

std::vector<SolveOptions> solve_cases(const SolveSweep& sweep) {
  if (!sweep.asked()) return {};
  const SolveOptions defaults;
  const std::vector<double> cfls = sweep.cfls.empty() ? std::vector<double>{defaults.cfl} : sweep.cfls;
  const std::vector<std::string> preconditioners =
      sweep.preconditioners.empty() ? std::vector<std::string>{defaults.preconditioner} : sweep.preconditioners;
  std::vector<AoffPrecision> precisions;
  for (const std::string& name : sweep.aoff_precisions)
    precisions.push_back(parse_named<AoffPrecision>(name, "--solve-aoff-precision"));
  if (precisions.empty()) precisions.push_back(defaults.aoff_precision);
  std::vector<SolveOptions> cases;
  // A CFL series of one preconditioner and precision runs together, so that the table reads down it.
  for (const std::string& preconditioner : preconditioners)
    for (const AoffPrecision precision : precisions)
      for (const double cfl : cfls) {
        SolveOptions options = sweep.options;
        options.cfl = cfl;
        options.preconditioner = preconditioner;
        options.aoff_precision = precision;
        options.cusparse = false;  // `fluxjac solve --cusparse` times cuSPARSE; a sweep does not
        try {
          check_solve_options(options);  // the solve command's rules and words, its options named --solve-NAME
        } catch (const Error& error) {
          const std::string message = error.what();
          throw Error(message.rfind("--", 0) == 0 ? "--solve-" + message.substr(2) : message, error.code());
        }
        bool repeated = false;
        for (const SolveOptions& earlier : cases)
          repeated = repeated || (earlier.cfl == cfl && earlier.preconditioner == preconditioner &&
                                  earlier.aoff_precision == precision);
        if (!repeated) cases.push_back(options);
      }
  return cases;
}

std::string aoff_precision_refusal(const std::string& variant, AoffPrecision precision) {
  if (precision != AoffPrecision::kF64 || variant == "reference") return {};
  return fmt::format(
      "only the CPU reference assembles Aoff in float64, and variant {} does not: give --variant reference (or "
      "f32, bf16)",
      variant);
}

AoffPrecision assembly_precision(AoffPrecision solve_precision) {
  return solve_precision == AoffPrecision::kBf16 ? AoffPrecision::kBf16 : AoffPrecision::kF32;
}

std::string mcgs_on_ranks_note(const std::string& ranks) {
  return fmt::format(
      "mcgs on {}: each rank sweeps its own nodes (the ranks meet as in block Jacobi), so the iterations depend on "
      "the rank count",
      ranks);
}

SolveOutcome solve_assembled(const PreparedMesh& mesh, const VariantInfo& variant, Jacobian& jacobian,
                             const SolveOptions& options) {
  const std::string refusal = aoff_precision_refusal(variant.name, options.aoff_precision);
  if (!refusal.empty()) fail(ExitCode::kUsage, "f64: {}", refusal);
  // Aoff's precision for the solve: float64 from the reference's own values, bfloat16 rounded from them.
  if (options.aoff_precision == AoffPrecision::kF64)
    assemble_reference(mesh.mesh, mesh.state, mesh.pattern, jacobian, Orientation::kA, true, true);
  apply_aoff_precision(jacobian, options.aoff_precision);
  // Where the variant assembled: a GPU variant's Jacobian is solved on the GPU, the reference's on the host.
  const SolveRanks ranks{mesh.comm, &mesh.layout};
  return variant.backend == Backend::kCuda
             ? solve_step_on_device(mesh.mesh, mesh.state, mesh.pattern, jacobian, Orientation::kA, options, ranks)
             : solve_step(mesh.mesh, mesh.state, mesh.pattern, jacobian, Orientation::kA, options, ranks);
}

}  // namespace fluxjac
