// fluxjac — GPU Jacobian assembly of the 3D Roe flux with forward-mode AD variants.
#include <cstdlib>

#include "cli/cli.hpp"
#include "parallel/communicator.hpp"

int main(int argc, char** argv) {
  // Under mpirun every rank runs the same command on its part of the mesh; without MPI, one process runs it
  // (docs/design.md, "Many GPUs").
  const fluxjac::MpiSession mpi(argc, argv);
  const int exit_code = fluxjac::run_cli(argc, argv);
  // How long a rank that is done waits for the others before it ends the job (docs/design.md, "Many GPUs");
  // tests shorten it.
  const char* patience = std::getenv("FLUXJAC_EXIT_PATIENCE_SECONDS");
  return fluxjac::Communicator::world().leave(exit_code, patience ? std::atof(patience) : 60.0);
}
