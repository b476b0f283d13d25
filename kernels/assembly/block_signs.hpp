// fluxjac — the sign rule of assembly, the one place it is written (docs/design.md, "Residual, sign convention and the
// four blocks"; SU2's UpdateBlocks).
#pragma once

#include "types.hpp"

namespace fluxjac {

/// \brief Signs with which block `side` of an edge's local Jacobian enters the matrix.
///
/// Side 0 is JL = A dF/dQ_L, side 1 is JR = A dF/dQ_R. The residual of L holds +A F and that of R holds -A F, so
///   Adiag[L] += JL,  Aoff[R, L] -= JL,  Adiag[R] -= JR,  Aoff[L, R] += JR.
/// A block is a derivative with respect to its own side's node; `diagonal` is its sign in that node's diagonal
/// block, `off_diagonal` its sign in the other node's row (Aoff[other, own]). The node assembly computes the
/// outward-flux derivative of its own node, which is side 0 seen from that node.
struct BlockSigns {
  double diagonal;
  double off_diagonal;
};

FLUXJAC_HD constexpr BlockSigns block_signs(int side) {
  return side == 0 ? BlockSigns{1.0, -1.0} : BlockSigns{-1.0, 1.0};
}

}  // namespace fluxjac
