// fluxjac variant dn5_2: DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = OneLanePerSide<DirectPass<DualNum5>>;
constexpr GpuTuning kTuning = tuning_of("dn5_2");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs",
    Seeding::kDirectConservative);

}  // namespace
}  // namespace fluxjac
