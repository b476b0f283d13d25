#include "registry/variant_work.hpp"

#include <algorithm>
#include <cstdint>

#include "physics/gas.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

constexpr double kDouble = sizeof(double);
constexpr double kFloat = sizeof(float);
constexpr double kInt32 = sizeof(std::int32_t);
constexpr double kNodeId = sizeof(node_index);

/// The conservative state of a primitive one, as the CountingReal inputs of a lane.
void conservative_inputs(double rho, double u, double v, double w, double p, CountingReal out[kBlock]) {
  const double kinetic = 0.5 * rho * (u * u + v * v + w * w);
  const double state[kBlock] = {rho, rho * u, rho * v, rho * w, p / kGammaMinusOne + kinetic};
  for (int k = 0; k < kBlock; ++k) out[k] = CountingReal::input(state[k]);
}

}  // namespace

double StrategyWork::floor_seconds(double n_nodes, double n_edges, double n_blocks, double copy_gbs, double fp64_gflops,
                                   AoffPrecision aoff) const {
  if (copy_gbs <= 0.0 || fp64_gflops <= 0.0) return 0.0;
  // The FP64 pipe issues one DFMA, DADD or DMUL per lane and cycle: instructions at half the FMA flop rate.
  return std::max(bytes.bytes(n_nodes, n_edges, n_blocks, aoff) / (copy_gbs * 1e9),
                  fp64_instructions_per_edge() * n_edges / (fp64_instruction_rate(fp64_gflops) * 1e9));
}

const StrategyWork& VariantWork::strategy(const std::string& name) const {
  const auto found = strategies.find(name);
  if (found == strategies.end()) fail(ExitCode::kUsage, "no work model for assembly strategy '{}'", name);
  return found->second;
}

BasicEdgeInput<CountingReal> counting_edge() {
  // Speed of sound about 1 on both sides and a normal velocity of about 0.57 from either side, so that
  // |qn - a|, |qn| and |qn + a| all exceed delta = 0.2 a: no entropy fix fires.
  BasicEdgeInput<CountingReal> edge;
  conservative_inputs(1.0, 0.80, 0.10, 0.05, 1.0 / kGamma, edge.left);
  conservative_inputs(0.97, 0.78, 0.12, 0.04, 0.70, edge.right);
  edge.normal = {CountingReal::input(0.60), CountingReal::input(0.64), CountingReal::input(0.48)};
  edge.area = CountingReal::input(0.01);
  return edge;
}

BytesModel edge_strategy_bytes() {
  BytesModel model;
  model.per_edge = 2 * kNodeId                     // edges: (L, R)
                   + 3 * kDouble                   // normals
                   + kDouble                       // areas
                   + 2 * kInt32;                   // slots of Aoff[L,R] and Aoff[R,L]
  model.per_block = kBlockEntries * kFloat;        // the Aoff block, stored once
  model.per_node = kBlock * kDouble                // state, read once (its other reads hit the caches)
                   + 2 * kBlockEntries * kDouble;  // Adiag: the atomics read and write each block once in L2
  model.zeroing_per_node = kBlockEntries * kDouble;
  return model;
}

BytesModel node_strategy_bytes() {
  BytesModel model;
  model.per_block = kNodeId                    // col_idx: the other node j
                    + kInt32                   // entry_transpose: the slot of Aoff[j, i]
                    + 4 * kDouble              // entry_face: normal seen from i, and area
                    + kBlockEntries * kFloat;  // the Aoff block, stored once
  model.per_node = kInt32                      // row_ptr
                   + kBlock * kDouble          // state, read once
                   + kBlockEntries * kDouble;  // Adiag, stored once: no read, no zeroing
  return model;
}

BytesModel reference_bytes() {
  BytesModel model;
  model.per_edge = 2 * kNodeId + 3 * kDouble + kDouble + 2 * sizeof(block_offset);  // the pattern's slots are 64-bit
  model.per_block = kBlockEntries * kFloat;
  model.per_node = kBlock * kDouble + 2 * kBlockEntries * kDouble;  // Adiag += in edge order
  model.zeroing_per_node = kBlockEntries * kDouble;                 // Jacobian::resize zero-fills
  return model;
}

VariantWork gpu_variant_work(const LaneCounts& edge_lanes, const LaneCounts& node_lanes, const std::string& preferred) {
  VariantWork work;
  // The edge scatter multiplies each of the 50 entries by its block sign twice (Adiag and Aoff): the sign is a
  // run-time +-1 there (it depends on the thread's item), so these are real DMULs in the SASS. Its atomics add
  // in the L2 cache, not in the FP64 units.
  OpCounts edge_signs;
  edge_signs.mul = 2 * static_cast<std::uint64_t>(kBlocksPerEdge) * kBlockEntries;
  work.strategies["edge"] = StrategyWork{edge_strategy_bytes(), edge_lanes, edge_signs};
  // Each node adds its row's blocks in a register sum: 25 adds per block, two blocks per edge (the node kernel's
  // signs are compile-time constants and fold away).
  OpCounts node_sums;
  node_sums.add = static_cast<std::uint64_t>(kBlocksPerEdge) * kBlockEntries;
  work.strategies["node"] = StrategyWork{node_strategy_bytes(), node_lanes, node_sums};
  work.ops = work.strategy(preferred).lanes;
  work.fp64_per_edge = fp64_flops(work.ops.per_thread);
  return work;
}

VariantWork reference_variant_work(const LaneCounts& lanes) {
  VariantWork work;
  OpCounts adiag_sums;  // Adiag += per entry of both blocks
  adiag_sums.add = static_cast<std::uint64_t>(kBlocksPerEdge) * kBlockEntries;
  work.strategies["cpu"] = StrategyWork{reference_bytes(), lanes, adiag_sums};
  work.ops = lanes;
  work.fp64_per_edge = fp64_flops(lanes.per_thread);
  return work;
}

}  // namespace fluxjac
