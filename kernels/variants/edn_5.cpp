// fluxjac variant edn_5: expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R.
// Zubair et al., HiPC 2023, Table I.
#include "ad/expr_dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Edn5Lanes {
  static constexpr int kLanesPerEdge = 5;
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    seeded_column<ExprDualNum>(edge, 0, lane, local);
    seeded_column<ExprDualNum>(edge, 1, lane, local);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Edn5Lanes>("edn_5",
                               "expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Edn5Lanes>);

}  // namespace
}  // namespace fluxjac
