#include "reference/emulated_assembly.hpp"

#include "assembly/block_signs.hpp"
#include "assembly/orientation.hpp"
#include "reference/host_variant.hpp"
#include "reference/reference.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

void emulate_edge_assembly(const VariantInfo& info, const EdgeMesh& mesh, const FlowState& state,
                           const JacobianPattern& pattern, Orientation orientation, Jacobian& jacobian) {
  double local[kLocalJacobianEntries], flux[kBlock];
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    info.emulate_edge_lanes(gather_edge(mesh, state, e), local, flux);
    scatter_local_jacobian(local, flux, mesh.left(e), mesh.right(e), pattern.slot_lr[e], pattern.slot_rl[e], jacobian,
                           orientation);
  }
}

void emulate_node_assembly(const VariantInfo& info, const EdgeMesh& mesh, const FlowState& state,
                           const JacobianPattern& pattern, Orientation orientation, Jacobian& jacobian) {
  // Each entry's edge seen from its row's node: entry (L, R) as stored, entry (R, L) with the sides swapped and the
  // normal flipped (what the GPU node map's faces hold).
  std::vector<EdgeInput> seen_from_row(static_cast<std::size_t>(pattern.nnz()));
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const EdgeInput edge = gather_edge(mesh, state, e);
    EdgeInput flipped = edge;
    for (int k = 0; k < kBlock; ++k) flipped.left[k] = edge.right[k], flipped.right[k] = edge.left[k];
    flipped.normal = edge.normal.flipped();
    seen_from_row[pattern.slot_lr[e]] = edge;
    seen_from_row[pattern.slot_rl[e]] = flipped;
  }
  const bool transposed = orientation == Orientation::kTransposed;
  const std::vector<block_offset> targets = node_entry_targets(pattern, orientation);
  std::vector<double> staged(static_cast<std::size_t>(pattern.nnz()) * kBlockEntries);
  std::vector<double> staged_flux(static_cast<std::size_t>(pattern.nnz()) * kBlock);
  // Each entry on its own (the sums below run in row order, so the result does not depend on the threads).
#pragma omp parallel for schedule(static)
  for (block_offset k = 0; k < pattern.nnz(); ++k)
    info.emulate_node_entry(seen_from_row[k], &staged[k * kBlockEntries], &staged_flux[k * kBlock]);
  for (std::int64_t row = 0; row < pattern.n_nodes; ++row) {
    for (int m = 0; m < kBlock && !jacobian.residual.empty(); ++m) {
      double sum = 0.0;
      for (block_offset k = pattern.row_ptr[row]; k < pattern.row_ptr[row + 1]; ++k) sum += staged_flux[k * kBlock + m];
      jacobian.residual[row * kBlock + m] = block_signs(0).diagonal * sum;
    }
    for (int component = 0; component < kBlockEntries; ++component) {
      double sum = 0.0;
      for (block_offset k = pattern.row_ptr[row]; k < pattern.row_ptr[row + 1]; ++k)
        sum += staged[k * kBlockEntries + computed_entry(component, transposed)];
      jacobian.adiag[row * kBlockEntries + component] = block_signs(0).diagonal * sum;
    }
    for (block_offset k = pattern.row_ptr[row]; k < pattern.row_ptr[row + 1]; ++k)
      for (int component = 0; component < kBlockEntries; ++component)
        jacobian.aoff[targets[k] * kBlockEntries + component] = static_cast<float>(
            block_signs(0).off_diagonal * staged[k * kBlockEntries + computed_entry(component, transposed)]);
  }
}

}  // namespace

void emulate_assembly(const VariantInfo& info, AssemblyStrategy strategy, const EdgeMesh& mesh, const FlowState& state,
                      const JacobianPattern& pattern, Orientation orientation, Jacobian& jacobian, bool with_residual) {
  if (!info.emulate_edge_lanes || !info.emulate_node_entry)
    fail(ExitCode::kUsage, "variant '{}' has no lanes to emulate (only GPU variants have)", info.name);
  jacobian.resize(pattern, with_residual);
  if (resolve_strategy(strategy, info) == AssemblyStrategy::kEdge)
    emulate_edge_assembly(info, mesh, state, pattern, orientation, jacobian);
  else
    emulate_node_assembly(info, mesh, state, pattern, orientation, jacobian);
}

// ---- NAME:cpu, the registered CPU emulation of every GPU variant ------------------------------------------
namespace {

class EmulatedVariant final : public HostVariant {
 public:
  using HostVariant::HostVariant;

  void prepare(const AssemblyOptions& options) override {
    if (options.mode != AssemblyMode::kFull)
      fail(ExitCode::kUsage, "variant '{}' runs only in mode 'full' (the Table IV split is the GPU kernels')",
           info_.name);
    options_ = options;
    HostVariant::prepare(options);
  }
  void assemble() override {
    emulate_assembly(info_, options_.strategy, *mesh_, state_, *pattern_, options_.orientation, jacobian_,
                     options_.residual);
  }

 private:
  AssemblyOptions options_;
};

const EmulationRegistrar registrar([](const VariantInfo& info) { return std::make_unique<EmulatedVariant>(info); });

}  // namespace
}  // namespace fluxjac
