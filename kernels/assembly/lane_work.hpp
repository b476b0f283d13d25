// fluxjac — the per-lane work of the AD variants: one routine per seeding strategy, written once.
//
// A lane computes some columns of the derivative of the flux with respect to one side's state, seen
// from that side: the own state first and the normal pointing away from it, so the symmetry
// F(QR, QL, -n) = -F(QL, QR, n) (paper, Fig. 3) makes one routine serve both sides. `scale` multiplies
// the result: +A gives the outward-flux derivative D of the node-based assembly, side_scale() gives JL / JR
// of the edge-based one. `scaled_flux`, where not null, receives scale times the flux value seen from the side (the
// value part of the AD type: the residual comes from the same pass; at scale +A it is the side's outward flux, its
// node's term of R). `block` is one 5x5 block, written entry by entry through block_at: a row-major `Real*`, or
// a TransposedBlock where the node kernel of A^T stages its blocks transposed (assembly/orientation.hpp).
//
// Everything here is generic over the real type of the edge's data (Real, deduced from the EdgeInput): double on
// the GPU and in the CPU tests, CountingReal where the work model counts a variant's FP64 operations. A policy
// names its AD type in double (Dual<1>); with_real_t gives the same AD type in Real.
#pragma once

#include "ad/dual.hpp"
#include "assembly/edge_input.hpp"
#include "assembly/orientation.hpp"
#include "physics/gas.hpp"
#include "physics/roe_flux.hpp"

namespace fluxjac {

/// scaled_flux[m] = scale * the value part of flux[m], for the five components.
template <class Scalar, class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void store_scaled_values(const Scalar flux[kBlock], Real scale, Real* scaled_flux) {
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) scaled_flux[m] = scale * flux[m].v;
}

/// \brief Seeded (the paper's Algorithm 3): flux on primitive inputs with one derivative direction,
/// seeded with column `column` of the hand-differentiated dq/dU. Writes column `column` of the block.
template <class Scalar, class Real, class Block>
FLUXJAC_HD FLUXJAC_FORCEINLINE void seeded_column(const BasicEdgeInput<Real>& edge, int side, int column, Real scale,
                                                  Block block, Real* scaled_flux) {
  Real own_state[kBlock], other_state[kBlock];
  BasicFaceNormal<Real> normal;
  oriented_states(edge, side, own_state, other_state, normal);

  const Primitive<Real> own = primitive_from_conservative(own_state);
  Real seed[kBlock];
  primitive_jacobian_column(own, column, seed);
  Primitive<Scalar> own_dual;
  own_dual.rho = Scalar(own.rho);
  own_dual.u = Scalar(own.u);
  own_dual.v = Scalar(own.v);
  own_dual.w = Scalar(own.w);
  own_dual.p = Scalar(own.p);
  own_dual.rho.d[0] = seed[0];
  own_dual.u.d[0] = seed[1];
  own_dual.v.d[0] = seed[2];
  own_dual.w.d[0] = seed[3];
  own_dual.p.d[0] = seed[4];

  Scalar flux[kBlock];
  roe_flux(own_dual, primitive_from_conservative(other_state), normal, flux);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) block_at(block, m, column) = scale * flux[m].d[0];
  if (scaled_flux) store_scaled_values(flux, scale, scaled_flux);
}

/// \brief Direct (the paper's Algorithm 4): flux on conservative inputs with five derivative directions
/// seeded with the identity. Writes the whole block.
template <class Scalar, class Real, class Block>
FLUXJAC_HD FLUXJAC_FORCEINLINE void direct_side(const BasicEdgeInput<Real>& edge, int side, Real scale, Block block,
                                                Real* scaled_flux) {
  Real own_state[kBlock], other_state[kBlock];
  BasicFaceNormal<Real> normal;
  oriented_states(edge, side, own_state, other_state, normal);

  Scalar own[kBlock];
  FLUXJAC_UNROLL
  for (int k = 0; k < kBlock; ++k) {
    own[k] = Scalar(own_state[k]);
    own[k].d[k] = 1.0;
  }
  Scalar flux[kBlock];
  roe_flux_conservative(own, other_state, normal, flux);
  FLUXJAC_UNROLL
  for (int m = 0; m < kBlock; ++m) {
    FLUXJAC_UNROLL
    for (int k = 0; k < kBlock; ++k) block_at(block, m, k) = scale * flux[m].d[k];
  }
  if (scaled_flux) store_scaled_values(flux, scale, scaled_flux);
}

// ---- lane policies shared by the AD variants ----------------------------------------------------------
// A policy gives the edge-based mapping (kLanesPerEdge lanes, compute) and the node-based one
// (kLanesPerSide lanes per incident edge, compute_side); a variant file picks one with its AD type and compiles its
// kernels with TunedLanes, which adds the tuning the kernels need at compile time.

/// \brief Seeded, one derivative column per lane: kLanesPerEdge lanes per edge, each doing `kSidesPerLane`
/// sides (10 lanes x 1 side is dn_10; 5 lanes x 2 sides is dn_5 / edn_5).
template <class Scalar, int kSidesPerLane>
struct SeededColumnLanes {
  static_assert(kSidesPerLane == 1 || kSidesPerLane == 2, "a lane does one side or both");
  static constexpr int kLanesPerEdge = 2 * kBlock / kSidesPerLane;
  static constexpr int kLanesPerSide = kBlock;
  template <class Real, class Block>
  FLUXJAC_HD static void compute_side(int lane, const BasicEdgeInput<Real>& edge, int side, Real scale, Block block,
                                      Real* scaled_flux) {
    seeded_column<with_real_t<Scalar, Real>>(edge, side, lane, scale, block, scaled_flux);
  }
  template <class Real>
  FLUXJAC_HD static void compute(int lane, const BasicEdgeInput<Real>& edge, Real* local, Real* edge_flux) {
    for (int pass = 0; pass < kSidesPerLane; ++pass) {
      const int side = kSidesPerLane == 2 ? pass : lane / kBlock;
      compute_side(lane % kBlock, edge, side, side_scale(edge, side), local + side * kBlockEntries,
                   side == 0 && lane % kBlock == 0 ? edge_flux : nullptr);
    }
  }
};

/// \brief One lane per side: `SideWork::run(edge, side, scale, block, scaled_flux)` fills the side's whole block
/// (dn_2, dn5_2, edn5_2, hd); run is a template on the real type of the edge.
template <class SideWork>
struct OneLanePerSide {
  static constexpr int kLanesPerEdge = 2;
  static constexpr int kLanesPerSide = 1;
  template <class Real, class Block>
  FLUXJAC_HD static void compute_side(int, const BasicEdgeInput<Real>& edge, int side, Real scale, Block block,
                                      Real* scaled_flux) {
    SideWork::run(edge, side, scale, block, scaled_flux);
  }
  template <class Real>
  FLUXJAC_HD static void compute(int lane, const BasicEdgeInput<Real>& edge, Real* local, Real* edge_flux) {
    SideWork::run(edge, lane, side_scale(edge, lane), local + lane * kBlockEntries, lane == 0 ? edge_flux : nullptr);
  }
};

/// \brief A lane policy with the tuning its kernels are compiled with (the rest of a variant's tuning, its thread
/// blocks, is chosen at launch): `kRegisters` caps the registers of both assembly kernels (__maxnreg__), and a
/// node-kernel thread keeps `kBatch` of its index loads and stores in flight together (block_strided_batches in
/// assembly_kernel.cuh). Both come from the variant's tuning row (src/variants/tunings.hpp).
template <class Lanes, int kRegisters, int kBatch>
struct TunedLanes : Lanes {
  static_assert(kRegisters > 0 && kRegisters <= 255, "a register cap a thread can have");
  static_assert(kBatch > 0, "at least one item at a time");
  static constexpr int kMaxRegisters = kRegisters;
  static constexpr int kNodeBatch = kBatch;
};

/// \brief The start of one pass of a loop whose passes the GPU runs in full, hoisting nothing out of them: nothing
/// for a real type that computes. The counting type (ad/counting_real.hpp) then forgets what it has done, so that
/// the work model counts every pass in full.
template <class Real>
FLUXJAC_HD FLUXJAC_FORCEINLINE void begin_unhoisted_pass(const Real&) {}

/// \brief Seeded, five passes of a one-derivative dual over the columns of one side (dn_2).
///
/// The passes are unrolled: every pass evaluates the same flux values, only their seeds (and so their derivatives)
/// differ, and nvcc then computes the values once and each pass's derivative on its own, as the counting type's
/// reuse counts them (ad/counting_real.hpp). The device division and square root are compiler intrinsics rather than
/// inline assembly, and the Dual entropy fix selects its value without a branch (physics/roe_flux.hpp), so that
/// nothing in the value work stops nvcc from merging it across passes.
template <class Scalar>
struct SeededPasses {
  template <class Real, class Block>
  FLUXJAC_HD static void run(const BasicEdgeInput<Real>& edge, int side, Real scale, Block block, Real* scaled_flux) {
    FLUXJAC_UNROLL
    for (int column = 0; column < kBlock; ++column)
      seeded_column<with_real_t<Scalar, Real>>(edge, side, column, scale, block, column == 0 ? scaled_flux : nullptr);
  }
};

/// Direct, one pass of a five-derivative dual (dn5_2, edn5_2).
template <class Scalar>
struct DirectPass {
  template <class Real, class Block>
  FLUXJAC_HD static void run(const BasicEdgeInput<Real>& edge, int side, Real scale, Block block, Real* scaled_flux) {
    direct_side<with_real_t<Scalar, Real>>(edge, side, scale, block, scaled_flux);
  }
};

/// \brief Runs a lane policy's edge-based mapping on the CPU lane by lane, as the GPU threads of one edge
/// would: the local Jacobian (JL, JR) and the edge's flux A F(Q_L, Q_R, n).
template <class Policy, class Real>
void emulate_edge_lanes(const BasicEdgeInput<Real>& edge, Real local[kLocalJacobianEntries], Real flux[kBlock]) {
  for (int lane = 0; lane < Policy::kLanesPerEdge; ++lane) Policy::compute(lane, edge, local, flux);
}

/// \brief Runs a lane policy's node-based mapping on the CPU: each side's lanes as the threads of that
/// side's node would, with the edge-based scale so that the result is again (JL, JR) and A F(Q_L, Q_R, n).
template <class Policy, class Real>
void emulate_node_lanes(const BasicEdgeInput<Real>& edge, Real local[kLocalJacobianEntries], Real flux[kBlock]) {
  for (int side = 0; side < 2; ++side)
    for (int lane = 0; lane < Policy::kLanesPerSide; ++lane)
      Policy::compute_side(lane, edge, side, side_scale(edge, side), local + side * kBlockEntries,
                           side == 0 && lane == 0 ? flux : nullptr);
}

/// \brief Runs a lane policy's node-based mapping on the CPU for one entry (i, j), as the node kernel's threads of the
/// entry do (compute_node_tile): `edge` seen from i, `block` receives D_ij = A dF/dQ_i and `flux` A F(Q_i, Q_j, n),
/// i's outward flux through the face.
template <class Policy, class Real>
void emulate_node_entry(const BasicEdgeInput<Real>& edge, Real block[kBlockEntries], Real flux[kBlock]) {
  for (int lane = 0; lane < Policy::kLanesPerSide; ++lane)
    Policy::compute_side(lane, edge, 0, edge.area, block, lane == 0 ? flux : nullptr);
}

}  // namespace fluxjac
