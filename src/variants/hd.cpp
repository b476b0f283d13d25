// fluxjac variant hd: the hand-differentiated analytic Jacobian, one thread per side.
// Zubair et al., HiPC 2023, Table I. The analytic derivatives live in physics/roe_jacobian_hd.hpp.
#include "gpu/gpu_variant.hpp"
#include "physics/roe_jacobian_hd.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

/// The flux and its analytic derivative with respect to the side's own state, in one routine.
struct HandSide {
  template <class Real, class Block>
  FLUXJAC_HD static void run(const BasicEdgeInput<Real>& edge, int side, Real scale, Block block, Real* scaled_flux) {
    Real own[kBlock], other[kBlock], flux[kBlock], dflux_down[kBlock][kBlock];
    BasicFaceNormal<Real> normal;
    oriented_states(edge, side, own, other, normal);
    roe_flux_jacobian_hd(own, other, normal, flux, dflux_down);
    FLUXJAC_UNROLL
    for (int m = 0; m < kBlock; ++m) {
      FLUXJAC_UNROLL
      for (int k = 0; k < kBlock; ++k) block_at(block, m, k) = scale * dflux_down[m][k];
    }
    if (scaled_flux) {
      FLUXJAC_UNROLL
      for (int m = 0; m < kBlock; ++m) scaled_flux[m] = scale * flux[m];
    }
  }
};

using Lanes = OneLanePerSide<HandSide>;
constexpr GpuTuning kTuning = tuning_of("hd");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "hand-differentiated analytic Jacobian, one thread per side", Seeding::kAnalytic);

}  // namespace
}  // namespace fluxjac
