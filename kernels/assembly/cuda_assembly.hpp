// fluxjac — host side of every GPU variant: device buffers, launch configuration, CUDA-event timing.
//
// Compiled only with CUDA. A variant supplies the kernel through CudaVariant<Policy> (gpu_variant.hpp);
// everything else (one lifecycle for all variants, RAJAPerf habit) lives here.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "assembly/cuda_check.hpp"
#include "types.hpp"
#include "variants/registry.hpp"

namespace fluxjac {

/// \brief Owning device array (cudaMalloc / cudaFree).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) { allocate(count); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { release(); }

  void allocate(std::size_t count) {
    release();
    count_ = count;
    if (count) FLUXJAC_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T)));
  }
  void upload(const T* host, std::size_t count) {
    allocate(count);
    if (count) FLUXJAC_CUDA_CHECK(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* host) const {
    if (count_) FLUXJAC_CUDA_CHECK(cudaMemcpy(host, data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Kernel inputs, read-only during assembly.
struct DeviceEdges {
  const node_index* edges;  ///< [n_edges][2] (L, R)
  const double* normals;    ///< [n_edges][3]
  const double* areas;      ///< [n_edges]
  const std::int32_t* slots;  ///< [n_edges][2]: block index of Aoff[L,R] and Aoff[R,L]
  const double* state;      ///< [n_nodes][5] conservative
  edge_index n_edges;
};

/// Node-based assembly: the block-CSR rows, and per entry (i, j) of row i the edge joining i and j with
/// the side i is on (2 e + side) and the position of the transposed block Aoff[j, i].
struct DeviceNodeMap {
  const std::int32_t* row_ptr;          ///< [n_nodes + 1]
  const std::int32_t* entry_edge;       ///< [nnz]: 2 e + (i == R(e))
  const std::int32_t* entry_transpose;  ///< [nnz]: block index of Aoff[j, i]
  std::int64_t n_nodes;
};

/// Kernel outputs.
struct DeviceJacobian {
  double* adiag;  ///< [n_nodes][25], accumulated with atomics (zeroed before each assembly)
  float* aoff;    ///< [nnz][25], each block written by exactly one edge
};

/// Run-time stage switches: not compile-time constants, so the compiler cannot fold either stage away.
enum StageFlags : int { kStageCompute = 1, kStageScatter = 2 };

/// \brief The GPU variant lifecycle; subclasses provide the kernel launch and its attributes.
class CudaAssembly : public Variant {
 public:
  explicit CudaAssembly(VariantInfo info) : info_(std::move(info)) {}
  const VariantInfo& info() const override { return info_; }
  std::optional<KernelResources> resources() const override;
  void setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) override;
  TimingSamples run(const TimingOptions& options) override;
  void fetch(Jacobian& out) override;

 protected:
  /// Launches the edge-based assembly kernel once on the default stream with the given stage flags.
  virtual void launch_edge(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block,
                           int stage_flags) = 0;
  /// Launches the node-based assembly kernel: `blocks` blocks of `threads`, `shared_bytes` of staging.
  virtual void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                           int nodes_per_block, unsigned blocks, int threads, std::size_t shared_bytes,
                           int stage_flags) = 0;
  virtual cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy) const = 0;
  /// Threads per edge (edge strategy) or per (node, incident edge) (node strategy).
  virtual int lanes(AssemblyStrategy strategy) const = 0;
  /// Work units (edges or nodes) per block when the user asks for none, from the sweeps of
  /// docs/performance.md, fewer where the kernel's registers demand it.
  int default_units_per_block(AssemblyStrategy strategy) const;

 private:
  /// Launch geometry of the node strategy for a given number of nodes per block.
  struct NodeLaunch {
    unsigned blocks;
    int threads;
    std::size_t shared_bytes;
  };
  NodeLaunch node_launch(int nodes_per_block) const;

  VariantInfo info_;
  std::vector<std::int32_t> host_row_ptr_;
  DeviceArray<std::int32_t> row_ptr_, entry_edge_, entry_transpose_;
  DeviceArray<node_index> edges_;
  DeviceArray<double> normals_, areas_, state_, adiag_;
  DeviceArray<std::int32_t> slots_;
  DeviceArray<float> aoff_;
  edge_index n_edges_ = 0;
  std::int64_t n_nodes_ = 0;
  int units_per_block_ = 0;
  AssemblyStrategy strategy_ = AssemblyStrategy::kEdge;
  bool holds_full_assembly_ = false;
  TimingOptions last_options_;
};

}  // namespace fluxjac
