// fluxjac — CUDA-event timing of default-stream work, shared by the assembly and the device probe.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/cuda_check.hpp"

namespace fluxjac {

/// \brief Times a stretch of default-stream work with a pair of CUDA events.
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

/// \brief The most shared memory one block of a kernel may opt in to on the current device.
inline std::size_t max_shared_bytes_per_block() {
  int device = 0, bytes = 0;
  FLUXJAC_CUDA_CHECK(cudaGetDevice(&device));
  FLUXJAC_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(bytes);
}

}  // namespace fluxjac
