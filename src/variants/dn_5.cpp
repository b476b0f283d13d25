// fluxjac variant dn_5: DualNum, 5 threads per edge: thread k does input k of side L, then of side R.
// Zubair et al., HiPC 2023, Table I.
// Node-based assembly computes one side per node, so there dn_5 maps like dn_10 (5 threads per side).
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"

namespace fluxjac {
namespace {

using Lanes = SeededColumnLanes<DualNum, 2, 128>;

const VariantRegistrar registrar(
    gpu_variant_info<Lanes>("dn_5", "DualNum, 5 threads per edge: thread k does input k of side L, then of side R",
                            Seeding::kSeededPrimitive, AssemblyStrategy::kNode),
    make_gpu_variant<Lanes>);

}  // namespace
}  // namespace fluxjac
