// fluxjac variant dn_10: DualNum (value + 1 derivative), one thread per input: 10 threads per edge.
// Zubair et al., HiPC 2023, Table I.
#include "ad/dual.hpp"
#include "assembly/gpu_variant.hpp"

namespace fluxjac {
namespace {

struct Dn10Lanes {
  static constexpr int kLanesPerEdge = 10;  // edge-based assembly (the paper's mapping)
  static constexpr int kLanesPerSide = 5;  // node-based assembly: threads per (node, incident edge)
  FLUXJAC_HD static void compute_side(int lane, const EdgeInput& edge, int side, double scale, double* block) {
    seeded_column<DualNum>(edge, side, lane, scale, block);
  }
  FLUXJAC_HD static void compute(int lane, const EdgeInput& edge, double* local) {
    const int side = lane / kBlock;
    compute_side(lane % kBlock, edge, side, side_scale(edge, side), local + side * kBlockEntries);
  }
};

const VariantRegistrar registrar(
    gpu_variant_info<Dn10Lanes>("dn_10",
                               "DualNum (value + 1 derivative), one thread per input: 10 threads per edge",
                               Seeding::kSeededPrimitive),
    make_gpu_variant<Dn10Lanes>);

}  // namespace
}  // namespace fluxjac
