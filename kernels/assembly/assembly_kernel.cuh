// fluxjac — the one assembly kernel of the AD variants (the paper's kernel design).
//
// A block takes a group of edges; each of an edge's lanes writes its derivative columns into a local
// Jacobian staged in shared memory; after a barrier the block scatters all local Jacobians with
// coalesced accesses: atomics into Adiag (float64), plain stores into Aoff (float32, one edge per slot).
#pragma once

#include <cuda_pipeline.h>

#include "assembly/block_signs.hpp"
#include "assembly/device_views.hpp"
#include "assembly/edge_input.hpp"

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

/// \brief Adds the block's local Jacobians to Adiag: Adiag[L] += JL, Adiag[R] -= JR, one atomic per entry;
/// 25 consecutive threads update the 25 consecutive doubles of one block. These 50 float64 atomics per edge
/// are the edge strategy's largest cost (measured in docs/performance.md section 4, items 9-10); the node
/// strategy has none.
__device__ FLUXJAC_FORCEINLINE void scatter_adiag(const double* staging, edge_index first, int count,
                                                  const DeviceEdges& mesh, double* adiag) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int side = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: L gets +JL, 1: R gets -JR
    const int entry = item - local_edge * kAoffEntriesPerEdge - side * kBlockEntries;
    const double value = staging[local_edge * kLocalJacobianEntries + side * kBlockEntries + entry];
    const node_index node = __ldg(&mesh.edges[2 * (first + local_edge) + side]);
    atomicAdd(&adiag[static_cast<std::int64_t>(node) * kBlockEntries + entry], block_signs(side).diagonal * value);
  }
}

/// \brief Writes the block's Aoff blocks (docs/design.md 1.1 signs): plain stores, each slot belongs to one
/// edge; consecutive threads write consecutive entries of one block.
__device__ FLUXJAC_FORCEINLINE void scatter_aoff(const double* staging, edge_index first, int count,
                                                 const DeviceEdges& mesh, float* aoff) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int target = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: Aoff[L,R], 1: Aoff[R,L]
    const int entry = item - local_edge * kAoffEntriesPerEdge - target * kBlockEntries;
    const edge_index e = first + local_edge;
    const int side = 1 - target;  // Aoff[L,R] holds R's block JR, Aoff[R,L] holds L's block JL
    const double value = staging[local_edge * kLocalJacobianEntries + side * kBlockEntries + entry];
    aoff[static_cast<std::int64_t>(__ldg(&mesh.slots[2 * e + target])) * kBlockEntries + entry] =
        static_cast<float>(block_signs(side).off_diagonal * value);
  }
}

/// \brief Assembly kernel of a lane policy: Policy::kLanesPerEdge threads per edge, each calling
/// Policy::compute(lane, edge, local). Dynamic shared memory: edge_block_shared_bytes(edges_per_block).
template <class Policy>
__global__ void __maxnreg__(Policy::kMaxRegisters)
    assembly_kernel(DeviceEdges mesh, DeviceJacobian jacobian, int edges_per_block, int stage_flags) {
  extern __shared__ double staging[];
  constexpr int kLanes = Policy::kLanesPerEdge;
  const edge_index first = static_cast<edge_index>(blockIdx.x) * edges_per_block;
  const int count = static_cast<int>(min(static_cast<edge_index>(edges_per_block), mesh.n_edges - first));
  const int local_edge = threadIdx.x / kLanes;
  const int lane = threadIdx.x - local_edge * kLanes;

  // ---- compute: each lane fills its columns of the edge's local Jacobian ---------------------------
  if (local_edge < count) {
    double* local = staging + local_edge * kLocalJacobianEntries;
    if (stage_flags & kStageCompute) {
      Policy::compute(lane, load_edge(mesh, first + local_edge), local);
    } else {  // scatter-only: cheap values the compiler cannot predict
      const double area = __ldg(&mesh.areas[first + local_edge]);
      for (int i = lane; i < kLocalJacobianEntries; i += kLanes) local[i] = area * i;
    }
  }
  __syncthreads();

  // ---- scatter: coalesced writes of the staged blocks ---------------------------------------------
  if (stage_flags & kStageScatter) {
    scatter_aoff(staging, first, count, mesh, jacobian.aoff);
    scatter_adiag(staging, first, count, mesh, jacobian.adiag);
  }
}

// ---- node strategy: the pieces both node kernels share ------------------------------------------------------

/// \brief The compute phase of a node tile: Policy::kLanesPerSide threads per entry (i, j) compute
/// D_ij = A dF(Q_i, Q_j, n_out)/dQ_i into the staged block of the entry. `load(entry, edge)` fills the edge as seen
/// from i (i is the left side, the normal points away from it); `load.area(entry)` gives the face area alone, for
/// the scatter-only mode's cheap values.
template <class Policy, class Load>
__device__ FLUXJAC_FORCEINLINE void compute_node_tile(int entries, const Load& load, double* staging, int stage_flags) {
  constexpr int kLanes = Policy::kLanesPerSide;
  for (int work = threadIdx.x; work < entries * kLanes; work += blockDim.x) {
    const int entry = work / kLanes;
    const int lane = work - entry * kLanes;
    double* out = staging + entry * kBlockEntries;
    if (stage_flags & kStageCompute) {
      EdgeInput edge;
      load(entry, edge);
      Policy::compute_side(lane, edge, 0, edge.area, out);
    } else {  // scatter-only: cheap values the compiler cannot predict
      const double area = load.area(entry);
      for (int i = lane; i < kBlockEntries; i += kLanes) out[i] = area * i;
    }
  }
}

/// \brief The scatter phase of a node tile from its staged blocks: Aoff[j, i] = -D_ij (plain stores, 25 consecutive
/// threads per block) and Adiag[i] = sum_j D_ij (summed in row order, stored once). `row_start` holds the rows'
/// entry offsets in the pattern (rows + 1 of them); visited row r is node row_node[r], or first_row + r without
/// a visit order.
__device__ FLUXJAC_FORCEINLINE void scatter_node_tile(const double* staging, int entries, int rows, int first_row,
                                                      int first_entry, const std::int32_t* row_start,
                                                      const std::int32_t* transpose, const node_index* row_node,
                                                      const DeviceJacobian& jacobian) {
  for (int item = threadIdx.x; item < entries * kBlockEntries; item += blockDim.x) {
    const int entry = item / kBlockEntries;
    const int component = item - entry * kBlockEntries;
    jacobian.aoff[static_cast<std::int64_t>(transpose[entry]) * kBlockEntries + component] =
        static_cast<float>(block_signs(0).off_diagonal * staging[item]);
  }
  for (int item = threadIdx.x; item < rows * kBlockEntries; item += blockDim.x) {
    const int row = item / kBlockEntries;
    const int component = item - row * kBlockEntries;
    double sum = 0.0;
    for (int k = row_start[row] - first_entry; k < row_start[row + 1] - first_entry; ++k)
      sum += staging[k * kBlockEntries + component];
    // The node of the visited row (its place in Adiag: the pattern's layout whatever the traversal).
    const node_index own = row_node ? row_node[row] : first_row + row;
    jacobian.adiag[static_cast<std::int64_t>(own) * kBlockEntries + component] = block_signs(0).diagonal * sum;
  }
}

// ---- node strategy, one tile per block ------------------------------------------------------------------------

/// \brief Shared memory of one block of node_assembly_kernel: the staged own-side blocks of its entries, then per
/// entry the position of Aoff[j, i], the own row and the other node j, then the block's row starts. The indices
/// are loaded once, up front, so that the later loops read only shared memory.
struct NodeBlockShared {
  double* staging;          ///< [max_entries][25]
  std::int32_t* transpose;  ///< [max_entries]
  node_index* own;          ///< [max_entries]: the visited row of the entry (its state's place)
  node_index* other;        ///< [max_entries]
  std::int32_t* row_start;  ///< [max_rows + 1]
  __device__ NodeBlockShared(void* base, int max_entries)
      : staging(static_cast<double*>(base)),
        transpose(reinterpret_cast<std::int32_t*>(staging + max_entries * kBlockEntries)),
        own(transpose + max_entries),
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
/// entry (i, j) (compute_node_tile) and stores Adiag[i] = sum_j D_ij and Aoff[j, i] = -D_ij (scatter_node_tile): no
/// atomics, no zeroing, bitwise reproducible. Equivalent to the edge-based signs of docs/design.md 1.1: for i = L,
/// D = JL; for i = R, D = -JR. The default for register-heavy lanes that want every resident warp (hd, dn_2);
/// node_pipeline_kernel overlaps loads with work instead.
template <class Policy>
__global__ void __maxnreg__(Policy::kMaxRegisters)
    node_assembly_kernel(DeviceEdges mesh, DeviceNodeMap map, DeviceJacobian jacobian, int max_entries,
                         int stage_flags) {
  extern __shared__ double shared[];
  const NodeBlockShared block(shared, max_entries);
  const int first_row = __ldg(&map.block_first_row[blockIdx.x]);
  const int row_count = __ldg(&map.block_first_row[blockIdx.x + 1]) - first_row;

  // ---- the block's indices into shared memory ------------------------------------------------------------
  for (int r = threadIdx.x; r <= row_count; r += blockDim.x) block.row_start[r] = __ldg(&map.row_ptr[first_row + r]);
  __syncthreads();
  const int first_entry = block.row_start[0];
  const int entry_count = block.row_start[row_count] - first_entry;
  for (int k = threadIdx.x; k < entry_count; k += blockDim.x) {
    block.transpose[k] = __ldg(&map.entry_transpose[first_entry + k]);
    block.other[k] = __ldg(&map.col_idx[first_entry + k]);
  }
  // States are indexed by visited row: with a visit order (row_node), the host lays them out in it too.
  for (int r = threadIdx.x; r < row_count; r += blockDim.x)
    for (int k = block.row_start[r]; k < block.row_start[r + 1]; ++k) block.own[k - first_entry] = first_row + r;
  __syncthreads();

  const GlobalEntryLoad load{mesh.state, map.entry_face + 4 * static_cast<std::int64_t>(first_entry), block.own,
                             block.other};
  compute_node_tile<Policy>(entry_count, load, block.staging, stage_flags);
  __syncthreads();
  if (!(stage_flags & kStageScatter)) return;
  scatter_node_tile(block.staging, entry_count, row_count, first_row, first_entry, block.row_start, block.transpose,
                    map.row_node ? map.row_node + first_row : nullptr, jacobian);
}

// ---- node strategy, a persistent grid with pipelined loads ------------------------------------------------------

/// \brief Shared memory of one block of the node strategy, for a tile of at most `max_entries` entries and
/// `max_rows` rows. The kernel is software-pipelined over the tiles a block takes: while it computes tile t and
/// stores its blocks, the indices of tile t + 2 and the states and faces of tile t + 1 are on their way into shared
/// memory (cp.async), so that neither phase waits for a global load. Hence three index stages (rows, columns,
/// transposed slots of tiles t, t + 1, t + 2) and two data stages (faces and states of tiles t and t + 1); the own
/// side's derivative blocks of tile t are staged once, for the Adiag sums and the coalesced Aoff stores.
struct NodeTileShared {
  using Bounds = NodeTileBounds;
  /// One index stage: the tile's bounds, row starts, and per entry its column, transposed slot and row.
  struct Index {
    Bounds* bounds;
    std::int32_t* row_start;  ///< [max_rows + 1], entry offsets in the pattern
    node_index* row_node;     ///< [max_rows]: the node of each visited row (only with a visit order)
    node_index* other;        ///< [max_entries]: j, whose state the entry reads
    std::int32_t* transpose;  ///< [max_entries]: block index of Aoff[j, i]
    std::int32_t* entry_row;  ///< [max_entries]: the tile row of each entry
  };
  /// One data stage: per entry the face (outward normal, area) and the other node's state, per row the own state.
  struct Data {
    double* face;         ///< [max_entries][4]
    double* other_state;  ///< [max_entries][5]
    double* own_state;    ///< [max_rows][5]
  };
  double* staging;  ///< [max_entries][25], then the data stages, then the index stages
  int max_entries, max_rows;

  __device__ NodeTileShared(void* base, int entries, int rows)
      : staging(static_cast<double*>(base)), max_entries(entries), max_rows(rows) {}
  /// Stage `s` (0 or 1) of the data (computed, not looked up: a run-time index into an array of pointers would
  /// put the array in local memory).
  __device__ FLUXJAC_FORCEINLINE Data data(int s) const {
    Data d;
    d.face = staging + node_tile_staging_doubles(max_entries) + s * node_tile_data_doubles(max_entries, max_rows);
    d.other_state = d.face + max_entries * 4;
    d.own_state = d.other_state + max_entries * kBlock;
    return d;
  }
  /// Stage `s` (0 to 2) of the indices.
  __device__ FLUXJAC_FORCEINLINE Index index(int s) const {
    std::int32_t* i = reinterpret_cast<std::int32_t*>(staging + node_tile_staging_doubles(max_entries) +
                                                      kNodeDataStages * node_tile_data_doubles(max_entries, max_rows)) +
                      s * node_tile_index_words(max_entries, max_rows);
    Index x;
    x.bounds = reinterpret_cast<Bounds*>(i);
    x.row_start = i + sizeof(Bounds) / sizeof(std::int32_t);
    x.row_node = x.row_start + max_rows + 1;
    x.other = x.row_node + max_rows;
    x.transpose = x.other + max_entries;
    x.entry_row = x.transpose + max_entries;
    return x;
  }
};

namespace node_pipeline {

/// Copies `count` 4-byte words from global to shared memory asynchronously (cp.async), spread over the block.
__device__ FLUXJAC_FORCEINLINE void copy_words(std::int32_t* to, const std::int32_t* from, int count) {
  for (int k = threadIdx.x; k < count; k += blockDim.x) __pipeline_memcpy_async(to + k, from + k, sizeof(std::int32_t));
}

/// \brief The next tile of this block, handed out in order over the whole grid: blocks take tiles as they free up,
/// as the hardware hands out the blocks of an ordinary grid, so the tiles in flight stay a narrow window of the
/// rows and the transposed Aoff stores of neighbouring rows meet in L2 (a fixed stride, blockIdx.x + k gridDim.x,
/// lets blocks drift apart: measured 1.2x slower for hd, docs/performance.md). Called by one thread.
__device__ FLUXJAC_FORCEINLINE std::int32_t claim_tile(const DeviceNodeMap& map) {
  return static_cast<std::int32_t>(gridDim.x) + atomicAdd(map.tile_counter, 1);
}

/// Tile `stage.bounds->tile`'s bounds (plain loads), into `stage` by thread 0, and its indices (cp.async).
__device__ FLUXJAC_FORCEINLINE void fetch_indices(const DeviceNodeMap& map, std::int32_t tile,
                                                  const NodeTileShared::Index& stage) {
  NodeTileShared::Bounds b;
  b.tile = tile;
  b.first_row = __ldg(&map.block_first_row[tile]);
  b.rows = __ldg(&map.block_first_row[tile + 1]) - b.first_row;
  b.first_entry = __ldg(&map.block_first_entry[tile]);
  b.entries = __ldg(&map.block_first_entry[tile + 1]) - b.first_entry;
  if (threadIdx.x == 0) *stage.bounds = b;
  copy_words(stage.row_start, map.row_ptr + b.first_row, b.rows + 1);
  if (map.row_node) copy_words(stage.row_node, map.row_node + b.first_row, b.rows);
  copy_words(stage.other, map.col_idx + b.first_entry, b.entries);
  copy_words(stage.transpose, map.entry_transpose + b.first_entry, b.entries);
}

/// With tile indices in `index` (landed): each entry's row, and the faces and states into `data` (cp.async).
__device__ FLUXJAC_FORCEINLINE void fetch_data(const DeviceNodeMap& map, const double* state,
                                               const NodeTileShared::Index& index, const NodeTileShared::Data& data) {
  const NodeTileShared::Bounds b = *index.bounds;
  for (int r = threadIdx.x; r < b.rows; r += blockDim.x)
    for (int k = index.row_start[r]; k < index.row_start[r + 1]; ++k) index.entry_row[k - b.first_entry] = r;
  // Faces: two 16-byte pieces per entry, contiguous.
  const double* faces = map.entry_face + 4 * static_cast<std::int64_t>(b.first_entry);
  for (int k = threadIdx.x; k < 2 * b.entries; k += blockDim.x)
    __pipeline_memcpy_async(data.face + 2 * k, faces + 2 * k, 2 * sizeof(double));
  // Own states: the tile's rows are consecutive in the state the kernel reads (docs: DeviceNodeMap).
  const double* own = state + kBlock * static_cast<std::int64_t>(b.first_row);
  for (int k = threadIdx.x; k < kBlock * b.rows; k += blockDim.x)
    __pipeline_memcpy_async(data.own_state + k, own + k, sizeof(double));
  // Other states: gathered, one 8-byte piece per component.
  for (int k = threadIdx.x; k < kBlock * b.entries; k += blockDim.x) {
    const int entry = k / kBlock;
    __pipeline_memcpy_async(data.other_state + k,
                            state + kBlock * static_cast<std::int64_t>(index.other[entry]) + (k - entry * kBlock),
                            sizeof(double));
  }
}

/// An entry's inputs from a data stage in shared memory (node_pipeline_kernel).
struct SharedEntryLoad {
  NodeTileShared::Data data;
  const std::int32_t* entry_row;
  __device__ FLUXJAC_FORCEINLINE void operator()(int entry, EdgeInput& edge) const {
    const double* own = data.own_state + kBlock * entry_row[entry];
    const double* other = data.other_state + kBlock * entry;
    FLUXJAC_UNROLL
    for (int k = 0; k < kBlock; ++k) {
      edge.left[k] = own[k];
      edge.right[k] = other[k];
    }
    const double* face = data.face + 4 * entry;
    edge.normal = {face[0], face[1], face[2]};
    edge.area = face[3];
  }
  __device__ FLUXJAC_FORCEINLINE double area(int entry) const { return data.face[4 * entry + 3]; }
};

}  // namespace node_pipeline

/// \brief Node-based assembly kernel on a persistent grid: the same tiles, compute and scatter as
/// node_assembly_kernel, but a block takes tile blockIdx.x, then the next one not yet taken (claim_tile), and
/// pipelines their loads (NodeTileShared), so that its warps never wait for a global load. It costs shared memory,
/// barriers and registers; it wins for the lanes that keep few warps resident or whose tiles are long
/// (docs/performance.md section 11).
template <class Policy>
__global__ void __maxnreg__(Policy::kMaxRegisters)
    node_pipeline_kernel(DeviceEdges mesh, DeviceNodeMap map, DeviceJacobian jacobian, int max_entries, int max_rows,
                         int tiles, int stage_flags) {
  extern __shared__ __align__(16) double shared[];  // 16-byte pieces of faces land here (cp.async)
  const NodeTileShared block(shared, max_entries, max_rows);
  // Each index stage's bounds->tile names its tile (tiles or more: none); the first wave takes tiles in block order.
  if (threadIdx.x == 0) block.index(1).bounds->tile = node_pipeline::claim_tile(map);

  // ---- prologue: indices of the first tile, then its data and the indices of the second ----------------------
  node_pipeline::fetch_indices(map, static_cast<std::int32_t>(blockIdx.x), block.index(0));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  node_pipeline::fetch_data(map, mesh.state, block.index(0), block.data(0));
  if (block.index(1).bounds->tile < tiles)
    node_pipeline::fetch_indices(map, block.index(1).bounds->tile, block.index(1));
  __pipeline_commit();

  for (int iteration = 0;; ++iteration) {
    // Data of this tile and indices of the next have landed; everything of the tile before is done.
    __pipeline_wait_prior(0);
    __syncthreads();
    if (block.index(iteration % 3).bounds->tile >= tiles) break;
    {  // a scope, so that the next stages' pointers are not kept in registers through the compute
      const NodeTileShared::Index next = block.index((iteration + 1) % 3);
      if (next.bounds->tile < tiles) node_pipeline::fetch_data(map, mesh.state, next, block.data((iteration + 1) % 2));
      __pipeline_commit();
      // The tile after next: its stage was last read by the tile before this one.
      if (threadIdx.x == 0)
        block.index((iteration + 2) % 3).bounds->tile =
            next.bounds->tile < tiles ? node_pipeline::claim_tile(map) : tiles;
    }
    const NodeTileShared::Data data = block.data(iteration % 2);
    const std::int32_t* entry_row = block.index(iteration % 3).entry_row;
    const int entries = block.index(iteration % 3).bounds->entries;

    const node_pipeline::SharedEntryLoad load{data, entry_row};
    compute_node_tile<Policy>(entries, load, block.staging, stage_flags);
    __syncthreads();
    {
      const NodeTileShared::Index after_next = block.index((iteration + 2) % 3);
      if (after_next.bounds->tile < tiles) node_pipeline::fetch_indices(map, after_next.bounds->tile, after_next);
      __pipeline_commit();
    }
    if (!(stage_flags & kStageScatter)) continue;
    const NodeTileShared::Index index = block.index(iteration % 3);
    const NodeTileShared::Bounds bounds = *index.bounds;
    scatter_node_tile(block.staging, bounds.entries, bounds.rows, bounds.first_row, bounds.first_entry, index.row_start,
                      index.transpose, map.row_node ? index.row_node : nullptr, jacobian);
  }
}

}  // namespace fluxjac
