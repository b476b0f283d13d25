// fluxjac — the host side of one GPU variant: launches both assembly kernels of a lane policy (CUB's dispatch
// role; the kernels themselves live in kernels/assembly/assembly_kernel.cuh).
#pragma once

#include "assembly/assembly_kernel.cuh"
#include "gpu/cuda_assembly.hpp"

namespace fluxjac {

/// \brief A GPU variant: the shared lifecycle plus both assembly kernels instantiated for one tuned policy
/// (TunedLanes); its thread blocks come from the tuning in its VariantInfo.
template <class Policy>
class CudaVariant final : public CudaAssembly {
 public:
  using CudaAssembly::CudaAssembly;

 protected:
  void launch_edge(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block,
                   int stage_flags) override {
    const std::size_t shared_bytes = edge_block_shared_bytes(edges_per_block);
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(assembly_kernel<Policy>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_bytes)));
    const edge_index blocks = (edges.n_edges + edges_per_block - 1) / edges_per_block;
    assembly_kernel<Policy><<<static_cast<unsigned>(blocks), edges_per_block * Policy::kLanesPerEdge, shared_bytes>>>(
        edges, jacobian, edges_per_block, stage_flags);
  }
  void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                   const NodeLaunch& launch, int stage_flags) override {
    const auto kernel = node_kernel(launch.orientation);
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(launch.shared_bytes)));
    kernel<<<static_cast<unsigned>(launch.tiles), launch.threads, launch.shared_bytes>>>(
        edges, map, jacobian, launch.max_entries, stage_flags);
  }
  cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy, Orientation orientation) const override {
    cudaFuncAttributes attributes{};
    if (strategy == AssemblyStrategy::kEdge)
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, assembly_kernel<Policy>));
    else
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, node_kernel(orientation)));
    return attributes;
  }
  int lanes(AssemblyStrategy strategy) const override {
    return strategy == AssemblyStrategy::kEdge ? Policy::kLanesPerEdge : Policy::kLanesPerSide;
  }

 private:
  /// The node kernel of an orientation: one per orientation, each staging its blocks as it stores them.
  static auto node_kernel(Orientation orientation) {
    return orientation == Orientation::kTransposed ? node_assembly_kernel<Policy, true>
                                                   : node_assembly_kernel<Policy, false>;
  }
};

}  // namespace fluxjac
