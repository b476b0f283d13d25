// fluxjac variant edn_5: expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R.
// Zubair et al., HiPC 2023, Table I.
// Node-based assembly computes one side per node, so there edn_5 uses 5 threads per side.
#include "ad/expr_dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = SeededColumnLanes<ExprDualNum, 2>;
constexpr GpuTuning kTuning = tuning_of("edn_5");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "expression-template DualNum, 5 threads per edge: thread k does input k of side L, then R",
    Seeding::kSeededPrimitive);

}  // namespace
}  // namespace fluxjac
