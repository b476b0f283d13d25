// fluxjac — the inverse of one 5x5 block by Gauss-Jordan elimination with partial pivoting, on the host and the
// device alike (block Jacobi's set-up).
#pragma once

#include "types.hpp"

namespace fluxjac {

/// inverse = block^-1 (row-major); false when a pivot is not above the block's largest entry times 5 float64 epsilons.
FLUXJAC_HD inline bool invert_block(const double block[kBlockEntries], double inverse[kBlockEntries]) {
  double a[kBlock][2 * kBlock];
  double largest = 0.0;
  for (int r = 0; r < kBlock; ++r)
    for (int c = 0; c < kBlock; ++c) {
      a[r][c] = block[kBlock * r + c];
      a[r][kBlock + c] = r == c ? 1.0 : 0.0;
      const double magnitude = a[r][c] < 0.0 ? -a[r][c] : a[r][c];
      largest = magnitude > largest ? magnitude : largest;
    }
  const double smallest_pivot = largest * kBlock * 2.220446049250313e-16;
  for (int c = 0; c < kBlock; ++c) {
    int pivot = c;
    for (int r = c + 1; r < kBlock; ++r)
      if ((a[r][c] < 0.0 ? -a[r][c] : a[r][c]) > (a[pivot][c] < 0.0 ? -a[pivot][c] : a[pivot][c])) pivot = r;
    const double magnitude = a[pivot][c] < 0.0 ? -a[pivot][c] : a[pivot][c];
    if (!(magnitude > smallest_pivot)) return false;
    if (pivot != c)
      for (int k = 0; k < 2 * kBlock; ++k) {
        const double swapped = a[c][k];
        a[c][k] = a[pivot][k];
        a[pivot][k] = swapped;
      }
    const double scale = 1.0 / a[c][c];
    for (int k = 0; k < 2 * kBlock; ++k) a[c][k] *= scale;
    for (int r = 0; r < kBlock; ++r) {
      if (r == c) continue;
      const double factor = a[r][c];
      for (int k = 0; k < 2 * kBlock; ++k) a[r][k] -= factor * a[c][k];
    }
  }
  for (int r = 0; r < kBlock; ++r)
    for (int c = 0; c < kBlock; ++c) inverse[kBlock * r + c] = a[r][kBlock + c];
  return true;
}

}  // namespace fluxjac
