#include "bench/device_probe.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"

namespace fluxjac {
namespace {

constexpr int kFmaChains = 8;
constexpr int kFmaIterations = 4096;

/// Independent FMA chains per thread keep the FP64 pipes busy; the result is stored so nothing folds.
__global__ void fp64_fma_kernel(double* out, double a, double b) {
  double chains[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) chains[c] = threadIdx.x * 1e-3 + c;
#pragma unroll 16
  for (int i = 0; i < kFmaIterations; ++i)
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) chains[c] = fma(chains[c], a, b);
  double sum = 0.0;
  for (int c = 0; c < kFmaChains; ++c) sum += chains[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/// Median of `reps` event-timed runs of `work` after one warm-up.
template <class Work>
double median_ms(int reps, Work&& work) {
  EventTimer timer;
  work();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    timer.start();
    work();
    timer.stop();
    times.push_back(timer.elapsed_ms());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

DeviceCeilings measure() {
  DeviceCeilings ceilings;
  int device = 0;  // the rank's GPU under mpirun (select_gpu), else the first
  FLUXJAC_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  FLUXJAC_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  ceilings.name = properties.name;
  ceilings.sm_count = properties.multiProcessorCount;
  int clock_khz = 0, memory_clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device);
  ceilings.sm_clock_mhz = clock_khz / 1000;
  ceilings.memory_clock_mhz = memory_clock_khz / 1000;
  ceilings.memory_gib = properties.totalGlobalMem / double(1 << 30);
  ceilings.l2_mib = properties.l2CacheSize / double(1 << 20);
  FLUXJAC_CUDA_CHECK(cudaRuntimeGetVersion(&ceilings.runtime_version));
  FLUXJAC_CUDA_CHECK(cudaDriverGetVersion(&ceilings.driver_version));

  // ---- copy bandwidth: 1 GiB device to device, bytes read plus bytes written ----------------------
  const std::size_t bytes = std::size_t(1) << 30;
  void *source = nullptr, *target = nullptr;
  FLUXJAC_CUDA_CHECK(cudaMalloc(&source, bytes));
  FLUXJAC_CUDA_CHECK(cudaMalloc(&target, bytes));
  FLUXJAC_CUDA_CHECK(cudaMemset(source, 1, bytes));
  const double copy_ms =
      median_ms(10, [&] { FLUXJAC_CUDA_CHECK(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDeviceToDevice)); });
  ceilings.copy_bandwidth_gbs = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;
  cudaFree(source);
  cudaFree(target);

  // ---- FP64 FMA rate: enough blocks to fill every SM several times ---------------------------------
  const int threads = 256, blocks = properties.multiProcessorCount * 16;
  double* out = nullptr;
  FLUXJAC_CUDA_CHECK(cudaMalloc(&out, sizeof(double) * threads * blocks));
  const double fma_ms = median_ms(5, [&] {
    fp64_fma_kernel<<<blocks, threads>>>(out, 0.999999, 1e-7);
    FLUXJAC_CUDA_CHECK_LAUNCH();
  });
  const double flops = 2.0 * kFmaChains * kFmaIterations * double(threads) * blocks;
  ceilings.fp64_gflops = flops / (fma_ms * 1e-3) / 1e9;
  cudaFree(out);
  return ceilings;
}

}  // namespace

const GpuUnavailable& gpu_unavailable() {
  static const GpuUnavailable reason = []() -> GpuUnavailable {
    int count = 0;
    // Not FLUXJAC_CUDA_CHECK: its message names this source file; a missing GPU is the user's machine, not a bug.
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) return {};
    // Without a driver the runtime says "driver version is insufficient": true, but it reads as an old driver.
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);  // 0 where no NVIDIA driver is installed
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0) return {"no CUDA device", "no CUDA device (no NVIDIA driver is installed)"};
    if (status == cudaSuccess || status == cudaErrorNoDevice)
      return {"no CUDA device", "no CUDA device (the NVIDIA driver finds none)"};
    const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    return {"CUDA device unusable", std::string("CUDA device unusable: ") + cudaGetErrorString(status) + " (driver " +
                                        version(driver) + ", runtime " + version(runtime) + ")"};
  }();
  return reason;
}

bool gpu_available() { return gpu_unavailable().brief.empty(); }

std::optional<DeviceCeilings> probe_device() {
  static std::optional<DeviceCeilings> cached;
  static bool probed = false;
  if (!probed) {
    probed = true;
    if (gpu_available()) cached = measure();
  }
  return cached;
}

}  // namespace fluxjac
