// fluxjac variant edn_5: expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R.
// Zubair et al., HiPC 2023, Table I.
// Node-based assembly computes one side per node, so there edn_5 uses 5 threads per side.
#include "ad/expr_dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Edn5Lanes {
  static constexpr int kLanesPerEdge = 5;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 5;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    seeded_column<ExprDualNum>(edge, side, lane, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    for (int side = 0; side < 2; ++side)
      compute_side(lane, edge, side, side_scale(edge, side), local + side * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Edn5Lanes>("edn_5",
                               "expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Edn5Lanes>);

}  // namespace
}  // namespace fluxjac
