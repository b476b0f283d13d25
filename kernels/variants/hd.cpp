// fluxjac variant hd: the hand-differentiated analytic Roe flux Jacobian, one thread per side.
// Zubair et al., HiPC 2023, Table I ("HD"). The analytic derivatives live in physics/roe_jacobian_hd.hpp.
#include "assembly/gpu_variant.hpp"
#include "physics/roe_jacobian_hd.hpp"

namespace fluxjac {
namespace {

struct HandLanes {
  static constexpr int kLanesPerEdge = 2;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    double own[kBlock], other[kBlock], flux[kBlock], dflux_down[kBlock][kBlock];
    FaceNormal normal;
    oriented_states(edge, lane, own, other, normal);
    roe_flux_jacobian_hd(own, other, normal, flux, dflux_down);
    const double scale = side_scale(edge, lane);
    FLUXJAC_UNROLL
    for (int m = 0; m < kBlock; ++m) {
      FLUXJAC_UNROLL
      for (int k = 0; k < kBlock; ++k) local[local_entry(lane, m, k)] = scale * dflux_down[m][k];
    }
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<HandLanes>("hd", "hand-differentiated analytic Jacobian, one thread per side",
                                Seeding::kAnalytic),
    make_gpu_variant<HandLanes>);

}  // namespace
}  // namespace fluxjac
