// fluxjac variant hd: hand-differentiated analytic Jacobian, one thread per side.
// Zubair et al., HiPC 2023, Table I.
// The analytic derivatives live in physics/roe_jacobian_hd.hpp.
#include "physics/roe_jacobian_hd.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct HandLanes {
  static constexpr int kLanesPerEdge = 2;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 1;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    (void)lane;
    double own[kBlock], other[kBlock], flux[kBlock], dflux_down[kBlock][kBlock];
    FaceNormal normal;
    oriented_states(edge, side, own, other, normal);
    roe_flux_jacobian_hd(own, other, normal, flux, dflux_down);
    FLUXJAC_UNROLL
    for (int m = 0; m < kBlock; ++m) {
      FLUXJAC_UNROLL
      for (int k = 0; k < kBlock; ++k) block[block_entry(m, k)] = scale * dflux_down[m][k];
    }
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    compute_side(0, edge, lane, side_scale(edge, lane), local + lane * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<HandLanes>("hd",
                               "hand-differentiated analytic Jacobian, one thread per side",
                               Seeding::kAnalytic),
    make_gpu_variant<HandLanes>);

}  // namespace
}  // namespace fluxjac
