// The GPU halo exchange: pack the rows peers need, move them GPU to GPU with NCCL (or through host memory and MPI
// where NCCL cannot be used), unpack them into the ghost rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_check.hpp"
#include "gpu/device_array.hpp"
#include "part/ghost_exchange.hpp"
#include "util/error.hpp"

#if defined(FLUXJAC_WITH_NCCL)
#include <nccl.h>
#endif

namespace fluxjac {
namespace {

__global__ void gather_rows(const double* __restrict__ state, const node_index* __restrict__ nodes, std::int64_t count,
                            double* __restrict__ rows) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count * kBlock;
       i += std::int64_t{gridDim.x} * blockDim.x)
    rows[i] = state[std::int64_t{nodes[i / kBlock]} * kBlock + i % kBlock];
}

__global__ void scatter_rows(const double* __restrict__ rows, const node_index* __restrict__ nodes, std::int64_t count,
                             double* __restrict__ state) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count * kBlock;
       i += std::int64_t{gridDim.x} * blockDim.x)
    state[std::int64_t{nodes[i / kBlock]} * kBlock + i % kBlock] = rows[i];
}

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count * kBlock + 255) / 256, 1, 65535));
}

#if defined(FLUXJAC_WITH_NCCL)
#define FLUXJAC_NCCL_CHECK(call)                                                                                \
  do {                                                                                                          \
    const ncclResult_t result_ = (call);                                                                        \
    if (result_ != ncclSuccess)                                                                                 \
      fail(ExitCode::kRuntime, "{}:{}: {} failed: {}", __FILE__, __LINE__, #call, ncclGetErrorString(result_)); \
  } while (0)
#endif

class DeviceExchange final : public DeviceGhostExchange {
 public:
  /// The rank's own part (no collective; a failure on one rank reaches the others in connect): the device buffers,
  /// the stream and the device count.
  DeviceExchange(const Communicator& comm, const HaloPlan& halo) : comm_(comm), halo_(halo) {
    send_nodes_.upload(halo.send_nodes.data(), halo.send_nodes.size());
    receive_nodes_.upload(halo.receive_nodes.data(), halo.receive_nodes.size());
    send_rows_.allocate(halo.send_nodes.size() * kBlock);
    receive_rows_.allocate(halo.receive_nodes.size() * kBlock);
    // The highest priority: its few small kernels take the SMs as the default stream's blocks (a product of the
    // rows without ghosts, meanwhile) retire, instead of after them.
    int lowest = 0, highest = 0;
    FLUXJAC_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    FLUXJAC_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, highest));
    FLUXJAC_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    FLUXJAC_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    FLUXJAC_CUDA_CHECK(cudaGetDeviceCount(&devices_));
  }

  /// The ranks' part (collective: every rank, after its constructor): the transport, decided alike on every rank, and
  /// NCCL's communicator or the host staging buffers. A failure on one rank reaches the others in the next
  /// collective (ranks/communicator.hpp).
  void connect() {
    // NCCL needs one GPU per rank: every rank of a node on a device of its own.
    bool nccl = false;
#if defined(FLUXJAC_WITH_NCCL)
    nccl = comm_.node_size() <= devices_;
#endif
    nccl = comm_.max(std::int64_t{nccl ? 0 : 1}) == 0;
#if defined(FLUXJAC_WITH_NCCL)
    if (nccl) {
      ncclUniqueId id{};
      if (comm_.is_root()) FLUXJAC_NCCL_CHECK(ncclGetUniqueId(&id));
      comm_.broadcast_bytes(&id, sizeof id);
      const ncclResult_t init = ncclCommInitRank(&nccl_, comm_.size(), id, comm_.rank());
      if (init != ncclSuccess) nccl_ = nullptr;
      use_nccl_ = nccl_ != nullptr;
      if (init != ncclSuccess)
        fail(ExitCode::kRuntime, "ncclCommInitRank failed: {} (the GPU ghost exchange)", ncclGetErrorString(init));
      return;
    }
#endif
    host_send_.resize(send_rows_.size());
    host_receive_.resize(receive_rows_.size());
  }

  ~DeviceExchange() override {
#if defined(FLUXJAC_WITH_NCCL)
    if (use_nccl_) ncclCommDestroy(nccl_);
#endif
    cudaEventDestroy(done_);
    cudaEventDestroy(ready_);
    cudaStreamDestroy(stream_);
  }

  std::string transport() const override { return use_nccl_ ? "NCCL" : "MPI via host"; }

  double refresh(double* state) override {
    // The assembly before ran on the default stream: the states must not change under it.
    FLUXJAC_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start_time = std::chrono::steady_clock::now();
    start(state, [] {});
    FLUXJAC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_time).count();
  }

  void start(double* state, const std::function<void()>& meanwhile) override {
    // On the exchange's own stream, after the work already on the default stream (which wrote the rows it sends).
    FLUXJAC_CUDA_CHECK(cudaEventRecord(ready_, 0));
    FLUXJAC_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_, 0));
    const auto sends = static_cast<std::int64_t>(halo_.send_nodes.size());
    const auto receives = static_cast<std::int64_t>(halo_.receive_nodes.size());
    if (sends > 0)
      gather_rows<<<grid_for(sends), 256, 0, stream_>>>(state, send_nodes_.data(), sends, send_rows_.data());
    FLUXJAC_CUDA_CHECK_LAUNCH();
    if (!use_nccl_ && sends > 0)
      FLUXJAC_CUDA_CHECK(cudaMemcpyAsync(host_send_.data(), send_rows_.data(), host_send_.size() * sizeof(double),
                                         cudaMemcpyDeviceToHost, stream_));
    meanwhile();  // on the device before the host meets the other ranks
    if (use_nccl_) {
#if defined(FLUXJAC_WITH_NCCL)
      comm_.barrier();  // NCCL carries no failures: a rank that failed since the last exchange ends this one
      FLUXJAC_NCCL_CHECK(ncclGroupStart());
      for (std::size_t p = 0; p < halo_.peers.size(); ++p) {
        const std::int64_t send_first = halo_.send_offsets[p], send_end = halo_.send_offsets[p + 1];
        const std::int64_t receive_first = halo_.receive_offsets[p], receive_end = halo_.receive_offsets[p + 1];
        if (send_end > send_first)
          FLUXJAC_NCCL_CHECK(ncclSend(send_rows_.data() + send_first * kBlock, (send_end - send_first) * kBlock,
                                      ncclDouble, halo_.peers[p], nccl_, stream_));
        if (receive_end > receive_first)
          FLUXJAC_NCCL_CHECK(ncclRecv(receive_rows_.data() + receive_first * kBlock,
                                      (receive_end - receive_first) * kBlock, ncclDouble, halo_.peers[p], nccl_,
                                      stream_));
      }
      FLUXJAC_NCCL_CHECK(ncclGroupEnd());
#endif
    } else {
      FLUXJAC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      exchange_packed_rows(comm_, halo_, host_send_.data(), host_receive_.data());
      if (receives > 0)
        FLUXJAC_CUDA_CHECK(cudaMemcpyAsync(receive_rows_.data(), host_receive_.data(),
                                           host_receive_.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    }
    if (receives > 0)
      scatter_rows<<<grid_for(receives), 256, 0, stream_>>>(receive_rows_.data(), receive_nodes_.data(), receives,
                                                            state);
    FLUXJAC_CUDA_CHECK_LAUNCH();
    FLUXJAC_CUDA_CHECK(cudaEventRecord(done_, stream_));
  }

  void finish() override { FLUXJAC_CUDA_CHECK(cudaStreamWaitEvent(0, done_, 0)); }

 private:
  const Communicator& comm_;
  const HaloPlan& halo_;
  DeviceArray<node_index> send_nodes_, receive_nodes_;
  DeviceArray<double> send_rows_, receive_rows_;
  std::vector<double> host_send_, host_receive_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;  ///< the default stream's work before start; the exchange's end
  int devices_ = 0;
  bool use_nccl_ = false;
#if defined(FLUXJAC_WITH_NCCL)
  ncclComm_t nccl_ = nullptr;
#endif
};

}  // namespace

std::unique_ptr<DeviceGhostExchange> make_device_ghost_exchange(const Communicator& comm, const HaloPlan& halo) {
  auto exchange = std::make_unique<DeviceExchange>(comm, halo);
  exchange->connect();
  return exchange;
}

std::string select_gpu(const Communicator& comm) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return {};
  }
  const int device = comm.node_rank() % devices;
  FLUXJAC_CUDA_CHECK(cudaSetDevice(device));
  return fmt::format("rank {}: GPU {} of {} on its node", comm.rank(), device, devices);
}

}  // namespace fluxjac
