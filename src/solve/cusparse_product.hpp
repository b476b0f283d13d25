// fluxjac — cuSPARSE's product of the solve's matrix M beside fluxjac's own (`fluxjac solve --cusparse`,
// docs/design.md "The solve"): M as one BSR matrix of 5x5 row-major blocks, the diagonal blocks merged into the rows
// (docs/formats.md, "Using the Jacobian"), multiplied by cusparseSpMV in three precisions. Only the GPU solve calls it
// (device_solve.cu), so a build without CUDA has no definition and needs none.
#pragma once

#include <cstdint>
#include <vector>

#include "solve/solve_step.hpp"
#include "types.hpp"

namespace fluxjac {

/// \brief M's arrays in device memory, as the GPU solve holds them.
struct DeviceBlockMatrix {
  std::int64_t n_nodes = 0;
  std::int64_t nnz = 0;                   ///< Aoff blocks (the pattern has no diagonal entry)
  const block_offset* row_ptr = nullptr;  ///< [n_nodes + 1]
  const node_index* col_idx = nullptr;    ///< [nnz], ascending within a row
  const double* diagonal = nullptr;       ///< [n_nodes][5][5]: D_i = Adiag_i + s_i I, row-major
  const float* aoff = nullptr;            ///< [nnz][5][5], row-major, in pattern order
};

/// \brief cuSPARSE's product y = M x in each precision, one BSR matrix at a time (built in device memory, freed
/// before the next): for each, the first type combination cuSPARSE accepts runs, its y is compared with `fused_y`
/// (M x by fluxjac's product, in device memory) and it is timed as SolveOutcome::product_ms is (median_event_ms).
/// `x` (device, [n_nodes][5]) is left as it is. Error(kRuntime) when cuSPARSE cannot be loaded or fails once it has
/// accepted a combination.
std::vector<CusparseProduct> time_cusparse_products(const DeviceBlockMatrix& matrix, const double* x,
                                                    const double* fused_y);

}  // namespace fluxjac
