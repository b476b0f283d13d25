// fluxjac — the tunings of the GPU variants, in one table (CUB's per-architecture policies): a row per variant and
// GPU architecture, with the numbers its kernels are compiled and launched with. A variant file takes its row with
// tuning_of("name"); `fluxjac list` prints the rows.
//
// The columns:
// - registers: the cap of both assembly kernels (__maxnreg__). The kernels are latency-bound, so more resident warps
//   beat a few spills; a cap is kept only where the GPU measured a gain, and 255 (the most a thread can have) is none.
// - edges/block: the edge strategy's block. Small blocks let one block's compute overlap another's scatter; 16 is the
//   best or near-best setting for every variant. A block takes fewer edges where the registers allow fewer threads.
// - node tile, node threads: the node strategy packs whole rows into tiles of at most `node tile` incident edges, one
//   tile per block of at most `node threads` threads. With fewer threads than the tile has lanes, each thread works
//   several lanes in turn, which spreads the block's index loads and barriers over more work: two or three lanes per
//   thread are fastest for one lane per entry (hd, dn5_2, edn5_2) and ten for five lanes per entry (dn_10, dn_5,
//   edn_5), at as many resident warps as the registers allow; dn_2 keeps one. `--edges-per-block` overrides the tile.
// - node batch: how many of its index loads and stores a node-kernel thread keeps in flight together
//   (block_strided_batches in kernels/assembly/assembly_kernel.cuh), so that their latencies overlap.
// - assembly: the strategy `--assembly auto` runs, the faster one on the paper-size mesh.
//
// Every row was measured on sm_90, by sweeps on the paper-size mesh on an H100; the final figures of
// docs/performance.md were taken with these rows on an H100 and an H200. A build for another architecture runs them
// as they are.
#pragma once

#include <stdexcept>
#include <string_view>

#include "registry/registry.hpp"

namespace fluxjac {

/// Compute capability 9.0: NVIDIA H100 and H200.
inline constexpr int kSm90 = 90;

/// \brief Every GPU variant's tuning: one row per variant and architecture it was measured on.
// clang-format off
inline constexpr GpuTuning kGpuTunings[] = {
    // variant  measured on  registers  edges/block  node tile  node threads  node batch  assembly
    {"hd",      kSm90,       128,       16,          256,       128,          4,          AssemblyStrategy::kNode},
    {"dn5_2",   kSm90,       255,       16,          384,       128,          4,          AssemblyStrategy::kNode},
    {"edn5_2",  kSm90,       255,       16,          384,       128,          4,          AssemblyStrategy::kNode},
    {"dn_2",    kSm90,       255,       16,          384,       128,          4,          AssemblyStrategy::kNode},
    {"dn_10",   kSm90,       128,       16,          256,       128,          4,          AssemblyStrategy::kNode},
    {"dn_5",    kSm90,       128,       16,          256,       128,          4,          AssemblyStrategy::kNode},
    {"edn_5",   kSm90,       128,       16,          256,       128,          4,          AssemblyStrategy::kNode},
};
// clang-format on

/// \brief The row of `variant` measured on `architecture`. A variant file calls it in a constant expression, so a
/// variant without a row here does not compile.
constexpr GpuTuning tuning_of(std::string_view variant, int architecture = kSm90) {
  for (const GpuTuning& row : kGpuTunings)
    if (row.variant == variant && row.architecture == architecture) return row;
  throw std::invalid_argument("no tuning row for this variant and architecture in src/variants/tunings.hpp");
}

}  // namespace fluxjac
