#include "ranks/write_in_turn.hpp"

#include <memory>

#include "util/atomic_output.hpp"

namespace fluxjac {

void write_in_turn(const Communicator& comm, const std::string& path,
                   const std::function<void(const std::string& temporary)>& create,
                   const std::function<void(const std::string& temporary)>& write_own) {
  std::unique_ptr<AtomicOutput> output;
  std::string temporary;
  if (comm.is_root()) {
    output = std::make_unique<AtomicOutput>(path);
    temporary = output->temporary_path();
    create(temporary);
  }
  comm.broadcast(temporary);
  const RemovedOnSignal covered(temporary);  // every rank removes it on SIGINT, SIGTERM or SIGHUP
  // One rank at a time: serial HDF5 has one writer. A rank that fails meets the others at its guard, while they wait
  // in the barrier, and rank 0's output then removes the temporary.
  for (int writer = 0; writer < comm.size(); ++writer) {
    if (comm.rank() == writer) write_own(temporary);
    comm.barrier();
  }
  if (comm.is_root()) output->commit();
  comm.barrier();  // rank 0's rename failing is every rank's error
}

}  // namespace fluxjac
