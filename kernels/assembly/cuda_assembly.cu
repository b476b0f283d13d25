#include "assembly/cuda_assembly.hpp"

#include <algorithm>
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
  const cudaFuncAttributes attributes = kernel_attributes();
  KernelResources resources;
  resources.registers = attributes.numRegs;
  resources.local_bytes = attributes.localSizeBytes;
  const int edges_per_block = edges_per_block_ ? edges_per_block_ : default_edges_per_block();
  resources.shared_bytes = attributes.sharedSizeBytes + shared_bytes(edges_per_block);
  resources.max_block_threads = attributes.maxThreadsPerBlock;
  resources.edges_per_block = edges_per_block;
  resources.block_threads = edges_per_block * lanes_per_edge();
  return resources;
}

// 16 edges per block was the best or near-best setting of every variant in the sweep of
// docs/performance.md (H200, paper-size mesh): small blocks let many blocks per SM overlap one block's
// compute with another's scatter.
int CudaAssembly::default_edges_per_block() const {
  const int max_threads = kernel_attributes().maxThreadsPerBlock;
  return std::max(1, std::min(16, max_threads / lanes_per_edge()));
}

void CudaAssembly::setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) {
  if (pattern.nnz() > std::numeric_limits<std::int32_t>::max() / kBlockEntries)
    fail(ExitCode::kInvalidInput, "mesh too large for the GPU variants: {} off-diagonal blocks (limit {})",
         pattern.nnz(), std::numeric_limits<std::int32_t>::max() / kBlockEntries);
  n_edges_ = mesh.n_edges();
  std::vector<std::int32_t> slots(static_cast<std::size_t>(2 * n_edges_));
  for (edge_index e = 0; e < n_edges_; ++e) {
    slots[2 * e] = static_cast<std::int32_t>(pattern.slot_lr[e]);
    slots[2 * e + 1] = static_cast<std::int32_t>(pattern.slot_rl[e]);
  }
  edges_.upload(mesh.edges.data(), mesh.edges.size());
  normals_.upload(mesh.normals.data(), mesh.normals.size());
  areas_.upload(mesh.areas.data(), mesh.areas.size());
  slots_.upload(slots.data(), slots.size());
  state_.upload(state.Q.data(), state.Q.size());
  adiag_.allocate(static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries);
  aoff_.allocate(static_cast<std::size_t>(pattern.nnz()) * kBlockEntries);
  holds_full_assembly_ = false;
}

TimingSamples CudaAssembly::run(const TimingOptions& options) {
  edges_per_block_ = options.edges_per_block > 0 ? options.edges_per_block : default_edges_per_block();
  const int max_threads = kernel_attributes().maxThreadsPerBlock;  // limited by the kernel's registers
  if (edges_per_block_ * lanes_per_edge() > max_threads)
    fail(ExitCode::kUsage,
         "--edges-per-block {} gives {} threads per block for '{}' ({} lanes per edge); its kernel allows at most {} "
         "(registers): use at most {} edges per block",
         edges_per_block_, edges_per_block_ * lanes_per_edge(), info_.name, lanes_per_edge(), max_threads,
         max_threads / lanes_per_edge());
  int flags = kStageCompute | kStageScatter;
  if (options.mode == AssemblyMode::kComputeOnly) flags = kStageCompute;
  if (options.mode == AssemblyMode::kScatterOnly) flags = kStageScatter;

  const DeviceEdges edges{edges_.data(), normals_.data(), areas_.data(), slots_.data(), state_.data(), n_edges_};
  const DeviceJacobian jacobian{adiag_.data(), aoff_.data()};
  EventTimer zero_timer, assembly_timer;
  TimingSamples samples;
  for (int rep = 0; rep < options.warmup + options.reps; ++rep) {
    zero_timer.start();
    FLUXJAC_CUDA_CHECK(cudaMemsetAsync(adiag_.data(), 0, adiag_.size() * sizeof(double)));
    zero_timer.stop();
    assembly_timer.start();
    launch(edges, jacobian, edges_per_block_, flags);
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
  return samples;
}

void CudaAssembly::fetch(Jacobian& out) {
  if (!holds_full_assembly_) run(TimingOptions{0, 1, AssemblyMode::kFull, edges_per_block_});
  out.adiag.resize(adiag_.size());
  out.aoff.resize(aoff_.size());
  adiag_.download(out.adiag.data());
  aoff_.download(out.aoff.data());
}

}  // namespace fluxjac
