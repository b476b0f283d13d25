// fluxjac — every CUDA call is checked; failures throw with file and line (nvbench habit).
#pragma once

#include <cuda_runtime.h>

#include "util/error.hpp"

#define FLUXJAC_CUDA_CHECK(call)                                                                         \
  do {                                                                                                   \
    const cudaError_t fluxjac_status_ = (call);                                                          \
    if (fluxjac_status_ != cudaSuccess)                                                                  \
      ::fluxjac::fail(::fluxjac::ExitCode::kRuntime, "CUDA error at {}:{}: {} ({})", __FILE__, __LINE__, \
                      cudaGetErrorString(fluxjac_status_), #call);                                       \
  } while (0)

/// Checks the launch itself and, in the same breath, any error the launch left behind.
#define FLUXJAC_CUDA_CHECK_LAUNCH() FLUXJAC_CUDA_CHECK(cudaGetLastError())
