// fluxjac — CUDA-event timing of default-stream work: the GPU variants' stopwatch, the device probe's timer and the
// solve's product times.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "registry/stopwatch.hpp"

namespace fluxjac {

/// \brief Times a stretch of default-stream work with a pair of CUDA events recorded in the stream: two timers time
/// two stretches back to back without a synchronization between them.
class EventTimer final : public Stopwatch {
 public:
  EventTimer() {
    FLUXJAC_CUDA_CHECK(cudaEventCreate(&start_));
    FLUXJAC_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() override { FLUXJAC_CUDA_CHECK(cudaEventRecord(start_)); }
  void stop() override { FLUXJAC_CUDA_CHECK(cudaEventRecord(stop_)); }
  /// Waits for the stop event.
  double elapsed_ms() override {
    FLUXJAC_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    FLUXJAC_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

/// \brief The median of `reps` runs of `work` (default-stream work: a launch, a library call), each timed by its own
/// events, after `warmup` untimed runs: how the solve times one product y = M x, fluxjac's and cuSPARSE's alike.
template <class Work>
double median_event_ms(Work&& work, int warmup = 3, int reps = 20) {
  std::vector<double> samples;
  for (int k = 0; k < warmup + reps; ++k) {
    EventTimer timer;
    timer.start();
    work();
    timer.stop();
    if (k >= warmup) samples.push_back(timer.elapsed_ms());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

/// \brief The most shared memory one block of a kernel may opt in to on the current device.
inline std::size_t max_shared_bytes_per_block() {
  int device = 0, bytes = 0;
  FLUXJAC_CUDA_CHECK(cudaGetDevice(&device));
  FLUXJAC_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(bytes);
}

}  // namespace fluxjac
