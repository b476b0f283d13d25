// fluxjac — GPU Jacobian assembly of the 3D Roe flux with forward-mode AD variants.
#include "cli/cli.hpp"
#include "parallel/communicator.hpp"

int main(int argc, char** argv) {
  // Under mpirun every rank runs the same command on its part of the mesh (docs/design.md 9); without MPI, one.
  const fluxjac::MpiSession mpi(argc, argv);
  const int exit_code = fluxjac::run_cli(argc, argv);
  return fluxjac::Communicator::world().leave(exit_code);
}
