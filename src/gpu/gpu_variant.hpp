// fluxjac — registration of a GPU variant from its lane policy and its tuning (one file per variant).
//
// A variant file defines a policy { static constexpr int kLanesPerEdge, kLanesPerSide;
// template <class Real> FLUXJAC_HD static void compute(int lane, const BasicEdgeInput<Real>&, Real* local);
// template <class Real, class Block> FLUXJAC_HD static void compute_side(int lane, const BasicEdgeInput<Real>&,
//                                                                        int side, Real scale, Block block); }
// (edge-based and node-based lanes; Real is double, or CountingReal when the work model counts them; a Block is
// written through block_at, assembly/orientation.hpp), takes its
// tuning row (tuning_of in variants/tunings.hpp) and registers both with a static VariantRegistrar made by
// register_gpu_variant<Policy, tuning>(description, seeding). Variant files are compiled by nvcc in CUDA builds (the
// policy runs in assembly_kernel) and by the C++ compiler otherwise: the variant is then listed as unavailable, and
// its lanes still run on the CPU for the tests.
#pragma once

#include <memory>
#include <string>

#include "assembly/lane_work.hpp"
#include "registry/registry.hpp"
#if defined(__CUDACC__)
#include "gpu/cuda_variant.cuh"
#endif

namespace fluxjac {

/// \brief Registry information of the GPU variant of lane policy `Policy` and tuning `tuning`, registered under the
/// tuning's variant name.
template <class Policy>
VariantInfo gpu_variant_info(const GpuTuning& tuning, std::string description, Seeding seeding) {
  VariantInfo info;
  info.name = std::string(tuning.variant);
  info.description = std::move(description);
  info.backend = Backend::kCuda;
  info.threads_per_edge = Policy::kLanesPerEdge;
  info.threads_per_side = Policy::kLanesPerSide;
  info.seeding = seeding;
  info.preferred_assembly = tuning.assembly;
  info.tuning = tuning;
#if defined(__CUDACC__)
  info.available = true;
#else
  info.available = false;
#endif
  info.emulate_edge_lanes = emulate_edge_lanes<Policy, double>;
  info.emulate_node_lanes = emulate_node_lanes<Policy, double>;
  info.emulate_node_entry = emulate_node_entry<Policy, double>;
  // A few thousand counted operations per mapping: cheap enough for static initialization.
  info.work = gpu_variant_work(count_edge_lanes<Policy>(), count_node_lanes<Policy>(), to_string(tuning.assembly));
  return info;
}

/// \brief Factory of the GPU variant of lane policy `Policy`: its kernels compiled with the register cap and batch of
/// `kTuning` (the rest of the tuning, its thread blocks, travels in the VariantInfo).
template <class Policy, const GpuTuning& kTuning>
std::unique_ptr<Variant> make_gpu_variant([[maybe_unused]] const VariantInfo& info) {
#if defined(__CUDACC__)
  return std::make_unique<CudaVariant<TunedLanes<Policy, kTuning.max_registers, kTuning.node_batch>>>(info);
#else
  return nullptr;  // unreachable: Registry::create refuses unavailable variants
#endif
}

/// \brief Registers the GPU variant of lane policy `Policy` under the name of its tuning row `kTuning`: its kernels are
/// compiled with the row's register cap and batch and launched with its blocks.
template <class Policy, const GpuTuning& kTuning>
VariantRegistrar register_gpu_variant(std::string description, Seeding seeding) {
  return VariantRegistrar(gpu_variant_info<Policy>(kTuning, std::move(description), seeding),
                          make_gpu_variant<Policy, kTuning>);
}

}  // namespace fluxjac
