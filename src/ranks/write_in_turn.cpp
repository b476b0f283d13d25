#include "ranks/write_in_turn.hpp"

#include <memory>

#include "util/atomic_output.hpp"

namespace fluxjac {

void write_in_turn(const Communicator& comm, const std::string& path,
                   const std::function<void(const std::string& temporary)>& create,
                   const std::function<void(const std::string& temporary)>& write_own) {
  std::unique_ptr<AtomicOutput> output;
  std::string temporary;
  comm.agree([&] {
    if (!comm.is_root()) return;
    output = std::make_unique<AtomicOutput>(path);
    temporary = output->temporary_path();
    create(temporary);
  });
  comm.broadcast(temporary);
  // One rank at a time: serial HDF5 has one writer.
  for (int writer = 0; writer < comm.size(); ++writer) {
    comm.agree([&] {
      if (comm.rank() == writer) write_own(temporary);
    });
  }
  comm.agree([&] {
    if (comm.is_root()) output->commit();
  });
}

}  // namespace fluxjac
