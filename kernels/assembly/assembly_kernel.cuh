// fluxjac — the one assembly kernel of the AD variants (the paper's kernel design).
//
// A block takes a group of edges; each of an edge's lanes writes its derivative columns into a local
// Jacobian staged in shared memory; after a barrier the block scatters all local Jacobians with
// coalesced accesses: atomics into Adiag (float64), plain stores into Aoff (float32, one edge per slot).
#pragma once

#include "assembly/cuda_assembly.hpp"
#include "assembly/edge_input.hpp"

namespace fluxjac {

/// Aoff entries per edge: Aoff[L,R] and Aoff[R,L], 25 each.
inline constexpr int kAoffEntriesPerEdge = 2 * kBlockEntries;

__device__ FLUXJAC_FORCEINLINE EdgeInput load_edge(const DeviceEdges& mesh, edge_index e) {
  EdgeInput edge;
  const node_index left = __ldg(&mesh.edges[2 * e]);
  const node_index right = __ldg(&mesh.edges[2 * e + 1]);
  FLUXJAC_UNROLL
  for (int k = 0; k < kBlock; ++k) {
    edge.left[k] = __ldg(&mesh.state[static_cast<std::int64_t>(left) * kBlock + k]);
    edge.right[k] = __ldg(&mesh.state[static_cast<std::int64_t>(right) * kBlock + k]);
  }
  edge.normal = {__ldg(&mesh.normals[3 * e]), __ldg(&mesh.normals[3 * e + 1]), __ldg(&mesh.normals[3 * e + 2])};
  edge.area = __ldg(&mesh.areas[e]);
  return edge;
}

/// Dynamic shared memory of one block: the staged local Jacobians.
__host__ __device__ inline std::size_t block_shared_bytes(int edges_per_block) {
  return static_cast<std::size_t>(edges_per_block) * kLocalJacobianEntries * sizeof(double);
}

/// \brief Adds the block's local Jacobians to Adiag: Adiag[L] += JL, Adiag[R] -= JR, one atomic per entry;
/// 25 consecutive threads update the 25 consecutive doubles of one block. (Sorting the block's
/// contributions by node to pre-sum them was measured slower: docs/performance.md.)
__device__ FLUXJAC_FORCEINLINE void scatter_adiag(const double* staging, edge_index first, int count,
                                                  const DeviceEdges& mesh, double* adiag) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int side = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: L gets +JL, 1: R gets -JR
    const int entry = item - local_edge * kAoffEntriesPerEdge - side * kBlockEntries;
    const double value = staging[local_edge * kLocalJacobianEntries + side * kBlockEntries + entry];
    const node_index node = __ldg(&mesh.edges[2 * (first + local_edge) + side]);
    atomicAdd(&adiag[static_cast<std::int64_t>(node) * kBlockEntries + entry], side == 0 ? value : -value);
  }
}

/// \brief Writes the block's Aoff blocks (DESIGN.md 1.1 signs): plain stores, each slot belongs to one
/// edge; consecutive threads write consecutive entries of one block.
__device__ FLUXJAC_FORCEINLINE void scatter_aoff(const double* staging, edge_index first, int count,
                                                 const DeviceEdges& mesh, float* aoff) {
  for (int item = threadIdx.x; item < count * kAoffEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kAoffEntriesPerEdge;
    const int target = (item - local_edge * kAoffEntriesPerEdge) / kBlockEntries;  // 0: Aoff[L,R], 1: Aoff[R,L]
    const int entry = item - local_edge * kAoffEntriesPerEdge - target * kBlockEntries;
    const edge_index e = first + local_edge;
    const double* local = staging + local_edge * kLocalJacobianEntries;
    const double value = target == 0 ? local[kBlockEntries + entry] : -local[entry];  // JR, -JL
    aoff[static_cast<std::int64_t>(__ldg(&mesh.slots[2 * e + target])) * kBlockEntries + entry] =
        static_cast<float>(value);
  }
}

/// \brief Assembly kernel of a lane policy: Policy::kLanesPerEdge threads per edge, each calling
/// Policy::compute(lane, edge, local). Dynamic shared memory: edges_per_block local Jacobians.
template <class Policy>
__global__ void __maxnreg__(Policy::kMaxRegisters) assembly_kernel(DeviceEdges mesh, DeviceJacobian jacobian, int edges_per_block, int stage_flags) {
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

/// \brief Node-based assembly kernel: a block takes `nodes_per_block` consecutive nodes and every edge
/// incident to them (the rows of the block-CSR pattern); Policy::kLanesPerSide threads per incident edge
/// compute D = A dF(Q_i, Q_j, n_out)/dQ_i, the derivative of node i's outward flux with respect to its own
/// state. Then Adiag[i] = sum_j D_ij (summed in row order, stored once: no atomics, no zeroing,
/// deterministic) and Aoff[j, i] = -D_ij. Equivalent to the edge-based signs of DESIGN.md 1.1: for i = L,
/// D = JL; for i = R, D = -JR.
template <class Policy>
__global__ void __maxnreg__(Policy::kMaxRegisters) node_assembly_kernel(DeviceEdges mesh, DeviceNodeMap map, DeviceJacobian jacobian,
                                     int nodes_per_block, int stage_flags) {
  extern __shared__ double staging[];  // [incident edges of the block's nodes][25]
  constexpr int kLanes = Policy::kLanesPerSide;
  const std::int64_t first_node = static_cast<std::int64_t>(blockIdx.x) * nodes_per_block;
  const int node_count = static_cast<int>(min(static_cast<std::int64_t>(nodes_per_block), map.n_nodes - first_node));
  const int first_entry = __ldg(&map.row_ptr[first_node]);
  const int entry_count = __ldg(&map.row_ptr[first_node + node_count]) - first_entry;

  // ---- compute: the own-side derivative block of every incident edge ------------------------------------
  for (int work = threadIdx.x; work < entry_count * kLanes; work += blockDim.x) {
    const int entry = work / kLanes;
    const int lane = work - entry * kLanes;
    const int code = __ldg(&map.entry_edge[first_entry + entry]);
    double* block = staging + entry * kBlockEntries;
    if (stage_flags & kStageCompute) {
      const EdgeInput edge = load_edge(mesh, code >> 1);
      Policy::compute_side(lane, edge, code & 1, edge.area, block);
    } else {  // scatter-only: cheap values the compiler cannot predict
      const double area = __ldg(&mesh.areas[code >> 1]);
      for (int i = lane; i < kBlockEntries; i += kLanes) block[i] = area * i;
    }
  }
  __syncthreads();
  if (!(stage_flags & kStageScatter)) return;

  // ---- Adiag: each node sums its row's blocks in order and stores the result --------------------------
  for (int item = threadIdx.x; item < node_count * kBlockEntries; item += blockDim.x) {
    const int local_node = item / kBlockEntries;
    const int entry = item - local_node * kBlockEntries;
    const int row_begin = __ldg(&map.row_ptr[first_node + local_node]) - first_entry;
    const int row_end = __ldg(&map.row_ptr[first_node + local_node + 1]) - first_entry;
    double sum = 0.0;
    for (int k = row_begin; k < row_end; ++k) sum += staging[k * kBlockEntries + entry];
    jacobian.adiag[(first_node + local_node) * kBlockEntries + entry] = sum;
  }
  // ---- Aoff[j, i] = -D_ij: plain stores, 25 consecutive threads per block ------------------------------
  for (int item = threadIdx.x; item < entry_count * kBlockEntries; item += blockDim.x) {
    const int entry = item / kBlockEntries;
    const int component = item - entry * kBlockEntries;
    const std::int64_t target = __ldg(&map.entry_transpose[first_entry + entry]);
    jacobian.aoff[target * kBlockEntries + component] = static_cast<float>(-staging[item]);
  }
}

/// \brief A GPU variant: the shared lifecycle plus both assembly kernels instantiated for one policy.
template <class Policy>
class CudaVariant final : public CudaAssembly {
 public:
  using CudaAssembly::CudaAssembly;

 protected:
  void launch_edge(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block,
                   int stage_flags) override {
    const std::size_t shared_bytes = block_shared_bytes(edges_per_block);
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(assembly_kernel<Policy>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_bytes)));
    const edge_index blocks = (edges.n_edges + edges_per_block - 1) / edges_per_block;
    assembly_kernel<Policy><<<static_cast<unsigned>(blocks), edges_per_block * Policy::kLanesPerEdge, shared_bytes>>>(
        edges, jacobian, edges_per_block, stage_flags);
  }
  void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                   int nodes_per_block, unsigned blocks, int threads, std::size_t shared_bytes,
                   int stage_flags) override {
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(node_assembly_kernel<Policy>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    node_assembly_kernel<Policy><<<blocks, threads, shared_bytes>>>(edges, map, jacobian, nodes_per_block, stage_flags);
  }
  cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy) const override {
    cudaFuncAttributes attributes{};
    if (strategy == AssemblyStrategy::kEdge)
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, assembly_kernel<Policy>));
    else
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, node_assembly_kernel<Policy>));
    return attributes;
  }
  int lanes(AssemblyStrategy strategy) const override {
    return strategy == AssemblyStrategy::kEdge ? Policy::kLanesPerEdge : Policy::kLanesPerSide;
  }
};

}  // namespace fluxjac
