#include "bench/work_model.hpp"

#include <algorithm>

namespace fluxjac {
namespace {

constexpr double kFlopsPerEdge = 2700.0;

constexpr double kBytesPerEdge = 2 * 4.0          // node ids (int32)
                                 + 3 * 8.0        // normal
                                 + 8.0            // area
                                 + 2 * 4.0        // Aoff slots (int32)
                                 + 2 * 25 * 4.0;  // Aoff[L,R] and Aoff[R,L] written (float32)
constexpr double kBytesPerNode = 5 * 8.0          // state read once
                                 + 2 * 25 * 8.0;  // Adiag read and written once

}  // namespace

double WorkEstimate::fraction_of_floor(double measured_ms) const {
  return floor_ms > 0.0 && measured_ms > 0.0 ? floor_ms / measured_ms : 0.0;
}

WorkEstimate estimate_work(const WorkCase& work_case, const std::optional<DeviceCeilings>& device) {
  WorkEstimate work;
  work.bytes =
      kBytesPerEdge * static_cast<double>(work_case.n_edges) + kBytesPerNode * static_cast<double>(work_case.n_nodes);
  work.flops = kFlopsPerEdge * static_cast<double>(work_case.n_edges);
  if (device && device->copy_bandwidth_gbs > 0.0 && device->fp64_gflops > 0.0)
    work.floor_ms =
        1e3 * std::max(work.bytes / (device->copy_bandwidth_gbs * 1e9), work.flops / (device->fp64_gflops * 1e9));
  return work;
}

}  // namespace fluxjac
