// fluxjac — what one edge's Jacobian needs, and the layout of its local Jacobian.
//
// The per-lane work of every AD variant is a host-device function writing into a local Jacobian of
// this layout, so the CPU tests drive each variant lane by lane exactly as the GPU does.
#pragma once

#include "physics/roe_flux.hpp"
#include "types.hpp"

namespace fluxjac {

/// \brief Inputs of one edge: conservative states of its nodes, the face normal (L to R) and area. Real is
/// double except where the work model counts operations (ad/counting_real.hpp).
template <class Real>
struct BasicEdgeInput {
  Real left[kBlock];
  Real right[kBlock];
  BasicFaceNormal<Real> normal;
  Real area;
};
using EdgeInput = BasicEdgeInput<double>;

/// Local Jacobian of one edge: two row-major 5x5 blocks, side 0 = A dF/dUL (JL), side 1 = A dF/dUR (JR).
inline constexpr int kLocalJacobianEntries = 2 * kBlockEntries;

/// Index of entry (row m = flux component, column k = state component) of side s in a local Jacobian.
FLUXJAC_HD constexpr int local_entry(int side, int row, int col) {
  return side * kBlockEntries + block_entry(row, col);
}

/// \brief The edge as seen from one side: the own state first and the normal pointing away from it.
/// Side 1 uses the symmetry F(QR, QL, -n) = -F(QL, QR, n): its derivatives are negated by the caller.
/// Element-wise selects (not pointer selection) keep the states in registers on the GPU.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void oriented_states(const BasicEdgeInput<Real>& edge, int side, Real own[kBlock],
                                                    Real other[kBlock], BasicFaceNormal<Real>& normal) {
  FLUXJAC_UNROLL
  for (int k = 0; k < kBlock; ++k) {
    own[k] = side == 0 ? edge.left[k] : edge.right[k];
    other[k] = side == 0 ? edge.right[k] : edge.left[k];
  }
  normal = side == 0 ? edge.normal : edge.normal.flipped();
}

/// Scale applied to side s's derivatives: +A for the left state, -A for the right state (symmetry).
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE Real side_scale(const BasicEdgeInput<Real>& edge, int side) {
  return side == 0 ? edge.area : -edge.area;
}

}  // namespace fluxjac
