// fluxjac variant dn5_2: DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn5x2Lanes {
  static constexpr int kLanesPerEdge = 2;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 1;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    (void)lane;
    direct_side<DualNum5>(edge, side, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    compute_side(0, edge, lane, side_scale(edge, lane), local + lane * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn5x2Lanes>("dn5_2",
                               "DualNum5 (value + 5 derivatives), one thread per side, one pass on conservative inputs",
                               Seeding::kDirectConservative),
    make_gpu_variant<Dn5x2Lanes>);

}  // namespace
}  // namespace fluxjac
