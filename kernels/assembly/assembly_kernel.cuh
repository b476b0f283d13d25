// fluxjac — the one assembly kernel of the AD variants (the paper's kernel design).
//
// A block takes a group of edges; each of an edge's lanes writes its derivative columns into a local
// Jacobian staged in shared memory; after a barrier the block scatters all local Jacobians with
// coalesced accesses: atomics into Adiag (float64), plain stores into Aoff (float32 or bfloat16, one edge per slot). A
// kernel instantiated with kResidual also stages each edge's flux, the value part of the same evaluation, and sums it
// into the residual R (float64) as Adiag is summed; without it the flux is never stored and the compiler drops what
// only it needs.
#pragma once

#include <cuda_bf16.h>

#include <type_traits>

#include "assembly/block_signs.hpp"
#include "assembly/device_views.hpp"
#include "assembly/edge_input.hpp"
#include "assembly/orientation.hpp"

namespace fluxjac {

/// Aoff entries per edge: Aoff[L,R] and Aoff[R,L], 25 each.
inline constexpr int kAoffEntriesPerEdge = 2 * kBlockEntries;

/// The conservative states of nodes `left` and `right` into `edge`.
__device__ FLUXJAC_FORCEINLINE void load_states(const double* state, node_index left, node_index right,
                                                EdgeInput& edge) {
  FLUXJAC_UNROLL
  for (int k = 0; k < kBlock; ++k) {
    edge.left[k] = __ldg(&state[static_cast<std::int64_t>(left) * kBlock + k]);
    edge.right[k] = __ldg(&state[static_cast<std::int64_t>(right) * kBlock + k]);
  }
}

__device__ FLUXJAC_FORCEINLINE EdgeInput load_edge(const DeviceEdges& mesh, edge_index e) {
  EdgeInput edge;
  load_states(mesh.state, __ldg(&mesh.edges[2 * e]), __ldg(&mesh.edges[2 * e + 1]), edge);
  edge.normal = {__ldg(&mesh.normals[3 * e]), __ldg(&mesh.normals[3 * e + 1]), __ldg(&mesh.normals[3 * e + 2])};
  edge.area = __ldg(&mesh.areas[e]);
  return edge;
}

/// \brief Adds the block's local Jacobians to Adiag: Adiag[L] += JL, Adiag[R] -= JR (in A^T their transposes), one
/// atomic per entry; 25 consecutive threads update the 25 consecutive doubles of one block. These 50 float64 atomics
/// per edge are the edge strategy's largest cost (measured: docs/tuning.md, "Edge and node assembly"); the node
/// strategy has none.
__device__ FLUXJAC_FORCEINLINE void scatter_adiag(const double* staging, edge_index first, int count,
                                                  const DeviceEdges& mesh, double* adiag, bool transposed) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int side = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: L gets +JL, 1: R gets -JR
    const int entry = item - local_edge * kAoffEntriesPerEdge - side * kBlockEntries;
    const double value =
        staging[local_edge * kLocalJacobianEntries + side * kBlockEntries + computed_entry(entry, transposed)];
    const node_index node = __ldg(&mesh.edges[2 * (first + local_edge) + side]);
    atomicAdd(&adiag[static_cast<std::int64_t>(node) * kBlockEntries + entry], block_signs(side).diagonal * value);
  }
}

/// \brief Adds the block's staged fluxes A F(Q_L, Q_R, n) to the residual: R[L] += A F, R[R] -= A F (the signs of
/// Adiag: block_signs), one atomic per component.
__device__ FLUXJAC_FORCEINLINE void scatter_residual(const double* staged_flux, edge_index first, int count,
                                                     const DeviceEdges& mesh, double* residual) {
  for (int item = threadIdx.x; item < count * 2 * kBlock; item += blockDim.x) {
    const int local_edge = item / (2 * kBlock);
    const int side = (item - local_edge * 2 * kBlock) / kBlock;
    const int component = item - local_edge * 2 * kBlock - side * kBlock;
    const node_index node = __ldg(&mesh.edges[2 * (first + local_edge) + side]);
    atomicAdd(&residual[static_cast<std::int64_t>(node) * kBlock + component],
              block_signs(side).diagonal * staged_flux[local_edge * kBlock + component]);
  }
}

/// \brief Stores one Aoff entry in the precision of the output (DeviceJacobian): the float, or its bfloat16. The
/// branch is uniform over the launch, so a warp never diverges on it.
__device__ FLUXJAC_FORCEINLINE void store_aoff(const DeviceJacobian& jacobian, std::int64_t at, float value) {
  if (jacobian.aoff_bf16)
    jacobian.aoff_bf16[at] = __bfloat16_as_ushort(__float2bfloat16_rn(value));
  else
    jacobian.aoff[at] = value;
}

/// \brief Writes the block's Aoff blocks (signs: docs/design.md, "Residual, sign convention and the four blocks";
/// orientation: assembly/orientation.hpp): plain stores, each slot belongs to one edge; consecutive threads write
/// consecutive entries of one block.
__device__ FLUXJAC_FORCEINLINE void scatter_aoff(const double* staging, edge_index first, int count,
                                                 const DeviceEdges& mesh, const DeviceJacobian& jacobian,
                                                 bool transposed) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int target = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: slot (L,R), 1: slot (R,L)
    const int entry = item - local_edge * kAoffEntriesPerEdge - target * kBlockEntries;
    const edge_index e = first + local_edge;
    // A: slot (L,R) holds R's block JR, (R,L) L's block JL; A^T: each slot its own side's block, transposed
    const int side = off_diagonal_side(target, transposed);
    const double value =
        staging[local_edge * kLocalJacobianEntries + side * kBlockEntries + computed_entry(entry, transposed)];
    store_aoff(jacobian, static_cast<std::int64_t>(__ldg(&mesh.slots[2 * e + target])) * kBlockEntries + entry,
               static_cast<float>(block_signs(side).off_diagonal * value));
  }
}

/// \brief Assembly kernel of a lane policy: Policy::kLanesPerEdge threads per edge, each calling
/// Policy::compute(lane, edge, local, flux) (with kResidual one lane of an edge writes its flux, else none). Dynamic
/// shared memory: edge_block_shared_bytes(edges_per_block, kResidual).
template <class Policy, bool kResidual>
__global__ void __maxnreg__(Policy::kMaxRegisters)
    assembly_kernel(DeviceEdges mesh, DeviceJacobian jacobian, int edges_per_block, int stage_flags) {
  extern __shared__ double staging[];
  double* const staged_flux = kResidual ? staging + edges_per_block * kLocalJacobianEntries : nullptr;
  constexpr int kLanes = Policy::kLanesPerEdge;
  const edge_index first = static_cast<edge_index>(blockIdx.x) * edges_per_block;
  const int count = static_cast<int>(min(static_cast<edge_index>(edges_per_block), mesh.n_edges - first));
  const int local_edge = threadIdx.x / kLanes;
  const int lane = threadIdx.x - local_edge * kLanes;

  // ---- compute: each lane fills its columns of the edge's local Jacobian ---------------------------
  if (local_edge < count) {
    double* local = staging + local_edge * kLocalJacobianEntries;
    double* flux = kResidual ? staged_flux + local_edge * kBlock : nullptr;
    if (stage_flags & kStageCompute) {
      Policy::compute(lane, load_edge(mesh, first + local_edge), local, flux);
    } else {  // scatter-only: cheap values the compiler cannot predict
      const double area = __ldg(&mesh.areas[first + local_edge]);
      for (int i = lane; i < kLocalJacobianEntries; i += kLanes) local[i] = area * i;
      if constexpr (kResidual)
        for (int i = lane; i < kBlock; i += kLanes) flux[i] = area * i;
    }
  }
  __syncthreads();

  // ---- scatter: coalesced writes of the staged blocks ---------------------------------------------
  if (stage_flags & kStageScatter) {
    const bool transposed = stage_flags & kStageTranspose;
    scatter_aoff(staging, first, count, mesh, jacobian, transposed);
    scatter_adiag(staging, first, count, mesh, jacobian.adiag, transposed);
    if constexpr (kResidual) scatter_residual(staged_flux, first, count, mesh, jacobian.residual);
  }
}

// ---- node strategy: its compute and store phases --------------------------------------------------------------

/// \brief The compute phase of a node tile: Policy::kLanesPerSide threads per entry (i, j) compute
/// D_ij = A dF(Q_i, Q_j, n_out)/dQ_i into the staged block of the entry, and with kResidual the first of them i's
/// outward flux A F(Q_i, Q_j, n_out) into the entry's staged flux, laid out as it is stored: as computed in A,
/// transposed in A^T (kTransposed), so that the scatter phase reads every staged block in order. `load(entry, edge)`
/// fills the edge as seen from i (i is the left side, the normal points away from it); `load.area(entry)` gives the
/// face area alone, for the scatter-only mode's cheap values.
template <class Policy, bool kTransposed, bool kResidual, class Load>
__device__ FLUXJAC_FORCEINLINE void compute_node_tile(int entries, const Load& load, double* staging,
                                                      double* staged_flux, int stage_flags) {
  constexpr int kLanes = Policy::kLanesPerSide;
  for (int work = threadIdx.x; work < entries * kLanes; work += blockDim.x) {
    const int entry = work / kLanes;
    const int lane = work - entry * kLanes;
    double* out = staging + entry * kBlockEntries;
    double* flux = kResidual && lane == 0 ? staged_flux + entry * kBlock : nullptr;
    if (stage_flags & kStageCompute) {
      EdgeInput edge;
      load(entry, edge);
      if constexpr (kTransposed)
        Policy::compute_side(lane, edge, 0, edge.area, TransposedBlock<double>{out}, flux);
      else
        Policy::compute_side(lane, edge, 0, edge.area, out, flux);
    } else {  // scatter-only: cheap values the compiler cannot predict
      const double area = load.area(entry);
      for (int i = lane; i < kBlockEntries; i += kLanes) out[i] = area * i;
      if (kResidual && flux)
        for (int i = 0; i < kBlock; ++i) flux[i] = area * i;
    }
  }
}

/// \brief A block-strided loop over [0, count) that takes kBatch items per thread at a time: `load(i)` for all of them,
/// then `store(i, loaded)` for all of them. The loads of a batch are then in flight together instead of one
/// load-to-store latency per item (at 8 warps per SM, dn5_2's store phase took 15% less: docs/tuning.md, "Batched
/// index loads and stores").
template <int kBatch, class Load, class Store>
__device__ FLUXJAC_FORCEINLINE void block_strided_batches(int count, const Load& load, const Store& store) {
  for (int first = threadIdx.x; first < count; first += kBatch * blockDim.x) {
    std::decay_t<decltype(load(0))> loaded[kBatch];
    FLUXJAC_UNROLL
    for (int b = 0; b < kBatch; ++b) {
      const int i = first + b * blockDim.x;
      if (i < count) loaded[b] = load(i);
    }
    FLUXJAC_UNROLL
    for (int b = 0; b < kBatch; ++b) {
      const int i = first + b * blockDim.x;
      if (i < count) store(i, loaded[b]);
    }
  }
}

/// One staged value on its way to Aoff: where it goes and what it is.
struct AoffStore {
  std::int64_t at;
  float value;
};

/// \brief Row sums of a node tile's staged values, kWidth per entry (a block's 25, a flux's 5): out[node of row r][c] =
/// sum over the row's entries k, in order, of staged[k][c] (bitwise reproducible). `row_start` holds the rows' entry
/// offsets in the pattern (rows + 1 of them); visited row r is node row_node[r], or first_row + r without a visit
/// order. Each thread keeps kBatch (row, component) sums in flight.
template <int kBatch, int kWidth>
__device__ FLUXJAC_FORCEINLINE void store_row_sums(const double* staged, int rows, int first_row, int first_entry,
                                                   const std::int32_t* row_start, const node_index* row_node,
                                                   double* out) {
  const int items = rows * kWidth;
  for (int first = threadIdx.x; first < items; first += kBatch * blockDim.x) {
    const double* column[kBatch];
    int length[kBatch];
    double sum[kBatch];
    int longest = 0;
    FLUXJAC_UNROLL
    for (int b = 0; b < kBatch; ++b) {
      const int item = first + b * blockDim.x;
      const int row = min(item, items - 1) / kWidth;
      const int component = min(item, items - 1) - row * kWidth;
      column[b] = staged + (row_start[row] - first_entry) * kWidth + component;
      length[b] = item < items ? row_start[row + 1] - row_start[row] : 0;
      longest = max(longest, length[b]);
      sum[b] = 0.0;
    }
    for (int k = 0; k < longest; ++k) {
      FLUXJAC_UNROLL
      for (int b = 0; b < kBatch; ++b)
        if (k < length[b]) sum[b] += column[b][k * kWidth];
    }
    FLUXJAC_UNROLL
    for (int b = 0; b < kBatch; ++b) {
      const int item = first + b * blockDim.x;
      if (item >= items) continue;
      const int row = item / kWidth;
      const int component = item - row * kWidth;
      // The node of the visited row (its place in the outputs: the pattern's layout whatever the traversal).
      const node_index own = row_node ? row_node[row] : first_row + row;
      out[static_cast<std::int64_t>(own) * kWidth + component] = block_signs(0).diagonal * sum[b];
    }
  }
}

/// \brief The scatter phase of a node tile from its staged blocks (laid out as stored, compute_node_tile): A[j, i] =
/// -D_ij at the target slot of entry (i, j), which is the slot of (j, i) (plain stores, 25 consecutive threads per
/// block), Adiag[i] = sum_j D_ij and, with kResidual, R_i = sum_j A F(Q_i, Q_j, n_out) (store_row_sums); in A^T, (A[j,
/// i])^T = (-D_ij)^T at the entry's own slot and (sum_j D_ij)^T (assembly/orientation.hpp), the targets being the
/// host's. Each thread keeps kBatch stores in flight.
template <int kBatch, bool kResidual>
__device__ FLUXJAC_FORCEINLINE void scatter_node_tile(const double* staging, const double* staged_flux, int entries,
                                                      int rows, int first_row, int first_entry,
                                                      const std::int32_t* row_start, const std::int32_t* target,
                                                      const node_index* row_node, const DeviceJacobian& jacobian) {
  block_strided_batches<kBatch>(
      entries * kBlockEntries,
      [&](int item) {
        const int entry = item / kBlockEntries;
        const int component = item - entry * kBlockEntries;
        return AoffStore{static_cast<std::int64_t>(target[entry]) * kBlockEntries + component,
                         static_cast<float>(block_signs(0).off_diagonal * staging[item])};
      },
      [&](int, const AoffStore& store) { store_aoff(jacobian, store.at, store.value); });
  store_row_sums<kBatch, kBlockEntries>(staging, rows, first_row, first_entry, row_start, row_node, jacobian.adiag);
  if constexpr (kResidual)
    store_row_sums<kBatch, kBlock>(staged_flux, rows, first_row, first_entry, row_start, row_node, jacobian.residual);
}

// ---- node strategy, one tile per block ------------------------------------------------------------------------

/// \brief Shared memory of one block of node_assembly_kernel: the staged own-side blocks of its entries and, with a
/// residual, their fluxes, then per entry the slot its block goes to, the own row and the other node j, then the
/// block's row starts. The indices are loaded once, up front, so that the later loops read only shared memory.
struct NodeBlockShared {
  double* staging;          ///< [max_entries][25]
  double* flux;             ///< [max_entries][5] with a residual, else none
  std::int32_t* target;     ///< [max_entries]
  node_index* own;          ///< [max_entries]: the visited row of the entry (its state's place)
  node_index* other;        ///< [max_entries]
  std::int32_t* row_start;  ///< [max_rows + 1]
  __device__ NodeBlockShared(void* base, int max_entries, bool residual)
      : staging(static_cast<double*>(base)),
        flux(staging + max_entries * kBlockEntries),
        target(reinterpret_cast<std::int32_t*>(flux + (residual ? max_entries * kBlock : 0))),
        own(target + max_entries),
        other(own + max_entries),
        row_start(other + max_entries) {}
};

/// An entry's inputs straight from global memory (node_assembly_kernel).
struct GlobalEntryLoad {
  const double* state;
  const double* face;  ///< the block's first entry's face record
  const node_index* own;
  const node_index* other;
  __device__ FLUXJAC_FORCEINLINE void operator()(int entry, EdgeInput& edge) const {
    const double2* record = reinterpret_cast<const double2*>(face) + 2 * entry;
    const double2 normal_xy = __ldg(record), normal_z_area = __ldg(record + 1);
    load_states(state, own[entry], other[entry], edge);
    edge.normal = {normal_xy.x, normal_xy.y, normal_z_area.x};
    edge.area = normal_z_area.y;
  }
  __device__ FLUXJAC_FORCEINLINE double area(int entry) const { return __ldg(face + 4 * entry + 3); }
};

/// \brief Node-based assembly kernel, one tile per block: a block takes whole consecutive rows of the block-CSR
/// pattern (packed at setup to at most a given number of entries, i.e. incident edges), computes D_ij for every
/// entry (i, j) (compute_node_tile) and stores Adiag[i] = sum_j D_ij and Aoff[j, i] = -D_ij, or in A^T their
/// transposes at Adiag[i] and the entry's own slot, and with kResidual R_i = sum_j A F(Q_i, Q_j, n_out)
/// (scatter_node_tile): no atomics, no zeroing, bitwise reproducible.
/// In A^T (kTransposed) every block lands in the row that computed it, so a tile's stores are contiguous; each
/// orientation has its own kernel, so that A's is not burdened by the other's layout (docs/tuning.md, "The adjoint
/// orientation's stores"). Equivalent to the edge-based signs of docs/design.md, "Residual, sign convention and the
/// four blocks": for i = L, D = JL; for i = R, D = -JR. A block may have fewer threads than its tile has lanes: each
/// thread then works several entries in turn, which spreads the block's index loads and barriers over more work
/// (docs/tuning.md, "Lanes per thread").
template <class Policy, bool kTransposed, bool kResidual>
__global__ void __maxnreg__(Policy::kMaxRegisters)
    node_assembly_kernel(DeviceEdges mesh, DeviceNodeMap map, DeviceJacobian jacobian, int max_entries,
                         int stage_flags) {
  extern __shared__ double shared[];
  const NodeBlockShared block(shared, max_entries, kResidual);
  const int4 tile = __ldg(reinterpret_cast<const int4*>(map.tiles) + blockIdx.x);  // NodeTile
  const int first_row = tile.x, row_count = tile.y, first_entry = tile.z, entry_count = tile.w;

  // ---- the block's indices into shared memory, all of a batch's loads in flight together ------------------
  block_strided_batches<Policy::kNodeBatch>(
      max(entry_count, row_count + 1),
      [&](int k) {
        int3 loaded{0, 0, 0};  // row start, the entry's target slot, j
        if (k <= row_count) loaded.x = __ldg(&map.row_ptr[first_row + k]);
        if (k < entry_count) {
          loaded.y = map.entry_target ? __ldg(&map.entry_target[first_entry + k]) : first_entry + k;
          loaded.z = __ldg(&map.col_idx[first_entry + k]);
        }
        return loaded;
      },
      [&](int k, int3 loaded) {
        if (k <= row_count) block.row_start[k] = loaded.x;
        if (k < entry_count) {
          block.target[k] = loaded.y;
          block.other[k] = loaded.z;
        }
      });
  __syncthreads();
  // States are indexed by visited row: with a visit order (row_node), the host lays them out in it too.
  for (int r = threadIdx.x; r < row_count; r += blockDim.x)
    for (int k = block.row_start[r]; k < block.row_start[r + 1]; ++k) block.own[k - first_entry] = first_row + r;
  __syncthreads();

  const GlobalEntryLoad load{mesh.state, map.entry_face + 4 * static_cast<std::int64_t>(first_entry), block.own,
                             block.other};
  compute_node_tile<Policy, kTransposed, kResidual>(entry_count, load, block.staging, block.flux, stage_flags);
  __syncthreads();
  if (!(stage_flags & kStageScatter)) return;
  scatter_node_tile<Policy::kNodeBatch, kResidual>(block.staging, block.flux, entry_count, row_count, first_row,
                                                   first_entry, block.row_start, block.target,
                                                   map.row_node ? map.row_node + first_row : nullptr, jacobian);
}

}  // namespace fluxjac
