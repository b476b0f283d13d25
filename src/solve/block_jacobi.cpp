#include "solve/block_jacobi.hpp"

#include "solve/block_inverse.hpp"

#include "util/error.hpp"

namespace fluxjac {
BlockJacobi::BlockJacobi(const BlockSystem& system)
    : inverse_(static_cast<std::size_t>(system.row_nodes()) * kBlockEntries) {
  for (std::int64_t t = 0; t < system.row_nodes(); ++t) {
    const std::int64_t i = system.row_node(t);
    double block[kBlockEntries];
    for (int k = 0; k < kBlockEntries; ++k) block[k] = system.jacobian.adiag[i * kBlockEntries + k];
    for (int r = 0; r < kBlock; ++r) block[kBlock * r + r] += system.shift[i];
    if (!invert_block(block, &inverse_[t * kBlockEntries]))
      fail(ExitCode::kInvalidInput,
           "node {}: the diagonal block of M (Adiag + V/dt I) is singular: block Jacobi cannot invert it (a smaller "
           "--cfl adds more of the time term)",
           system.file_node(t));
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
