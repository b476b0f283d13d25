// fluxjac variant dn_5: DualNum, 5 threads per edge: thread k does input k of side L, then of side R.
// Zubair et al., HiPC 2023, Table I.
// Node-based assembly computes one side per node, so there dn_5 maps like dn_10 (5 threads per side).
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn5Lanes {
  static constexpr int kLanesPerEdge = 5;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 5;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    seeded_column<DualNum>(edge, side, lane, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    for (int side = 0; side < 2; ++side)
      compute_side(lane, edge, side, side_scale(edge, side), local + side * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn5Lanes>("dn_5",
                               "DualNum, 5 threads per edge: thread k does input k of side L, then of side R",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn5Lanes>);

}  // namespace
}  // namespace fluxjac
