// fluxjac variant dn_10: DualNum (value + 1 derivative), one thread per input: 10 threads per edge.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "gpu/gpu_variant.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

using Lanes = SeededColumnLanes<DualNum, 1>;
constexpr GpuTuning kTuning = tuning_of("dn_10");

const VariantRegistrar registrar = register_gpu_variant<Lanes, kTuning>(
    "DualNum (value + 1 derivative), one thread per input: 10 threads per edge", Seeding::kSeededPrimitive);

}  // namespace
}  // namespace fluxjac
