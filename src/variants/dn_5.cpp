// fluxjac variant dn_5: DualNum, 5 threads per edge: thread k does input k of side L, then of side R.
// Zubair et al., HiPC 2023, Table I.
// Node-based assembly computes one side per node, so there dn_5 maps like dn_10 (5 threads per side).
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = SeededColumnLanes<DualNum, 2>;
constexpr GpuTuning kTuning = tuning_of("dn_5");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "DualNum, 5 threads per edge: thread k does input k of side L, then of side R", Seeding::kSeededPrimitive);

}  // namespace
}  // namespace fluxjac
