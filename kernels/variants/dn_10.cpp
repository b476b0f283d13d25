// fluxjac variant dn_10: DualNum (value + 1 derivative), one thread per input: 10 threads per edge.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn10Lanes {
  static constexpr int kLanesPerEdge = 10;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    seeded_column<DualNum>(edge, lane / kBlock, lane % kBlock, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn10Lanes>("dn_10",
                               "DualNum (value + 1 derivative), one thread per input: 10 threads per edge",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn10Lanes>);

}  // namespace
}  // namespace fluxjac
