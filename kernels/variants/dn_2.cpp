// fluxjac variant dn_2: DualNum, one thread per side making 5 passes (one per input of its side).
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn2Lanes {
  static constexpr int kLanesPerEdge = 2;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    // A loop, not unrolled: the paper's dn_2 re-runs one DualNum flux five times per thread.
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int column = 0; column < kBlock; ++column) seeded_column<DualNum>(edge, lane, column, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn2Lanes>("dn_2", "DualNum, one thread per side making 5 passes (one per input)",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn2Lanes>);

}  // namespace
}  // namespace fluxjac
