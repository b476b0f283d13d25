// fluxjac — GPU Jacobian assembly of the 3D Roe flux with forward-mode AD variants.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "cli/cli.hpp"
#include "ranks/communicator.hpp"

namespace {

/// A standard stream started closed (`>&-`) stays unwritable and is never reused: the first file opened would
/// otherwise take its descriptor and receive the table. Read-only /dev/null there fails every write (EBADF) as a
/// closed stream does, and the command reports what it could not print (cli.cpp).
void hold_closed_standard_streams() {
  for (const int stream : {STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(stream, F_GETFD) != -1 || errno != EBADF) continue;
    const int placeholder = ::open("/dev/null", O_RDONLY);
    if (placeholder >= 0 && placeholder != stream) {
      ::dup2(placeholder, stream);  // stdin closed as well: the placeholder took descriptor 0
      ::close(placeholder);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_streams();
  // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported like a full disk, on every rank:
  // also on those that write into a file another rank created, which hold no temporary of their own.
  struct sigaction file_size {};
  if (::sigaction(SIGXFSZ, nullptr, &file_size) == 0 && file_size.sa_handler == SIG_DFL) std::signal(SIGXFSZ, SIG_IGN);
  // Under mpirun every rank runs the same command on its part of the mesh (docs/design.md, "Many GPUs"); without MPI,
  // one.
  const fluxjac::MpiSession mpi(argc, argv);
  const int exit_code = fluxjac::run_cli(argc, argv);
  // A rank that is done waits for the others at most the exit patience (docs/design.md, "Many GPUs", "Errors").
  return fluxjac::Communicator::world().leave(exit_code, fluxjac::exit_patience_seconds());
}
