// fluxjac — the one assembly kernel of the AD variants (the paper's kernel design).
//
// A block takes a group of edges; each of an edge's lanes writes its derivative columns into a local
// Jacobian staged in shared memory; after a barrier the block scatters all local Jacobians with
// coalesced accesses: atomics into Adiag (float64), plain stores into Aoff (float32, one edge per slot).
#pragma once

#include "assembly/cuda_assembly.hpp"
#include "assembly/edge_input.hpp"

namespace fluxjac {

/// Output entries per edge: Adiag[L], Adiag[R], Aoff[L,R], Aoff[R,L], 25 each.
inline constexpr int kScatterEntriesPerEdge = 4 * kBlockEntries;

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

/// \brief Scatters `count` staged local Jacobians (DESIGN.md 1.1 signs); consecutive threads write
/// consecutive entries of one block, so every warp access is contiguous.
__device__ FLUXJAC_FORCEINLINE void scatter_block(const double* staging, edge_index first, int count,
                                                  const DeviceEdges& mesh, const DeviceJacobian& jacobian) {
  for (int item = threadIdx.x; item < count * kScatterEntriesPerEdge; item += blockDim.x) {
    const int local_edge = item / kScatterEntriesPerEdge;
    const int target = (item - local_edge * kScatterEntriesPerEdge) / kBlockEntries;
    const int entry = item - local_edge * kScatterEntriesPerEdge - target * kBlockEntries;
    const edge_index e = first + local_edge;
    const double* local = staging + local_edge * kLocalJacobianEntries;
    switch (target) {
      case 0:  // Adiag[L] += JL
        atomicAdd(&jacobian.adiag[static_cast<std::int64_t>(__ldg(&mesh.edges[2 * e])) * kBlockEntries + entry],
                  local[entry]);
        break;
      case 1:  // Adiag[R] -= JR
        atomicAdd(&jacobian.adiag[static_cast<std::int64_t>(__ldg(&mesh.edges[2 * e + 1])) * kBlockEntries + entry],
                  -local[kBlockEntries + entry]);
        break;
      case 2:  // Aoff[L,R] = JR
        jacobian.aoff[static_cast<std::int64_t>(__ldg(&mesh.slots[2 * e])) * kBlockEntries + entry] =
            static_cast<float>(local[kBlockEntries + entry]);
        break;
      default:  // Aoff[R,L] = -JL
        jacobian.aoff[static_cast<std::int64_t>(__ldg(&mesh.slots[2 * e + 1])) * kBlockEntries + entry] =
            static_cast<float>(-local[entry]);
        break;
    }
  }
}

/// \brief Assembly kernel of a lane policy: Policy::kLanesPerEdge threads per edge, each calling
/// Policy::compute(lane, edge, local). Dynamic shared memory: edges_per_block local Jacobians.
template <class Policy>
__global__ void assembly_kernel(DeviceEdges mesh, DeviceJacobian jacobian, int edges_per_block, int stage_flags) {
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
  if (stage_flags & kStageScatter) scatter_block(staging, first, count, mesh, jacobian);
}

/// \brief A GPU variant: the shared lifecycle plus the assembly kernel instantiated for one policy.
template <class Policy>
class CudaVariant final : public CudaAssembly {
 public:
  using CudaAssembly::CudaAssembly;

 protected:
  void launch(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block,
              int stage_flags) override {
    const std::size_t shared_bytes = static_cast<std::size_t>(edges_per_block) * kLocalJacobianEntries * sizeof(double);
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(assembly_kernel<Policy>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_bytes)));
    const edge_index blocks = (edges.n_edges + edges_per_block - 1) / edges_per_block;
    assembly_kernel<Policy><<<static_cast<unsigned>(blocks), edges_per_block * Policy::kLanesPerEdge, shared_bytes>>>(
        edges, jacobian, edges_per_block, stage_flags);
  }
  cudaFuncAttributes kernel_attributes() const override {
    cudaFuncAttributes attributes{};
    FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, assembly_kernel<Policy>));
    return attributes;
  }
  int lanes_per_edge() const override { return Policy::kLanesPerEdge; }
};

}  // namespace fluxjac
