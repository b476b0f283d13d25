// fluxjac variant dn5_2: DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn5x2Lanes {
  static constexpr int kLanesPerEdge = 2;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    direct_side<DualNum5>(edge, lane, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn5x2Lanes>("dn5_2",
                               "DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs",
                               Seeding::kDirectConservative),
    make_gpu_variant<Dn5x2Lanes>);

}  // namespace
}  // namespace fluxjac
