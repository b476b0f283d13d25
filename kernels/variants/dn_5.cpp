// fluxjac variant dn_5: DualNum, 5 threads per edge: thread k does input k of side L, then of side R.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn5Lanes {
  static constexpr int kLanesPerEdge = 5;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    seeded_column<DualNum>(edge, 0, lane, local);
    seeded_column<DualNum>(edge, 1, lane, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn5Lanes>("dn_5",
                               "DualNum, 5 threads per edge: thread k does input k of side L, then of side R",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn5Lanes>);

}  // namespace
}  // namespace fluxjac
