// fluxjac variant edn5_2: expression-template DualNum5, one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/expr_dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Edn5x2Lanes {
  static constexpr int kLanesPerEdge = 2;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 1;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    (void)lane;
    direct_side<ExprDualNum5>(edge, side, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    compute_side(0, edge, lane, side_scale(edge, lane), local + lane * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Edn5x2Lanes>("edn5_2",
                               "expression-template DualNum5, one thread per side, one pass on conservative inputs",
                               Seeding::kDirectConservative),
    make_gpu_variant<Edn5x2Lanes>);

}  // namespace
}  // namespace fluxjac
