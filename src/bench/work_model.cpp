#include "bench/work_model.hpp"

#include "registry/registry.hpp"

namespace fluxjac {

double WorkEstimate::fraction_of_floor(double measured_ms) const {
  return floor_ms > 0.0 && measured_ms > 0.0 ? floor_ms / measured_ms : 0.0;
}

WorkEstimate estimate_work(const WorkCase& work_case, const std::optional<DeviceCeilings>& device) {
  WorkEstimate work;
  const VariantInfo* info = Registry::instance().find(work_case.variant);
  if (!info) return work;
  const auto found = info->work.strategies.find(work_case.assembly.empty() ? "cpu" : work_case.assembly);
  if (found == info->work.strategies.end()) return work;
  const StrategyWork& strategy = found->second;
  const auto nodes = static_cast<double>(work_case.n_nodes), edges = static_cast<double>(work_case.n_edges);
  const auto blocks = static_cast<double>(work_case.n_blocks);
  const AoffPrecision stored = work_case.assembly.empty() ? AoffPrecision::kF32 : work_case.aoff_precision;
  work.bytes = strategy.bytes.bytes(nodes, edges, blocks, stored);
  work.flops = strategy.fp64_flops_per_edge() * edges;
  work.fp64_instructions = strategy.fp64_instructions_per_edge() * edges;
  if (device)
    work.floor_ms =
        1e3 * strategy.floor_seconds(nodes, edges, blocks, device->copy_bandwidth_gbs, device->fp64_gflops, stored);
  return work;
}

}  // namespace fluxjac
