#include "part/ghost_exchange.hpp"

#include <chrono>

#include "util/error.hpp"

namespace fluxjac {

void GhostExchange::prepare(const StateBuffer& state) {
  if (comm_.size() == 1) return;
  if (state.on_device) {
    if (!device_) device_ = make_device_ghost_exchange(comm_, halo_);
    return;
  }
  if (host_prepared_) return;
  host_ = GhostRowBuffers(halo_);
  host_prepared_ = true;
}

void GhostExchange::require_prepared(const StateBuffer& state) const {
  // The same on every rank (every rank prepares alike): all fail here, before any exchange.
  if (state.on_device ? !device_ : !host_prepared_)
    fail(ExitCode::kRuntime, "the ghost exchange of {} states was not prepared before its first exchange",
         state.on_device ? "GPU" : "host");
}

double GhostExchange::refresh(const StateBuffer& state) {
  if (comm_.size() == 1) return 0.0;  // one rank owns every node: nothing to exchange
  require_prepared(state);
  if (state.on_device) {
    transport_ = device_->transport();
    return device_->refresh(state.data);
  }
  transport_ = "MPI";
  const auto start = std::chrono::steady_clock::now();
  exchange_ghost_states(comm_, halo_, state.data, host_);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double GhostExchange::refresh_overlapped(const StateBuffer& state, const std::function<void()>& meanwhile) {
  if (comm_.size() == 1 || !state.on_device) {
    const double milliseconds = refresh(state);
    meanwhile();
    return milliseconds;
  }
  require_prepared(state);
  transport_ = device_->transport();
  const auto start = std::chrono::steady_clock::now();
  device_->start(state.data, meanwhile);
  const double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  device_->finish();
  return milliseconds;
}

#if !defined(FLUXJAC_WITH_CUDA)
std::unique_ptr<DeviceGhostExchange> make_device_ghost_exchange(const Communicator&, const HaloPlan&) {
  fail(ExitCode::kUsage, "GPU states to exchange, but this build has no CUDA (rebuild with -DFLUXJAC_CUDA=ON)");
}

std::string select_gpu(const Communicator&) { return {}; }
#endif

}  // namespace fluxjac
