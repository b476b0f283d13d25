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

/// Node-based assembly: the block-CSR rows; per entry (i, j) of row i the column j, the position of the
/// transposed block Aoff[j, i] and the face of the edge joining i and j as seen from i (outward unit normal
/// and area, one 32-byte record, so that a block reads its faces contiguously); and the rows of each thread
/// block (whole rows packed to a capacity of entries at setup).
struct DeviceNodeMap {
  const std::int32_t* row_ptr;          ///< [n_nodes + 1]
  const node_index* col_idx;            ///< [nnz]: j
  const std::int32_t* entry_transpose;  ///< [nnz]: block index of Aoff[j, i]
  const double* entry_face;             ///< [nnz][4]: n_x, n_y, n_z (pointing away from i), area
  const std::int32_t* block_first_row;  ///< [blocks + 1]
};

/// Kernel outputs.
struct DeviceJacobian {
  double* adiag;  ///< [n_nodes][25], accumulated with atomics (zeroed before each assembly)
  float* aoff;    ///< [nnz][25], each block written by exactly one edge
};

/// Dynamic shared memory of one edge-strategy block: the staged local Jacobians (two blocks of 25 doubles per edge).
inline std::size_t edge_block_shared_bytes(int edges_per_block) {
  return static_cast<std::size_t>(edges_per_block) * 2 * kBlockEntries * sizeof(double);
}

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
  /// Launch geometry of the node strategy: rows packed into blocks of at most `capacity` entries.
  struct NodeLaunch {
    int capacity = 0;
    unsigned blocks = 0;
    int threads = 0;
    int max_entries = 0;  ///< most entries of any block (above capacity only for a row longer than it)
    std::size_t shared_bytes = 0;
  };
  /// Launches the node-based assembly kernel.
  virtual void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                           const NodeLaunch& launch, int stage_flags) = 0;
  virtual cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy) const = 0;
  /// Threads per edge (edge strategy) or per (node, incident edge) (node strategy).
  virtual int lanes(AssemblyStrategy strategy) const = 0;
  /// Work units (edges or nodes) per block when the user asks for none, from the sweeps of
  /// docs/performance.md, fewer where the kernel's registers demand it.
  int default_units_per_block(AssemblyStrategy strategy) const;

 private:
  /// Packs whole rows, in order, into blocks of at most `capacity` entries and rows; returns the launch
  /// geometry and, when asked, each block's first row (plus the end).
  NodeLaunch plan_rows(int capacity, std::vector<std::int32_t>* block_first_row) const;

  VariantInfo info_;
  std::vector<std::int32_t> host_row_ptr_;
  DeviceArray<std::int32_t> row_ptr_, entry_transpose_, block_first_row_;
  DeviceArray<double> entry_face_;
  DeviceArray<node_index> col_idx_;
  NodeLaunch node_launch_;
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
