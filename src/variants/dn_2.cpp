// fluxjac variant dn_2: DualNum, one thread per side making 5 passes (one per input).
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<SeededPasses<DualNum>, 128>;

const VariantRegistrar registrar(gpu_variant_info<Lanes>("dn_2",
                                                         "DualNum, one thread per side making 5 passes (one per input)",
                                                         Seeding::kSeededPrimitive, AssemblyStrategy::kNode),
                                 make_gpu_variant<Lanes>);

}  // namespace
}  // namespace fluxjac
