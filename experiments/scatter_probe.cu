// Scatter probe: what limits the Adiag/Aoff scatter of the edge assembly kernel? (docs/performance.md 4)
//
// Times the edge kernel's scatter alone, with cheap staged values, in pieces: Aoff stores at the real
// slots or at contiguous ones, Adiag atomics or plain stores, for several edges per block and resident
// blocks per SM (limited with padding shared memory); also a contiguous write of Aoff's size as the floor.
// Build with -DFLUXJAC_EXPERIMENTS=ON; usage: scatter_probe MESH.h5
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "jacobian/jacobian.hpp"
#include "mesh/mesh_io.hpp"

using namespace fluxjac;

enum : int { kAoff = 1, kAdiagAtomic = 2, kAdiagStore = 4, kAoffContiguous = 8 };

__global__ void probe(const int* __restrict__ edges, const int* __restrict__ slots, long n_edges, float* aoff,
                      double* adiag, int epb, int flags) {
  extern __shared__ double staging[];
  const long first = static_cast<long>(blockIdx.x) * epb;
  const int count = static_cast<int>(min(static_cast<long>(epb), n_edges - first));
  int* s_nodes = reinterpret_cast<int*>(staging + epb * 50);
  int* s_slots = s_nodes + 2 * epb;
  for (int i = threadIdx.x; i < 2 * count; i += blockDim.x) {
    s_nodes[i] = edges[2 * first + i];
    s_slots[i] = (flags & kAoffContiguous) ? static_cast<int>(2 * first + i) : slots[2 * first + i];
  }
  for (int i = threadIdx.x; i < count * 50; i += blockDim.x) staging[i] = 1e-3 * i + first;
  __syncthreads();
  if (flags & kAoff) {
    for (int item = threadIdx.x; item < count * 50; item += blockDim.x) {
      const int le = item / 50;
      const int target = (item - le * 50) / 25;
      const int entry = item - le * 50 - target * 25;
      aoff[static_cast<long>(s_slots[2 * le + target]) * 25 + entry] = static_cast<float>(staging[item]);
    }
  }
  if (flags & (kAdiagAtomic | kAdiagStore)) {
    for (int item = threadIdx.x; item < count * 50; item += blockDim.x) {
      const int le = item / 50;
      const int side = (item - le * 50) / 25;
      const int entry = item - le * 50 - side * 25;
      double* p = &adiag[static_cast<long>(s_nodes[2 * le + side]) * 25 + entry];
      if (flags & kAdiagAtomic)
        atomicAdd(p, staging[item]);
      else
        *p = staging[item];
    }
  }
}

__global__ void fill(float4* p, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += gridDim.x * static_cast<long>(blockDim.x))
    p[i] = make_float4(1.f, 2.f, 3.f, static_cast<float>(i));
}

int main(int argc, char** argv) {
  const EdgeMesh mesh = read_edge_mesh(argv[1]);
  const JacobianPattern pattern = JacobianPattern::build(mesh);
  const long E = mesh.n_edges();
  std::vector<int> slots(2 * E);
  for (long e = 0; e < E; ++e)
    slots[2 * e] = static_cast<int>(pattern.slot_lr[e]), slots[2 * e + 1] = static_cast<int>(pattern.slot_rl[e]);
  int *d_edges, *d_slots;
  float* d_aoff;
  double* d_adiag;
  FLUXJAC_CUDA_CHECK(cudaMalloc(&d_edges, 8 * E));
  FLUXJAC_CUDA_CHECK(cudaMalloc(&d_slots, 8 * E));
  FLUXJAC_CUDA_CHECK(cudaMalloc(&d_aoff, sizeof(float) * 25 * std::max<long>(pattern.nnz(), 2 * E)));
  FLUXJAC_CUDA_CHECK(cudaMalloc(&d_adiag, sizeof(double) * 25 * mesh.n_nodes));
  FLUXJAC_CUDA_CHECK(cudaMemcpy(d_edges, mesh.edges.data(), 8 * E, cudaMemcpyHostToDevice));
  FLUXJAC_CUDA_CHECK(cudaMemcpy(d_slots, slots.data(), 8 * E, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  FLUXJAC_CUDA_CHECK(cudaEventCreate(&a));
  FLUXJAC_CUDA_CHECK(cudaEventCreate(&b));
  FLUXJAC_CUDA_CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  auto time = [&](auto launch) {
    std::vector<float> t;
    for (int r = 0; r < 13; ++r) {
      FLUXJAC_CUDA_CHECK(cudaEventRecord(a));
      launch();
      FLUXJAC_CUDA_CHECK(cudaEventRecord(b));
      FLUXJAC_CUDA_CHECK(cudaEventSynchronize(b));
      float ms;
      FLUXJAC_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= 3) t.push_back(ms);
    }
    FLUXJAC_CUDA_CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const long aoff_bytes = 100L * pattern.nnz();
  const double floor_ms = time([&] { fill<<<132 * 16, 256>>>(reinterpret_cast<float4*>(d_aoff), aoff_bytes / 16); });
  std::printf("contiguous float4 write of Aoff (%.2f GB): %.3f ms (%.0f GB/s)\n", aoff_bytes / 1e9, floor_ms,
              aoff_bytes / floor_ms / 1e6);
  const double memset_ms = time([&] { cudaMemsetAsync(d_adiag, 0, 200L * mesh.n_nodes); });
  std::printf("memset Adiag: %.3f ms\n", memset_ms);
  struct Case {
    const char* name;
    int flags;
  };
  const Case cases[] = {{"aoff+adiag atomics", kAoff | kAdiagAtomic},
                        {"aoff only", kAoff},
                        {"adiag atomics only", kAdiagAtomic},
                        {"adiag plain stores only", kAdiagStore},
                        {"aoff contiguous only", kAoff | kAoffContiguous},
                        {"aoff contiguous + adiag atomics", kAoff | kAoffContiguous | kAdiagAtomic},
                        {"nothing (staging only)", 0}};
  for (int epb : {16, 64, 256}) {
    for (int blocks_per_sm : {8, 16, 32}) {
      const int threads = 2 * epb;
      if (threads * blocks_per_sm > 2048) continue;
      const size_t need = epb * (50 * 8 + 16);
      const size_t shared = std::max(need, static_cast<size_t>(220 * 1024 / blocks_per_sm));
      for (const Case& c : cases) {
        const unsigned grid = static_cast<unsigned>((E + epb - 1) / epb);
        const double ms =
            time([&] { probe<<<grid, threads, shared>>>(d_edges, d_slots, E, d_aoff, d_adiag, epb, c.flags); });
        std::printf("epb %3d  blocks/SM<=%2d  %-34s %.3f ms\n", epb, blocks_per_sm, c.name, ms);
      }
    }
  }
  return 0;
}
