// fluxjac — the host side of one GPU variant: launches both assembly kernels of a lane policy (CUB's dispatch
// role; the kernels themselves live in kernels/assembly/assembly_kernel.cuh).
#pragma once

#include "assembly/assembly_kernel.cuh"
#include "gpu/cuda_assembly.hpp"

namespace fluxjac {

/// \brief A GPU variant: the shared lifecycle plus the assembly kernels instantiated for one tuned policy
/// (TunedLanes); its thread blocks come from the tuning in its VariantInfo.
template <class Policy>
class CudaVariant final : public CudaAssembly {
 public:
  using CudaAssembly::CudaAssembly;

 protected:
  void launch_edge(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block, int stage_flags,
                   bool residual) override {
    const std::size_t shared_bytes = edge_block_shared_bytes(edges_per_block, residual);
    const auto kernel = edge_kernel(residual);
    FLUXJAC_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    const edge_index blocks = (edges.n_edges + edges_per_block - 1) / edges_per_block;
    kernel<<<static_cast<unsigned>(blocks), edges_per_block * Policy::kLanesPerEdge, shared_bytes>>>(
        edges, jacobian, edges_per_block, stage_flags);
  }
  void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                   const NodeLaunch& launch, int stage_flags) override {
    const auto kernel = node_kernel(launch.form);
    FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(launch.shared_bytes)));
    kernel<<<static_cast<unsigned>(launch.tiles), launch.threads, launch.shared_bytes>>>(
        edges, map, jacobian, launch.max_entries, stage_flags);
  }
  cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy, KernelForm form) const override {
    cudaFuncAttributes attributes{};
    if (strategy == AssemblyStrategy::kEdge)
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, edge_kernel(form.residual)));
    else
      FLUXJAC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, node_kernel(form)));
    return attributes;
  }
  int lanes(AssemblyStrategy strategy) const override {
    return strategy == AssemblyStrategy::kEdge ? Policy::kLanesPerEdge : Policy::kLanesPerSide;
  }

 private:
  /// The edge kernel with or without the residual.
  static auto edge_kernel(bool residual) {
    return residual ? assembly_kernel<Policy, true> : assembly_kernel<Policy, false>;
  }
  /// The node kernel of a form: one per orientation, each staging its blocks as it stores them, with or without the
  /// residual.
  static auto node_kernel(KernelForm form) {
    const bool transposed = form.orientation == Orientation::kTransposed;
    if (form.residual)
      return transposed ? node_assembly_kernel<Policy, true, true> : node_assembly_kernel<Policy, false, true>;
    return transposed ? node_assembly_kernel<Policy, true, false> : node_assembly_kernel<Policy, false, false>;
  }
};

}  // namespace fluxjac
