#include "ranks/write_in_turn.hpp"

#include <memory>
#include <optional>

#include "util/atomic_output.hpp"

namespace fluxjac {

void write_in_turn(const Communicator& comm, const std::string& path,
                   const std::function<void(const std::string& temporary)>& create,
                   const std::function<void(const std::string& temporary)>& write_own) {
  // Every rank covers rank 0's temporary (removes it on SIGINT, SIGTERM or SIGHUP) before the file exists: a rank 0
  // ended by SIGKILL at any instant of the write leaves it to the others, whom mpirun then sends SIGTERM.
  std::optional<RemovedOnSignal> covered;
  std::string temporary;
  const auto cover = [&] {
    comm.broadcast(temporary);
    covered.emplace(temporary);
    comm.barrier();
  };
  std::unique_ptr<AtomicOutput> output;
  if (comm.is_root()) {
    output = std::make_unique<AtomicOutput>(path, [&](const std::string& name) {
      temporary = name;
      cover();
    });
    create(temporary);
  } else {
    cover();
  }
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
