// fluxjac — what the variants that assemble on the host share: the CPU reference and every GPU variant's CPU
// emulation (NAME:cpu). They keep their own copy of the state (a many-rank run refreshes its ghost rows there), time
// with a steady clock, and zero nothing: each assembly starts from zeros (Jacobian::resize).
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
  void zero() override {}
  std::unique_ptr<Stopwatch> stopwatch() const override { return std::make_unique<SteadyStopwatch>(); }
  void fetch(Jacobian& out) override { out = jacobian_; }
  StateBuffer state_buffer() override { return {state_.Q.data(), state_.n_nodes(), false}; }

 protected:
  VariantInfo info_;
  const EdgeMesh* mesh_ = nullptr;
  FlowState state_;
  const JacobianPattern* pattern_ = nullptr;
  Jacobian jacobian_;
};

}  // namespace fluxjac
