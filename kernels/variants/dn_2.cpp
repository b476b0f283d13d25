// fluxjac variant dn_2: DualNum, one thread per side making 5 passes (one per input).
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn2Lanes {
  static constexpr int kLanesPerEdge = 2;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 1;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    (void)lane;
    // A loop, not unrolled: the paper's dn_2 re-runs one DualNum flux five times per thread.
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int column = 0; column < kBlock; ++column) seeded_column<DualNum>(edge, side, column, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    compute_side(0, edge, lane, side_scale(edge, lane), local + lane * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn2Lanes>("dn_2",
                               "DualNum, one thread per side making 5 passes (one per input)",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn2Lanes>);

}  // namespace
}  // namespace fluxjac
