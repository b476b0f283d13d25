#include "assembly/cuda_assembly.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "assembly/edge_input.hpp"

namespace fluxjac {
namespace {

/// Times a stretch of default-stream work with CUDA events.
class EventTimer {
 public:
  EventTimer() {
    FLUXJAC_CUDA_CHECK(cudaEventCreate(&start_));
    FLUXJAC_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() { FLUXJAC_CUDA_CHECK(cudaEventRecord(start_)); }
  void stop() { FLUXJAC_CUDA_CHECK(cudaEventRecord(stop_)); }
  double elapsed_ms() {
    FLUXJAC_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    FLUXJAC_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace

std::optional<KernelResources> CudaAssembly::resources() const {
  const AssemblyStrategy strategy = units_per_block_ ? strategy_ : AssemblyStrategy::kEdge;
  const cudaFuncAttributes attributes = kernel_attributes(strategy);
  KernelResources resources;
  resources.registers = attributes.numRegs;
  resources.local_bytes = attributes.localSizeBytes;
  resources.max_block_threads = attributes.maxThreadsPerBlock;
  const int units = units_per_block_ ? units_per_block_ : default_units_per_block(strategy);
  resources.edges_per_block = units;
  if (strategy == AssemblyStrategy::kEdge) {
    resources.shared_bytes = attributes.sharedSizeBytes + static_cast<std::size_t>(units) * kLocalJacobianEntries * sizeof(double);
    resources.block_threads = units * lanes(strategy);
  } else if (!host_row_ptr_.empty()) {
    const NodeLaunch launch = node_launch(units);
    resources.shared_bytes = attributes.sharedSizeBytes + launch.shared_bytes;
    resources.block_threads = launch.threads;
  }
  return resources;
}

int CudaAssembly::default_units_per_block(AssemblyStrategy strategy) const {
  const int max_threads = kernel_attributes(strategy).maxThreadsPerBlock;
  // Edge strategy: 16 edges per block was the best or near-best setting of every variant (H200 sweep):
  // small blocks let many blocks per SM overlap one block's compute with another's scatter.
  if (strategy == AssemblyStrategy::kEdge) return std::max(1, std::min(16, max_threads / lanes(strategy)));
  // Node strategy: 2 nodes (about 22 incident edges on the paper-size mesh) per block was best for the
  // one-thread-per-side variants (hd, dn_2, dn5_2, edn5_2), 32 for the five-thread ones (H200 sweep).
  return lanes(strategy) == 1 ? 2 : 32;
}

CudaAssembly::NodeLaunch CudaAssembly::node_launch(int nodes_per_block) const {
  const std::int64_t n_blocks = (n_nodes_ + nodes_per_block - 1) / nodes_per_block;
  std::int64_t max_entries = 0;
  for (std::int64_t b = 0; b < n_blocks; ++b) {
    const std::int64_t first = b * nodes_per_block, last = std::min(first + nodes_per_block, n_nodes_);
    max_entries = std::max<std::int64_t>(max_entries, host_row_ptr_[last] - host_row_ptr_[first]);
  }
  const double mean_entries = double(host_row_ptr_.back()) / double(std::max<std::int64_t>(n_blocks, 1));
  const int max_threads = kernel_attributes(AssemblyStrategy::kNode).maxThreadsPerBlock;
  // One thread per lane of the average block, rounded to whole warps; bigger blocks loop.
  int threads = static_cast<int>(std::ceil(mean_entries * lanes(AssemblyStrategy::kNode) / 32.0)) * 32;
  threads = std::max(32, std::min(threads, max_threads / 32 * 32));
  return {static_cast<unsigned>(n_blocks), threads,
          static_cast<std::size_t>(max_entries) * kBlockEntries * sizeof(double)};
}

void CudaAssembly::setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) {
  // Slots and row pointers are int32 block indices (entry offsets are computed in int64).
  if (pattern.nnz() > std::numeric_limits<std::int32_t>::max())
    fail(ExitCode::kInvalidInput, "mesh too large for the GPU variants: {} off-diagonal blocks (limit {})",
         pattern.nnz(), std::numeric_limits<std::int32_t>::max());
  n_edges_ = mesh.n_edges();
  n_nodes_ = mesh.n_nodes;
  std::vector<std::int32_t> slots(static_cast<std::size_t>(2 * n_edges_));
  std::vector<std::int32_t> entry_edge(static_cast<std::size_t>(pattern.nnz()));
  std::vector<std::int32_t> entry_transpose(static_cast<std::size_t>(pattern.nnz()));
  for (edge_index e = 0; e < n_edges_; ++e) {
    const auto lr = static_cast<std::int32_t>(pattern.slot_lr[e]), rl = static_cast<std::int32_t>(pattern.slot_rl[e]);
    slots[2 * e] = lr;
    slots[2 * e + 1] = rl;
    entry_edge[lr] = static_cast<std::int32_t>(2 * e);  // row L: L is side 0
    entry_edge[rl] = static_cast<std::int32_t>(2 * e + 1);
    entry_transpose[lr] = rl;
    entry_transpose[rl] = lr;
  }
  host_row_ptr_.assign(pattern.row_ptr.begin(), pattern.row_ptr.end());
  edges_.upload(mesh.edges.data(), mesh.edges.size());
  normals_.upload(mesh.normals.data(), mesh.normals.size());
  areas_.upload(mesh.areas.data(), mesh.areas.size());
  slots_.upload(slots.data(), slots.size());
  row_ptr_.upload(host_row_ptr_.data(), host_row_ptr_.size());
  entry_edge_.upload(entry_edge.data(), entry_edge.size());
  entry_transpose_.upload(entry_transpose.data(), entry_transpose.size());
  state_.upload(state.Q.data(), state.Q.size());
  adiag_.allocate(static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries);
  aoff_.allocate(static_cast<std::size_t>(pattern.nnz()) * kBlockEntries);
  holds_full_assembly_ = false;
}

TimingSamples CudaAssembly::run(const TimingOptions& options) {
  strategy_ = options.strategy;
  units_per_block_ = options.edges_per_block > 0 ? options.edges_per_block : default_units_per_block(strategy_);
  const int max_threads = kernel_attributes(strategy_).maxThreadsPerBlock;  // limited by the kernel's registers
  if (strategy_ == AssemblyStrategy::kEdge && units_per_block_ * lanes(strategy_) > max_threads)
    fail(ExitCode::kUsage,
         "--edges-per-block {} gives {} threads per block for '{}' ({} lanes per edge); its kernel allows at most {} "
         "(registers): use at most {} edges per block",
         units_per_block_, units_per_block_ * lanes(strategy_), info_.name, lanes(strategy_), max_threads,
         max_threads / lanes(strategy_));
  int flags = kStageCompute | kStageScatter;
  if (options.mode == AssemblyMode::kComputeOnly) flags = kStageCompute;
  if (options.mode == AssemblyMode::kScatterOnly) flags = kStageScatter;

  const DeviceEdges edges{edges_.data(), normals_.data(), areas_.data(), slots_.data(), state_.data(), n_edges_};
  const DeviceNodeMap map{row_ptr_.data(), entry_edge_.data(), entry_transpose_.data(), n_nodes_};
  const DeviceJacobian jacobian{adiag_.data(), aoff_.data()};
  NodeLaunch node{};
  if (strategy_ == AssemblyStrategy::kNode) {
    node = node_launch(units_per_block_);
    if (node.shared_bytes > 227 * 1024)
      fail(ExitCode::kUsage, "--edges-per-block {} (nodes per block, node assembly) needs {} bytes of shared memory; "
           "use fewer nodes per block", units_per_block_, node.shared_bytes);
  }
  EventTimer zero_timer, assembly_timer;
  TimingSamples samples;
  for (int rep = 0; rep < options.warmup + options.reps; ++rep) {
    zero_timer.start();
    // Only the edge strategy accumulates into Adiag; the node strategy writes every block once.
    if (strategy_ == AssemblyStrategy::kEdge)
      FLUXJAC_CUDA_CHECK(cudaMemsetAsync(adiag_.data(), 0, adiag_.size() * sizeof(double)));
    zero_timer.stop();
    assembly_timer.start();
    if (strategy_ == AssemblyStrategy::kEdge)
      launch_edge(edges, jacobian, units_per_block_, flags);
    else
      launch_node(edges, map, jacobian, units_per_block_, node.blocks, node.threads, node.shared_bytes, flags);
    FLUXJAC_CUDA_CHECK_LAUNCH();
    assembly_timer.stop();
    const double zero_ms = zero_timer.elapsed_ms();
    const double assembly_ms = assembly_timer.elapsed_ms();
    if (rep >= options.warmup) {
      samples.zero_ms.push_back(zero_ms);
      samples.assembly_ms.push_back(assembly_ms);
    }
  }
  FLUXJAC_CUDA_CHECK(cudaDeviceSynchronize());
  holds_full_assembly_ = options.mode == AssemblyMode::kFull;
  last_options_ = options;
  return samples;
}

void CudaAssembly::fetch(Jacobian& out) {
  if (!holds_full_assembly_) {
    TimingOptions full = last_options_;
    full.warmup = 0;
    full.reps = 1;
    full.mode = AssemblyMode::kFull;
    run(full);
  }
  out.adiag.resize(adiag_.size());
  out.aoff.resize(aoff_.size());
  adiag_.download(out.adiag.data());
  aoff_.download(out.aoff.data());
}

}  // namespace fluxjac
