#include "solve/block_system.hpp"

#include <cmath>

#include "physics/gas.hpp"
#include "util/error.hpp"

namespace fluxjac {

std::vector<double> local_time_step_shift(const EdgeMesh& mesh, const FlowState& state, double cfl) {
  const auto n = static_cast<std::size_t>(mesh.n_nodes);
  // Each node's velocity and speed of sound, from its primitive state (the flux's conversion, gamma = 1.4).
  std::vector<double> speed_of_sound(n), velocity(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const Primitive<double> q = primitive_from_conservative(&state.Q[kBlock * i]);
    if (!(q.rho > 0.0) || !(q.p > 0.0) || !std::isfinite(q.rho) || !std::isfinite(q.p))
      fail(ExitCode::kInvalidInput,
           "node {}: density {} and pressure {}: the time step needs both positive and finite (a state of physical "
           "values)",
           i, q.rho, q.p);
    velocity[3 * i] = q.u, velocity[3 * i + 1] = q.v, velocity[3 * i + 2] = q.w;
    speed_of_sound[i] = std::sqrt(kGamma * q.p / q.rho);
  }
  std::vector<double> shift(n, 0.0);
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const double* normal = &mesh.normals[3 * e];
    for (const node_index i : {mesh.left(e), mesh.right(e)}) {
      const double* u = &velocity[3 * static_cast<std::size_t>(i)];
      const double un = u[0] * normal[0] + u[1] * normal[1] + u[2] * normal[2];
      shift[i] += mesh.areas[e] * (std::abs(un) + speed_of_sound[i]) / cfl;
    }
  }
  return shift;
}

void BlockSystem::multiply(const double* x, double* y) const {
  const std::int64_t n = row_nodes();
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int64_t i = row_node(t);
    double sum[kBlock];
    const double* xi = x + kBlock * i;
    const double* diagonal = &jacobian.adiag[static_cast<std::size_t>(i) * kBlockEntries];
    for (int r = 0; r < kBlock; ++r) {
      sum[r] = shift[i] * xi[r];
      for (int c = 0; c < kBlock; ++c) sum[r] += diagonal[kBlock * r + c] * xi[c];
    }
    for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
      const double* xj = x + kBlock * static_cast<std::int64_t>(pattern.col_idx[k]);
      for (int r = 0; r < kBlock; ++r)
        for (int c = 0; c < kBlock; ++c) sum[r] += aoff(k, kBlock * r + c) * xj[c];
    }
    for (int r = 0; r < kBlock; ++r) y[kBlock * t + r] = sum[r];
  }
}

}  // namespace fluxjac
