// fluxjac variant dn5_2: DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<DirectPass<DualNum5>, 255, NodeTiles<384, 128>>;

const VariantRegistrar registrar(
    gpu_variant_info<Lanes>("dn5_2",
                            "DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs",
                            Seeding::kDirectConservative, AssemblyStrategy::kNode),
    make_gpu_variant<Lanes>);

}  // namespace
}  // namespace fluxjac
