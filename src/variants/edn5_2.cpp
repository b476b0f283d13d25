// fluxjac variant edn5_2: expression-template DualNum5, one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/expr_dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<DirectPass<ExprDualNum5>>;
constexpr GpuTuning kTuning = tuning_of("edn5_2");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "expression-template DualNum5, one thread per side, one pass on conservative inputs", Seeding::kDirectConservative);

}  // namespace
}  // namespace fluxjac
