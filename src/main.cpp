// fluxjac — GPU Jacobian assembly of the 3D Roe flux with forward-mode AD variants.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return fluxjac::run_cli(argc, argv); }
