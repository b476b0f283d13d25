// fluxjac variant dn_2: DualNum, one thread per side making 5 passes (one per input).
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<SeededPasses<DualNum>>;
constexpr GpuTuning kTuning = tuning_of("dn_2");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "DualNum, one thread per side making 5 passes (one per input)", Seeding::kSeededPrimitive);

}  // namespace
}  // namespace fluxjac
