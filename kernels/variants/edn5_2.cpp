// fluxjac variant edn5_2: expression-template DualNum5, one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/expr_dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Edn5x2Lanes {
  static constexpr int kLanesPerEdge = 2;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    direct_side<ExprDualNum5>(edge, lane, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Edn5x2Lanes>("edn5_2",
                               "expression-template DualNum5, one thread per side, one pass on conservative inputs",
                               Seeding::kDirectConservative),
    make_gpu_variant<Edn5x2Lanes>);

}  // namespace
}  // namespace fluxjac
