// fluxjac — what the variants that assemble on the host share: the CPU reference and every GPU variant's CPU
// emulation (NAME:cpu). They keep their own copy of the state (a many-rank run refreshes its ghost rows there), time
// with a steady clock, and zero nothing: each assembly starts from zeros (Jacobian::resize). Aoff in bf16 is
// their float32 Aoff rounded when fetched.
#pragma once

#include <memory>
#include <utility>

#include "registry/registry.hpp"

namespace fluxjac {

class HostVariant : public Variant {
 public:
  explicit HostVariant(VariantInfo info) : info_(std::move(info)) {}
  const VariantInfo& info() const override { return info_; }

  void setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) override {
    mesh_ = &mesh;
    state_ = state;
    pattern_ = &pattern;
  }
  /// \brief Records what every host variant's case shares: the precision fetch() returns Aoff in. Each variant's
  /// prepare() calls it after its own checks.
  void prepare(const AssemblyOptions& options) override {
    check_assembly_precision(options.aoff_precision);
    aoff_precision_ = options.aoff_precision;
  }
  void zero() override {}
  std::unique_ptr<Stopwatch> stopwatch() const override { return std::make_unique<SteadyStopwatch>(); }
  /// \brief The last assembly; prepared with bf16, its float32 Aoff rounded to bfloat16 as the GPU kernels round
  /// theirs (round_to_bf16: the same bits as __float2bfloat16_rn of the same float).
  void fetch(Jacobian& out) override {
    out = jacobian_;
    if (aoff_precision_ == AoffPrecision::kBf16) round_to_bf16(out.aoff);
  }
  StateBuffer state_buffer() override { return {state_.Q.data(), state_.n_nodes(), false}; }

 protected:
  VariantInfo info_;
  const EdgeMesh* mesh_ = nullptr;
  FlowState state_;
  const JacobianPattern* pattern_ = nullptr;
  Jacobian jacobian_;
  AoffPrecision aoff_precision_ = AoffPrecision::kF32;
};

}  // namespace fluxjac
