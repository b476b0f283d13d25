// fluxjac — the box mesh generated in parts, one per rank, so that no rank holds the whole mesh (docs/design.md,
// "Many GPUs" and "Meshes"): `fluxjac mesh gen` under mpirun, and a generator spec given to `run` or `bench` under
// mpirun.
//
// Rank r owns a slab of node planes (box_slab_planes: consecutive planes of about equal node-assembly work, so that
// the prism layers' planes, with fewer edges per node, come in larger slabs; or, balancing rows for the solve, of
// about equal node counts: mesh/part_balance.hpp) and holds one ghost plane on each side
// with the cell layers between its held planes. It builds the nodes and cells of those planes with the serial
// generator's code (build_box_slab_elements), and runs the jitter rounds together with the other ranks (whether any
// cell is invalid: a sum; the ghost planes' jitter scales from their owners: one exchange per round), so every node
// gets the coordinates of the serial mesh exactly. The median-dual metrics of its slab (build_median_dual, whose
// sums run over a node's cells in cell order, which the slab keeps) give every edge with an owned end and every
// owned node's volume bit for bit as the serial generator does. The nodes are then numbered part by part (rank 0's
// owned nodes first), within a part in the spec's ordering applied to the part alone (natural, rcm on the part's
// own edges, random), each edge turned so that L < R in that numbering (its normal negated when it turns) and the
// edges sorted by (L, R): the serial mesh up to numbering.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/generator.hpp"
#include "part/local_part.hpp"
#include "ranks/communicator.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// \brief The partition method a file of generated parts records: "box slabs along z (P parts balanced by vertex
/// weight 1 + degree (node-assembly work)), ORDER order within each part" (balance_phrase of `balance`).
std::string generated_parts_method(const BoxMeshSpec& spec, int parts, PartBalance balance = PartBalance::kAssembly);

/// \brief Generates this rank's part of the box mesh of spec (collective; see the file comment): make_part's source
/// for a generator spec. keep_geometry keeps what a file of the parts holds: the coordinates of the owned and ghost
/// nodes and the owned nodes' dual volumes in part.mesh, each owned node's natural id (original_ids) and boundary flag;
/// a run needs none of them. The slabs balance by `balance` (box_slab_planes). The generation steps go to
/// part.partition.steps. Checks the spec and the memory a rank needs (check_box_mesh_memory for comm.size() parts)
/// first. A failure on any rank makes every rank throw the same
/// Error. Progress lines (rank 0) go to note.
LocalPart generate_part(const Communicator& comm, const BoxMeshSpec& spec, bool keep_geometry, const Note& note,
                        PartBalance balance = PartBalance::kAssembly);

}  // namespace fluxjac
