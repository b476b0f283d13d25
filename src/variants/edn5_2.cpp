// fluxjac variant edn5_2: expression-template DualNum5, one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/expr_dual.hpp"
#include "gpu/gpu_variant.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<DirectPass<ExprDualNum5>, 255, NodeTiles<384, 128>>;

const VariantRegistrar registrar(
    gpu_variant_info<Lanes>("edn5_2",
                            "expression-template DualNum5, one thread per side, one pass on conservative inputs",
                            Seeding::kDirectConservative, AssemblyStrategy::kNode),
    make_gpu_variant<Lanes>);

}  // namespace
}  // namespace fluxjac
