// fluxjac — the work each variant declares (RAJAPerf's habit): FP64 operations per edge, counted by running the
// variant's own lane work on CountingReal, and the bytes of one assembly per strategy, from the arrays the
// kernels read and write. The report sets each result against the floor of its own variant and strategy.
// docs/performance.md, "Work model", has the figures and the reasoning behind each term.
#pragma once

#include <map>
#include <string>

#include "ad/counting_real.hpp"
#include "assembly/edge_input.hpp"
#include "jacobian/aoff_precision.hpp"

namespace fluxjac {

/// The paper-size mesh (`fluxjac mesh gen --kind mixed --n 100`): 1,030,301 nodes and 5,580,300 edges. Per-edge
/// byte figures (`fluxjac list`) fold the per-node terms in at this ratio.
inline constexpr double kPaperNodesPerEdge = 1030301.0 / 5580300.0;
/// Off-diagonal blocks (block-CSR entries) per edge: Aoff[L,R] and Aoff[R,L].
inline constexpr double kBlocksPerEdge = 2.0;

/// \brief Minimum bytes one assembly moves between the GPU and its memory: each input array read once and
/// each output written once (or, for Adiag atomics, read and written once per node: the L2 cache merges a
/// node's updates), by what scales them.
struct BytesModel {
  double per_edge = 0.0;          ///< edge-indexed arrays (node ids, normals, areas, Aoff slots)
  double per_block = 0.0;         ///< per off-diagonal block (CSR entry): its Aoff block, node-map entries
  double per_node = 0.0;          ///< node-indexed arrays (states, Adiag, row pointers)
  double zeroing_per_node = 0.0;  ///< zeroing Adiag before the assembly, timed apart (TimingSamples::zero_ms)

  /// \brief Bytes of one assembly (zeroing excluded) on a mesh of these sizes, Aoff stored in `aoff` (per_block counts
  /// the Aoff block in float32; in bf16 each entry is 2 bytes instead of 4).
  double bytes(double n_nodes, double n_edges, double n_blocks, AoffPrecision aoff = AoffPrecision::kF32) const {
    const double bf16_saving = aoff == AoffPrecision::kBf16 ? kBlockEntries * (sizeof(float) - 2.0) : 0.0;
    return per_edge * n_edges + (per_block - bf16_saving) * n_blocks + per_node * n_nodes;
  }
  /// \brief Bytes per edge at a given number of nodes per edge (two blocks per edge).
  double bytes_per_edge(double nodes_per_edge = kPaperNodesPerEdge) const {
    return bytes(nodes_per_edge, 1.0, kBlocksPerEdge);
  }
};

/// \brief The operations of one edge's lanes in one strategy, summed over its threads (edge: all lanes of the
/// edge; node: the lanes of both sides).
struct LaneCounts {
  OpCounts written;     ///< every operation as the source writes it (Reuse::kEvery)
  OpCounts per_thread;  ///< once per thread: repeats within a thread reused (Reuse::kOncePerCall), except across
                        ///< the passes the GPU runs in full (begin_unhoisted_pass)
  LaneCounts& operator+=(const LaneCounts& o) {
    written += o.written;
    per_thread += o.per_thread;
    return *this;
  }
};

/// \brief The work of one assembly strategy of a variant.
struct StrategyWork {
  BytesModel bytes;
  LaneCounts lanes;       ///< counted on the canonical edge
  OpCounts assembly_ops;  ///< per edge, the kernel's own arithmetic outside the lanes (edge: signs; node: Adiag sums)
  /// The FP64 work of one edge the floor uses: the lanes once per thread, plus the assembly's own.
  OpCounts ops() const { return lanes.per_thread + assembly_ops; }

  /// \brief FP64 flops per edge (an FMA is two flops, as in the device probe's rate).
  double fp64_flops_per_edge() const { return fp64_flops(ops()); }
  /// \brief Estimated FP64 instructions per edge (Nsight Compute's unit: a DFMA, DADD or DMUL is one; a division or
  /// square root the instructions of its sequence). The floor's FP64 work.
  double fp64_instructions_per_edge() const { return fp64_instructions(ops()); }
  /// \brief Lower bound of the time of one assembly: the slower of moving its bytes at the copy bandwidth and
  /// issuing its FP64 instructions at the FP64 instruction rate, half the FMA flop rate `fp64_gflops` (both
  /// measured by the device probe in the same process). The FP64 pipe takes a DADD or DMUL as long as a DFMA, so
  /// flops / flop rate would hold only for a kernel of FMAs alone (docs/performance.md, "The floor of a variant").
  double floor_seconds(double n_nodes, double n_edges, double n_blocks, double copy_gbs, double fp64_gflops,
                       AoffPrecision aoff = AoffPrecision::kF32) const;
};

/// \brief What a variant declares about its work.
struct VariantWork {
  /// FP64 flops per edge of the lane work (the flux and its derivatives; an FMA is two flops), once per thread,
  /// counted on the canonical edge (counting_edge) with the mapping of the preferred strategy.
  double fp64_per_edge = 0.0;
  LaneCounts ops;  ///< the same lane work by kind
  /// Per strategy name: "edge" and "node" for GPU variants, "cpu" for the reference.
  std::map<std::string, StrategyWork> strategies;

  /// \brief The work of a strategy by name; throws Error (usage) if the variant has no such strategy.
  const StrategyWork& strategy(const std::string& name) const;
};

/// \brief FP64 instructions per second (/ 1e9) from the FMA flop rate (/ 1e9): an FMA is one instruction, two flops.
constexpr double fp64_instruction_rate(double fp64_gflops) { return 0.5 * fp64_gflops; }

/// \brief The edge every variant's work is counted on: near the generated meshes' freestream (Mach 0.8, speed of
/// sound 1) with a small jump, and a normal at which no wave speed needs Harten's entropy fix on either side (the
/// common path; each fix that fires adds a few operations).
BasicEdgeInput<CountingReal> counting_edge();

/// \brief The operations of one GPU thread's (or CPU loop iteration's) work, as written and once per thread.
template <class Work>
LaneCounts count_thread(Work&& work) {
  return {count_operations(work, Reuse::kEvery), count_operations(work, Reuse::kOncePerCall)};
}

/// \brief The edge strategy's lanes of the canonical edge, one thread each (Policy::compute).
template <class Policy>
LaneCounts count_edge_lanes() {
  const BasicEdgeInput<CountingReal> edge = counting_edge();
  CountingReal local[kLocalJacobianEntries];
  LaneCounts counts;
  for (int lane = 0; lane < Policy::kLanesPerEdge; ++lane)  // the Jacobian alone, as the kernel without the residual
    counts += count_thread([&] { Policy::compute(lane, edge, local, static_cast<CountingReal*>(nullptr)); });
  return counts;
}

/// \brief The node strategy's lanes of the canonical edge: those of each side, one thread each
/// (Policy::compute_side).
template <class Policy>
LaneCounts count_node_lanes() {
  const BasicEdgeInput<CountingReal> edge = counting_edge();
  CountingReal local[kLocalJacobianEntries];
  LaneCounts counts;
  for (int side = 0; side < 2; ++side)
    for (int lane = 0; lane < Policy::kLanesPerSide; ++lane)  // the Jacobian alone, as the kernel without the residual
      counts += count_thread([&] {
        Policy::compute_side(lane, edge, side, side_scale(edge, side), local + side * kBlockEntries,
                             static_cast<CountingReal*>(nullptr));
      });
  return counts;
}

/// \brief The bytes of the edge strategy (one thread group per edge, Adiag by atomics after zeroing).
BytesModel edge_strategy_bytes();
/// \brief The bytes of the node strategy (each node sums its row: Adiag stored once, no zeroing).
BytesModel node_strategy_bytes();
/// \brief The bytes of the CPU reference (edge loop, Adiag accumulated in edge order).
BytesModel reference_bytes();

/// \brief A GPU variant's work from its counted lane work in each strategy; the preferred strategy's lanes give
/// fp64_per_edge and ops.
VariantWork gpu_variant_work(const LaneCounts& edge_lanes, const LaneCounts& node_lanes, const std::string& preferred);
/// \brief The CPU reference's work from its counted per-edge work.
VariantWork reference_variant_work(const LaneCounts& lanes);

}  // namespace fluxjac
