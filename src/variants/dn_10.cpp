// fluxjac variant dn_10: DualNum (value + 1 derivative), one thread per input: 10 threads per edge.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"

namespace fluxjac {
namespace {

using Lanes = SeededColumnLanes<DualNum, 1, 128>;

const VariantRegistrar registrar(
    gpu_variant_info<Lanes>("dn_10", "DualNum (value + 1 derivative), one thread per input: 10 threads per edge",
                            Seeding::kSeededPrimitive, AssemblyStrategy::kNode),
    make_gpu_variant<Lanes>);

}  // namespace
}  // namespace fluxjac
