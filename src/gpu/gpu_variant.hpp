// fluxjac — registration of a GPU variant from its lane policy (one file per variant).
//
// A variant file defines a policy { static constexpr int kLanesPerEdge, kLanesPerSide;
// template <class Real> FLUXJAC_HD static void compute(int lane, const BasicEdgeInput<Real>&, Real* local);
// template <class Real> FLUXJAC_HD static void compute_side(int lane, const BasicEdgeInput<Real>&, int side,
//                                                           Real scale, Real* block); }
// (edge-based and node-based lanes; Real is double, or CountingReal when the work model counts them) and
// registers it with a static VariantRegistrar built by gpu_variant_info<Policy>(...). Variant files are compiled by
// nvcc in CUDA builds (the policy runs in assembly_kernel) and by the C++ compiler otherwise: the variant is then
// listed as unavailable, and its lanes still run on the CPU for the tests.
#pragma once

#include <memory>
#include <string>

#include "assembly/lane_work.hpp"
#include "registry/registry.hpp"
#if defined(__CUDACC__)
#include "gpu/cuda_variant.cuh"
#endif

namespace fluxjac {

/// \brief Registry information and factory of the GPU variant of lane policy `Policy`.
template <class Policy>
VariantInfo gpu_variant_info(std::string name, std::string description, Seeding seeding,
                             AssemblyStrategy preferred_assembly) {
  VariantInfo info;
  info.name = std::move(name);
  info.description = std::move(description);
  info.backend = Backend::kCuda;
  info.threads_per_edge = Policy::kLanesPerEdge;
  info.threads_per_side = Policy::kLanesPerSide;
  info.seeding = seeding;
  info.preferred_assembly = preferred_assembly;
#if defined(__CUDACC__)
  info.available = true;
#else
  info.available = false;
#endif
  info.emulate_edge_lanes = emulate_edge_lanes<Policy, double>;
  info.emulate_node_lanes = emulate_node_lanes<Policy, double>;
  // A few thousand counted operations per mapping: cheap enough for static initialization.
  info.work = gpu_variant_work(count_edge_lanes<Policy>(), count_node_lanes<Policy>(), to_string(preferred_assembly));
  return info;
}

template <class Policy>
std::unique_ptr<Variant> make_gpu_variant([[maybe_unused]] const VariantInfo& info) {
#if defined(__CUDACC__)
  return std::make_unique<CudaVariant<Policy>>(info);
#else
  return nullptr;  // unreachable: Registry::create refuses unavailable variants
#endif
}

}  // namespace fluxjac
