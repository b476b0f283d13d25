// fluxjac — the halo exchange of a many-rank run: before every assembly, each rank receives the states of its ghost
// nodes from their owners (docs/design.md, "Many GPUs"). Host states (the CPU reference) travel through MPI; GPU states
// through NCCL, GPU buffer to GPU buffer (the GPU machines' Open MPI is not CUDA-aware), or, where ranks share a GPU
// (NCCL refuses two ranks on one device), staged through host memory and MPI.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "part/local_part.hpp"
#include "ranks/communicator.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// \brief The GPU side of the exchange (part/device_exchange.cu; CUDA builds only).
class DeviceGhostExchange {
 public:
  virtual ~DeviceGhostExchange() = default;
  /// Exchanges the ghost rows of a device state in place and returns the milliseconds it took.
  virtual double refresh(double* device_state) = 0;
  /// \brief Starts the exchange of a device state's ghost rows after the work already launched on the default stream,
  /// without waiting for the device (MPI via host waits for its transfers); `finish` makes the default stream's later
  /// work wait for the ghost rows. `meanwhile` launches work on the default stream that reads no ghost row: it is
  /// called once the rows to send are gathered, before the host meets the other ranks, so that the device runs it
  /// while they meet.
  virtual void start(double* device_state, const std::function<void()>& meanwhile) = 0;
  virtual void finish() = 0;
  /// "NCCL" or "MPI via host".
  virtual std::string transport() const = 0;
};

/// \brief Creates the GPU exchange (collective: every rank of comm, at the same point): its buffers, then the choice
/// of transport and NCCL's communicator. Error(kUsage) in a build without CUDA.
std::unique_ptr<DeviceGhostExchange> make_device_ghost_exchange(const Communicator& comm, const HaloPlan& halo);

/// \brief Makes this rank use GPU (node rank modulo the GPUs on its node), before anything else touches CUDA;
/// returns "rank r: GPU g of n", or an empty string where there is no GPU (or no CUDA in this build).
std::string select_gpu(const Communicator& comm);

/// \brief What the timed loop (src/bench/timed_loop.hpp) calls on every rank: the exchange for the buffer at hand.
class GhostExchange {
 public:
  GhostExchange(const Communicator& comm, const HaloPlan& halo) : comm_(comm), halo_(halo) {}
  /// \brief Makes everything the exchanges of state need (host buffers, or the GPU exchange) before the timed loop,
  /// so that refresh allocates nothing there (every rank, at the same point).
  void prepare(const StateBuffer& state);
  /// \brief Exchanges the ghost rows of state in place (collective, and like every collective it carries a failure of
  /// any rank since the last one; prepare first) and returns the milliseconds it took, from the start of this rank's
  /// exchange to the arrival of its last ghost state; 0 on one rank (no ghosts).
  double refresh(const StateBuffer& state);
  /// \brief refresh, with `meanwhile` overlapping the transfers of a device state: it launches default-stream work
  /// that reads no ghost row, and the default stream's work after it waits for the ghost rows (a host state: the
  /// exchange, then `meanwhile`). Returns the host's milliseconds in the exchange (the launches and the ranks'
  /// meeting).
  double refresh_overlapped(const StateBuffer& state, const std::function<void()>& meanwhile);
  /// How the last refresh travelled: "MPI", "NCCL", "MPI via host"; empty before the first and on one rank.
  const std::string& transport() const { return transport_; }

 private:
  /// Fails unless prepare made what exchanges of state need.
  void require_prepared(const StateBuffer& state) const;

  const Communicator& comm_;
  const HaloPlan& halo_;
  std::unique_ptr<DeviceGhostExchange> device_;
  GhostRowBuffers host_;
  bool host_prepared_ = false;
  std::string transport_;
};

}  // namespace fluxjac
