// fluxjac — one file written by every rank with serial HDF5: rank 0 creates it under a temporary name, the ranks write
// their own rows one at a time, rank 0 renames it into place. The ranks meet between the turns (a barrier carries a
// failure, ranks/communicator.hpp), so a failure on any rank leaves no file and every rank throws the same Error.
#pragma once

#include <functional>
#include <string>

#include "ranks/communicator.hpp"

namespace fluxjac {

/// \brief Writes `path` from every rank in turn: `create(temporary)` on rank 0 makes the file with every dataset at
/// its full size, then `write_own(temporary)` on each rank in rank order writes that rank's rows, then rank 0 commits
/// the file (util/atomic_output.hpp). Collective.
void write_in_turn(const Communicator& comm, const std::string& path,
                   const std::function<void(const std::string& temporary)>& create,
                   const std::function<void(const std::string& temporary)>& write_own);

}  // namespace fluxjac
