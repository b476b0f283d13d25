// fluxjac — where a computed block goes in each output orientation, A = dR/dQ or its transpose A^T (docs/design.md,
// "The adjoint orientation"): the one place these rules are written, for the GPU kernels and the CPU alike.
//
// Both orientations have the same block-CSR pattern (it is structurally symmetric). Block (i, j) of A^T is
// (A[j, i])^T: the block of entry (j, i) of A, transposed within its 5x5 block, stored at the slot of entry (i, j).
#pragma once

#include "types.hpp"

namespace fluxjac {

/// \brief The entry of a computed block (row-major 5x5) that entry `entry` of the stored block holds: itself in A,
/// the mirrored entry (k, m) for stored entry (m, k) in A^T. Its own inverse, so the stores can walk the stored
/// block in order (consecutive threads, consecutive addresses) and read the computed one permuted.
FLUXJAC_HD FLUXJAC_FORCEINLINE int computed_entry(int entry, bool transposed) {
  return transposed ? (entry % kBlock) * kBlock + entry / kBlock : entry;
}

/// \brief A 5x5 block that a lane writes entry by entry, laid out transposed: entry (m, k) at the row-major place of
/// (k, m). The node kernel of A^T stages its blocks so (they are then stored as they lie); a plain pointer is a block
/// laid out as computed. Lanes write through block_at, whose place is a constant wherever the entry is.
template <class Real>
struct TransposedBlock {
  Real* data;
};

/// Entry (row, col) of a block laid out as computed.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real& block_at(Real* block, int row, int col) {
  return block[block_entry(row, col)];
}

/// Entry (row, col) of a block laid out transposed.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real& block_at(TransposedBlock<Real> block, int row, int col) {
  return block.data[block_entry(col, row)];
}

/// \brief Edge assembly: the side (0: JL, 1: JR; block_signs gives its signs) whose block goes into off-diagonal slot
/// `target` of the edge (0: the slot of entry (L, R), 1: that of (R, L)). In A, slot (L, R) holds A[L, R] = +JR;
/// in A^T it holds (A[R, L])^T = (-JL)^T, a block of its own side.
FLUXJAC_HD constexpr int off_diagonal_side(int target, bool transposed) { return transposed ? target : 1 - target; }

}  // namespace fluxjac
