// fluxjac — owning device memory for the CUDA dispatch layer.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/cuda_check.hpp"

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

}  // namespace fluxjac
