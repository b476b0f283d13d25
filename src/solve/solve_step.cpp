#include "solve/solve_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "part/ghost_exchange.hpp"
#include "part/owned_rows.hpp"
#include "solve/block_jacobi.hpp"
#include "solve/block_system.hpp"
#include "solve/multicolor_gs.hpp"
#include "util/error.hpp"
#include "util/note.hpp"

namespace fluxjac {
void check_solve_options(const SolveOptions& options) {
  if (!(options.cfl > 0.0) || !std::isfinite(options.cfl))
    fail(ExitCode::kUsage, "--cfl {}: the CFL number must be positive and finite (e.g. 10, 100, 1000)", options.cfl);
  if (options.krylov.restart < 1)
    fail(ExitCode::kUsage, "--restart {}: FGMRES keeps at least 1 basis vector (e.g. 30)", options.krylov.restart);
  if (!(options.krylov.tolerance > 0.0 && options.krylov.tolerance < 1.0))
    fail(ExitCode::kUsage, "--tolerance {}: a relative residual tolerance is between 0 and 1 (e.g. 1e-8)",
         options.krylov.tolerance);
  if (options.krylov.max_iterations < 1)
    fail(ExitCode::kUsage, "--max-iterations {}: at least 1", options.krylov.max_iterations);
  if (options.preconditioner != kBlockJacobi && options.preconditioner != kMulticolorGaussSeidel)
    fail(ExitCode::kUsage,
         "--preconditioner {}: the preconditioners are: {} (block Jacobi), {} (multicolor block Gauss-Seidel)",
         options.preconditioner, kBlockJacobi, kMulticolorGaussSeidel);
  if (options.sweeps < 1 || options.sweeps > 100)
    fail(ExitCode::kUsage, "--sweeps {}: Gauss-Seidel sweeps per application, 1 to 100", options.sweeps);
}

void apply_aoff_precision(Jacobian& jacobian, AoffPrecision precision) {
  if (precision == AoffPrecision::kF64 && jacobian.aoff_f64.size() != jacobian.aoff.size())
    fail(ExitCode::kUsage,
         "--aoff-precision f64: only the CPU reference assembles Aoff in float64: give --variant reference (or f32, "
         "bf16)");
  if (precision != AoffPrecision::kBf16) return;
  if (jacobian.aoff_f64.size() != jacobian.aoff.size()) return round_to_bf16(jacobian.aoff);
  for (std::size_t k = 0; k < jacobian.aoff.size(); ++k) jacobian.aoff[k] = round_to_bf16(jacobian.aoff_f64[k]);
}

void check_solve_inputs(const JacobianPattern& pattern, const Jacobian& jacobian, Orientation orientation,
                        const SolveOptions& options, const RankLayout* layout) {
  check_solve_options(options);
  if (options.aoff_precision == AoffPrecision::kF64 && jacobian.aoff_f64.size() != jacobian.aoff.size())
    fail(ExitCode::kUsage, "--aoff-precision f64: the Jacobian has no float64 Aoff (the CPU reference assembles it)");
  if (orientation != Orientation::kA) fail(ExitCode::kUsage, "the solve needs A = dR/dQ, not A^T: drop --transpose");
  const auto values = static_cast<std::size_t>(pattern.n_nodes) * kBlock;
  if (jacobian.residual.size() != values)
    fail(ExitCode::kRuntime, "the solve needs the residual of the assembly ({} values for {} nodes)",
         jacobian.residual.size(), pattern.n_nodes);
  const std::int64_t rows = layout ? layout->owned_count() : pattern.n_nodes;
  for (std::int64_t t = 0; t < rows; ++t) {
    const node_index i = layout ? layout->owned_node(t) : static_cast<node_index>(t);
    for (int component = 0; component < kBlock; ++component) {
      const double value = jacobian.residual[static_cast<std::size_t>(i) * kBlock + component];
      if (!std::isfinite(value))
        fail(ExitCode::kInvalidInput, "node {}: residual component {} is {}: the state gives no finite right-hand side",
             layout ? layout->global_id(i) : i, component, value);
    }
  }
}

SolveOutcome solve_step(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                        const Jacobian& jacobian, Orientation orientation, const SolveOptions& options,
                        const SolveRanks& ranks) {
  const RankLayout* layout = ranks.distributed() ? ranks.layout : nullptr;
  check_solve_inputs(pattern, jacobian, orientation, options, layout);

  SolveOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  const std::vector<double> shift = local_time_step_shift(mesh, state, options.cfl);
  const BlockSystem system{pattern, jacobian, shift,
                           options.aoff_precision == AoffPrecision::kF64 ? &jacobian.aoff_f64 : nullptr, layout};
  const BlockJacobi jacobi(system);
  std::optional<MulticolorGaussSeidel> gauss_seidel;
  if (options.preconditioner == kMulticolorGaussSeidel) gauss_seidel.emplace(system, jacobi.inverse(), options.sweeps);
  // Many ranks: x spread over the local nodes before each product, its ghost rows from their owners.
  std::vector<double> local;
  std::optional<GhostExchange> exchange;
  if (!system.all_nodes()) {
    local.resize(static_cast<std::size_t>(pattern.n_nodes) * kBlock);
    exchange.emplace(*ranks.comm, layout->halo);
    exchange->prepare(StateBuffer{local.data(), pattern.n_nodes, false});
  }
  outcome.setup_ms = 1e3 * seconds_since(start);

  const auto values = static_cast<std::size_t>(system.rows());
  std::vector<double> rhs(values);
  outcome.shift.resize(static_cast<std::size_t>(system.row_nodes()));
  for (std::int64_t t = 0; t < system.row_nodes(); ++t) {
    const std::int64_t i = system.row_node(t);
    outcome.shift[t] = shift[i];
    for (int r = 0; r < kBlock; ++r) rhs[kBlock * t + r] = -jacobian.residual[kBlock * i + r];
  }
  double exchange_ms = 0.0;
  const LinearMap product = [&](const double* x, double* y) {
    if (system.all_nodes()) return system.multiply(x, y);
    for (std::int64_t t = 0; t < system.row_nodes(); ++t)
      std::copy_n(x + kBlock * t, kBlock, &local[kBlock * static_cast<std::size_t>(system.row_node(t))]);
    exchange_ms += exchange->refresh(StateBuffer{local.data(), pattern.n_nodes, false});
    system.multiply(local.data(), y);
  };
  outcome.delta.assign(values, 0.0);
  start = std::chrono::steady_clock::now();
  HostSpace space(values, ranks.comm);
  outcome.krylov = fgmres(
      space, product,
      [&](const double* r, double* z) { gauss_seidel ? gauss_seidel->apply(r, z) : jacobi.apply(r, z); }, rhs.data(),
      outcome.delta.data(), options.krylov);
  outcome.solve_ms = 1e3 * seconds_since(start);
  outcome.exchange_ms = exchange_ms;
  outcome.reduction_ms = space.reduction_ms();
  outcome.relative_residual = true_relative_residual(space, product, outcome.delta.data(), rhs.data());

  std::vector<double> y(values), samples;
  for (int k = 0; k < 5; ++k) {
    start = std::chrono::steady_clock::now();
    product(outcome.delta.data(), y.data());
    samples.push_back(1e3 * seconds_since(start));
  }
  std::nth_element(samples.begin(), samples.begin() + 2, samples.end());
  outcome.product_ms = samples[2];
  return outcome;
}

void write_solve_file(const std::string& path, const JacobianPattern& pattern, const Jacobian& jacobian,
                      const JacobianFileInfo& info, const SolveOptions& options, const SolveOutcome& outcome,
                      const SolveRanks& ranks) {
  const bool f64 = options.aoff_precision == AoffPrecision::kF64;
  const RankLayout whole = RankLayout::whole_mesh(pattern.n_nodes, 0);
  const RankLayout& layout = ranks.distributed() ? *ranks.layout : whole;
  // M's Aoff as the solve used it, in float64 (not the file's float32 /jacobian/aoff): the rows' blocks in order,
  // which on one process are the Jacobian's own.
  std::vector<double> aoff_f64;
  if (f64 && !layout.is_whole_mesh())
    for (std::int64_t t = 0; t < layout.owned_count(); ++t) {
      const node_index i = layout.owned_node(t);
      aoff_f64.insert(aoff_f64.end(), jacobian.aoff_f64.begin() + pattern.row_ptr[i] * kBlockEntries,
                      jacobian.aoff_f64.begin() + pattern.row_ptr[i + 1] * kBlockEntries);
    }
  RowExtras extras;
  extras.create = [&](const h5::File& file, std::int64_t n_nodes, std::int64_t nnz) {
    h5::create_group(file, "/solve");
    h5::create_dataset<double>(file, "/solve/shift", {n_nodes});
    h5::create_dataset<double>(file, "/solve/delta", {n_nodes, kBlock});
    if (f64) h5::create_dataset<double>(file, "/solve/aoff_f64", {nnz, kBlock, kBlock});
    h5::write_attribute(file, "/solve", "cfl", options.cfl);
    h5::write_attribute(file, "/solve", "preconditioner", options.preconditioner);
    h5::write_attribute(file, "/solve", "sweeps",
                        std::int64_t{options.preconditioner == kMulticolorGaussSeidel ? options.sweeps : 0});
    h5::write_attribute(file, "/solve", "restart", std::int64_t{options.krylov.restart});
    h5::write_attribute(file, "/solve", "tolerance", options.krylov.tolerance);
    h5::write_attribute(file, "/solve", "iterations", std::int64_t{outcome.krylov.iterations});
    h5::write_attribute(file, "/solve", "relative_residual", outcome.relative_residual);
    h5::write_attribute(file, "/solve", "aoff_precision", std::string(to_string(options.aoff_precision)));
  };
  extras.write = [&](const h5::File& file, const std::vector<h5::RowRange>& rows,
                     const std::vector<h5::RowRange>& blocks) {
    h5::write_rows(file, "/solve/shift", rows, outcome.shift);
    h5::write_rows(file, "/solve/delta", rows, outcome.delta);
    if (f64) h5::write_rows(file, "/solve/aoff_f64", blocks, layout.is_whole_mesh() ? jacobian.aoff_f64 : aoff_f64);
  };
  write_owned_rows(ranks.comm ? *ranks.comm : Communicator::world(), path, layout, pattern, jacobian, info, extras);
}

}  // namespace fluxjac
