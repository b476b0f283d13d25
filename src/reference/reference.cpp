#include "reference/reference.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "ad/dual.hpp"
#include "assembly/block_signs.hpp"
#include "assembly/orientation.hpp"
#include "physics/roe_flux.hpp"
#include "reference/host_variant.hpp"
#include "registry/registry.hpp"
#include "util/error.hpp"

namespace fluxjac {

EdgeInput gather_edge(const EdgeMesh& mesh, const FlowState& state, edge_index e) {
  EdgeInput edge;
  const node_index left = mesh.left(e), right = mesh.right(e);
  for (int k = 0; k < kBlock; ++k) {
    edge.left[k] = state.Q[static_cast<std::size_t>(left) * kBlock + k];
    edge.right[k] = state.Q[static_cast<std::size_t>(right) * kBlock + k];
  }
  edge.normal = {mesh.normals[3 * e], mesh.normals[3 * e + 1], mesh.normals[3 * e + 2]};
  edge.area = mesh.areas[e];
  return edge;
}

namespace {

/// The reference's per-edge work, in double or (for its work model) in CountingReal.
template <class Real>
void local_jacobian_dual10(const BasicEdgeInput<Real>& edge, Real local[kLocalJacobianEntries],
                           Real edge_flux[kBlock]) {
  using D = Dual<10, Real>;
  D left[kBlock], right[kBlock], flux[kBlock];
  for (int k = 0; k < kBlock; ++k) {
    left[k] = D(edge.left[k]);
    right[k] = D(edge.right[k]);
    left[k].d[k] = 1.0;
    right[k].d[kBlock + k] = 1.0;
  }
  roe_flux_conservative(left, right, edge.normal, flux);
  for (int side = 0; side < 2; ++side)
    for (int m = 0; m < kBlock; ++m)
      for (int k = 0; k < kBlock; ++k) local[local_entry(side, m, k)] = edge.area * flux[m].d[side * kBlock + k];
  for (int m = 0; m < kBlock; ++m) edge_flux[m] = edge.area * flux[m].v;
}

}  // namespace

void reference_local_jacobian(const EdgeInput& edge, double local[kLocalJacobianEntries], double flux[kBlock]) {
  local_jacobian_dual10(edge, local, flux);
}

void scatter_local_jacobian(const double local[kLocalJacobianEntries], const double flux[kBlock], node_index left,
                            node_index right, block_offset slot_lr, block_offset slot_rl, Jacobian& jacobian,
                            Orientation orientation) {
  const bool transposed = orientation == Orientation::kTransposed;
  const node_index node[2] = {left, right};
  const block_offset slot[2] = {slot_lr, slot_rl};  // the edge's off-diagonal slots (L, R) and (R, L)
  for (int side = 0; side < 2; ++side) {
    double* adiag = &jacobian.adiag[static_cast<std::size_t>(node[side]) * kBlockEntries];
    for (int i = 0; i < kBlockEntries; ++i)
      adiag[i] += block_signs(side).diagonal * local[side * kBlockEntries + computed_entry(i, transposed)];
    if (jacobian.residual.empty()) continue;
    double* residual = &jacobian.residual[static_cast<std::size_t>(node[side]) * kBlock];
    for (int m = 0; m < kBlock; ++m) residual[m] += block_signs(side).diagonal * flux[m];
  }
  for (int target = 0; target < 2; ++target) {
    const int side = off_diagonal_side(target, transposed);
    const std::size_t at = static_cast<std::size_t>(slot[target]) * kBlockEntries;
    for (int i = 0; i < kBlockEntries; ++i) {
      const double value = block_signs(side).off_diagonal * local[side * kBlockEntries + computed_entry(i, transposed)];
      jacobian.aoff[at + i] = static_cast<float>(value);
      if (!jacobian.aoff_f64.empty()) jacobian.aoff_f64[at + i] = value;
    }
  }
}

void assemble_reference(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                        Jacobian& jacobian, Orientation orientation, bool with_residual, bool with_aoff_f64) {
  jacobian.resize(pattern, with_residual, with_aoff_f64);
  // Edges in chunks: local Jacobians in parallel, then accumulated in edge order (deterministic).
  constexpr edge_index kChunk = 1 << 15;
  std::vector<double> locals(static_cast<std::size_t>(kChunk) * kLocalJacobianEntries);
  std::vector<double> fluxes(static_cast<std::size_t>(kChunk) * kBlock);
  for (edge_index first = 0; first < mesh.n_edges(); first += kChunk) {
    const edge_index count = std::min(kChunk, mesh.n_edges() - first);
#pragma omp parallel for schedule(static)
    for (edge_index i = 0; i < count; ++i)
      reference_local_jacobian(gather_edge(mesh, state, first + i), &locals[i * kLocalJacobianEntries],
                               &fluxes[i * kBlock]);
    for (edge_index i = 0; i < count; ++i) {
      const edge_index e = first + i;
      scatter_local_jacobian(&locals[i * kLocalJacobianEntries], &fluxes[i * kBlock], mesh.left(e), mesh.right(e),
                             pattern.slot_lr[e], pattern.slot_rl[e], jacobian, orientation);
    }
  }
}

int set_cpu_threads(int threads) {
#if defined(_OPENMP)
  // OpenMP keeps the default it read from OMP_NUM_THREADS at start-up; 0 restores it.
  static const int default_threads = omp_get_max_threads();
  omp_set_num_threads(threads > 0 ? threads : default_threads);
  return omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

std::vector<double> residual(const EdgeMesh& mesh, const std::vector<double>& Q) {
  std::vector<double> result(static_cast<std::size_t>(mesh.n_nodes) * kBlock, 0.0);
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const node_index left = mesh.left(e), right = mesh.right(e);
    double flux[kBlock];
    roe_flux_conservative(&Q[static_cast<std::size_t>(left) * kBlock], &Q[static_cast<std::size_t>(right) * kBlock],
                          FaceNormal{mesh.normals[3 * e], mesh.normals[3 * e + 1], mesh.normals[3 * e + 2]}, flux);
    for (int m = 0; m < kBlock; ++m) {
      result[static_cast<std::size_t>(left) * kBlock + m] += mesh.areas[e] * flux[m];
      result[static_cast<std::size_t>(right) * kBlock + m] -= mesh.areas[e] * flux[m];
    }
  }
  return result;
}

// ---- the registered 'reference' variant ---------------------------------------------------------
namespace {

class ReferenceVariant final : public HostVariant {
 public:
  using HostVariant::HostVariant;

  void setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) override {
    HostVariant::setup(mesh, state, pattern);
    jacobian_.resize(pattern, residual_);  // the output, allocated once (the timed loop allocates no more of it)
  }

  void prepare(const AssemblyOptions& options) override {
    if (options.mode != AssemblyMode::kFull)
      fail(ExitCode::kUsage, "variant 'reference' runs only in mode 'full' (it has no separate scatter)");
    orientation_ = options.orientation;
    if (options.residual != residual_) jacobian_.resize(*pattern_, options.residual);
    residual_ = options.residual;
    HostVariant::prepare(options);
  }
  void assemble() override { assemble_reference(*mesh_, state_, *pattern_, jacobian_, orientation_, residual_); }

 private:
  Orientation orientation_ = Orientation::kA;
  bool residual_ = false;
};

VariantInfo reference_info() {
  VariantInfo info;
  info.name = "reference";
  info.description = "CPU reference: multivariate dual of 10 in double, never tuned (OpenMP over edges)";
  info.backend = Backend::kCpu;
  info.threads_per_edge = 1;
  info.seeding = Seeding::kDirectConservative;
  const BasicEdgeInput<CountingReal> edge = counting_edge();
  CountingReal local[kLocalJacobianEntries], flux[kBlock];
  info.work = reference_variant_work(count_thread([&] { local_jacobian_dual10(edge, local, flux); }));
  return info;
}

const VariantRegistrar registrar(reference_info(),
                                 [](const VariantInfo& info) { return std::make_unique<ReferenceVariant>(info); });

}  // namespace
}  // namespace fluxjac
