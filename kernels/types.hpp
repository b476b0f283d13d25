// fluxjac — index types, block size and in-block layout shared by host and device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define FLUXJAC_HD __host__ __device__
#define FLUXJAC_FORCEINLINE __forceinline__
#else
#define FLUXJAC_HD
#define FLUXJAC_FORCEINLINE inline __attribute__((always_inline))
#endif

// Full unrolling: nvcc's pragma in device passes, GCC's in plain C++ builds; nothing in nvcc's host
// pass, whose front end knows neither spelling.
#if defined(__CUDA_ARCH__)
#define FLUXJAC_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define FLUXJAC_UNROLL
#else
#define FLUXJAC_UNROLL _Pragma("GCC unroll 16")
#endif

namespace fluxjac {

/// Node index. col_idx is int32 in the output format, so node ids must fit in 32 bits.
using node_index = std::int32_t;
/// Edge index and counts (meshes beyond 2^31 edges are allowed).
using edge_index = std::int64_t;
/// Offsets into block-CSR arrays (row_ptr, edge slots).
using block_offset = std::int64_t;

/// Number of conservative variables; every Jacobian block is kBlock x kBlock.
inline constexpr int kBlock = 5;
inline constexpr int kBlockEntries = kBlock * kBlock;

/// Blocks are row-major: entry (row r = residual component, column c = state component).
FLUXJAC_HD constexpr int block_entry(int row, int col) { return row * kBlock + col; }

}  // namespace fluxjac
