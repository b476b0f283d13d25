// fluxjac — a GPU variant's whole assembly run on the CPU: its lanes (emulated lane by lane) and the GPU kernels'
// assembly rules (kernels/assembly/orientation.hpp, block_signs.hpp), for either strategy and orientation. The tests
// run every variant through it in builds without a GPU.
#pragma once

#include "jacobian/jacobian.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// \brief Assembles `jacobian` (A or A^T) with the lanes of GPU variant `info`: edge strategy, each edge's local
/// Jacobian from emulate_edge_lanes stored as the edge kernel stores it (scatter_local_jacobian); node strategy, each
/// entry's D_ij from emulate_node_entry stored at its target slot (node_entry_targets), with Adiag and the residual
/// summed over each row's entries in the pattern's order, as the node kernel does. kAuto is the variant's preferred
/// strategy.
void emulate_assembly(const VariantInfo& info, AssemblyStrategy strategy, const EdgeMesh& mesh, const FlowState& state,
                      const JacobianPattern& pattern, Orientation orientation, Jacobian& jacobian,
                      bool with_residual = true);

}  // namespace fluxjac
