// fluxjac — the frozen CPU reference: multivariate dual of 10, double, direct seeding (Alg. 4).
//
// Never tuned (Ginkgo habit): every fast variant is validated against it. Adiag sums run in edge order,
// so the result is identical whatever the number of threads.
#pragma once

#include "assembly/edge_input.hpp"
#include "jacobian/jacobian.hpp"

namespace fluxjac {

/// \brief Inputs of edge e gathered from the mesh and state.
EdgeInput gather_edge(const EdgeMesh& mesh, const FlowState& state, edge_index e);

/// \brief A dF/dUL and A dF/dUR of one edge with a Dual<10> seeded on both states (no symmetry used), and the edge's
/// flux A F(Q_L, Q_R, n) from the same evaluation.
void reference_local_jacobian(const EdgeInput& edge, double local[kLocalJacobianEntries], double flux[kBlock]);

/// \brief Adds one edge's local Jacobian to Adiag, writes its Aoff blocks and, where the Jacobian has a residual, adds
/// its flux A F to the residual of L and subtracts it from that of R (signs: docs/design.md, "Residual, sign convention
/// and the four blocks"), in A or in A^T (kernels/assembly/orientation.hpp): the edge assembly's rule on the CPU, which
/// the GPU edge kernel follows too.
void scatter_local_jacobian(const double local[kLocalJacobianEntries], const double flux[kBlock], node_index left,
                            node_index right, block_offset slot_lr, block_offset slot_rl, Jacobian& jacobian,
                            Orientation orientation = Orientation::kA);

/// \brief Assembles the whole Jacobian on the CPU (OpenMP for the per-edge work), A or its transpose, the residual
/// unless told not to (the reference variant's own runs follow --residual), and Aoff in float64 too when asked
/// (Jacobian::aoff_f64).
void assemble_reference(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                        Jacobian& jacobian, Orientation orientation = Orientation::kA, bool with_residual = true,
                        bool with_aoff_f64 = false);

/// \brief Sets the number of CPU threads the reference uses (OpenMP) and returns the number it will use:
/// `threads`, or with 0 OpenMP's default (OMP_NUM_THREADS when set, else every core). Always 1 in a build
/// without OpenMP. The result does not depend on it (see above).
int set_cpu_threads(int threads);

/// \brief Residual R_i = sum_{L(e)=i} A F - sum_{R(e)=i} A F in double, from the flux alone (no derivative): what
/// the tests hold every assembly's residual and J v to.
std::vector<double> residual(const EdgeMesh& mesh, const std::vector<double>& Q);

}  // namespace fluxjac
