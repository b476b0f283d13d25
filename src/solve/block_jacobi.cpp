#include "solve/block_jacobi.hpp"

#include <cmath>
#include <utility>

#include "util/error.hpp"

namespace fluxjac {
namespace {

/// inverse = block^-1 by Gauss-Jordan elimination with partial pivoting; false when a pivot is below the block's
/// largest entry times the float64 epsilon scaled by its size.
bool invert(const double block[kBlockEntries], double inverse[kBlockEntries]) {
  double a[kBlock][2 * kBlock];
  double largest = 0.0;
  for (int r = 0; r < kBlock; ++r)
    for (int c = 0; c < kBlock; ++c) {
      a[r][c] = block[kBlock * r + c];
      a[r][kBlock + c] = r == c ? 1.0 : 0.0;
      largest = std::max(largest, std::abs(a[r][c]));
    }
  const double smallest_pivot = largest * kBlock * 2.220446049250313e-16;
  for (int c = 0; c < kBlock; ++c) {
    int pivot = c;
    for (int r = c + 1; r < kBlock; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (!(std::abs(a[pivot][c]) > smallest_pivot)) return false;
    if (pivot != c)
      for (int k = 0; k < 2 * kBlock; ++k) std::swap(a[c][k], a[pivot][k]);
    const double scale = 1.0 / a[c][c];
    for (int k = 0; k < 2 * kBlock; ++k) a[c][k] *= scale;
    for (int r = 0; r < kBlock; ++r) {
      if (r == c || a[r][c] == 0.0) continue;
      const double factor = a[r][c];
      for (int k = 0; k < 2 * kBlock; ++k) a[r][k] -= factor * a[c][k];
    }
  }
  for (int r = 0; r < kBlock; ++r)
    for (int c = 0; c < kBlock; ++c) inverse[kBlock * r + c] = a[r][kBlock + c];
  return true;
}

}  // namespace

BlockJacobi::BlockJacobi(const BlockSystem& system)
    : inverse_(static_cast<std::size_t>(system.pattern.n_nodes) * kBlockEntries) {
  for (std::int64_t i = 0; i < system.pattern.n_nodes; ++i) {
    double block[kBlockEntries];
    for (int k = 0; k < kBlockEntries; ++k) block[k] = system.jacobian.adiag[i * kBlockEntries + k];
    for (int r = 0; r < kBlock; ++r) block[kBlock * r + r] += system.shift[i];
    if (!invert(block, &inverse_[i * kBlockEntries]))
      fail(ExitCode::kInvalidInput,
           "node {}: the diagonal block of M (Adiag + V/dt I) is singular: block Jacobi cannot invert it (a smaller "
           "--cfl adds more of the time term)",
           i);
  }
}

void BlockJacobi::apply(const double* r, double* z) const {
  const auto n = static_cast<std::int64_t>(inverse_.size() / kBlockEntries);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const double* inverse = &inverse_[i * kBlockEntries];
    for (int row = 0; row < kBlock; ++row) {
      double sum = 0.0;
      for (int c = 0; c < kBlock; ++c) sum += inverse[kBlock * row + c] * r[kBlock * i + c];
      z[kBlock * i + row] = sum;
    }
  }
}

}  // namespace fluxjac
