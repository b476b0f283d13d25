// fluxjac — one partitioned edge-mesh file written by every rank from its own part (docs/formats.md, "Partitioned
// edge mesh"), so that no rank ever holds the whole mesh: `fluxjac mesh gen` under mpirun, and any other step that
// leaves each rank with its part (docs/design.md, "Many GPUs").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mesh/edge_mesh_extras.hpp"
#include "part/local_part.hpp"
#include "ranks/communicator.hpp"

namespace fluxjac {

namespace h5 {
class File;
}

/// \brief Writes the parts of all ranks as one partitioned edge-mesh file at path, atomically (collective).
///
/// Each rank's owned nodes must be, in rank order, consecutive ranges of the global numbering that starts at 0:
/// rank 0 owns global ids [0, n_0), rank 1 [n_0, n_0 + n_1), ... (layout.global_id of the k-th owned node is the
/// rank's first id + k; a one-process part, RankLayout::whole_mesh, is the one-rank case), and that numbering is the
/// file's. Rank r becomes part r. The file holds:
/// - /mesh: the edges whose L node a rank owns (each edge is stored once: ranks that share a cut edge must hold it
///   with the same orientation, normal and area), sorted by (L, R) in file ids, so that part r's edges are the
///   range edge_offsets[r] ..; `/mesh/coords` and `/mesh/volumes` over the owned nodes when every rank's mesh has
///   them; `/mesh/boundary_nodes` from extras.boundary_nodes, which then holds one flag per owned node (in owned
///   order) on every rank; the /mesh attributes of extras (cell counts of the whole mesh, source, order);
/// - /state: the owned rows of part.state and its gamma;
/// - /partition: `parts` = comm.size(), `method`, the offsets, original_node from original_ids (one id per owned
///   node, in owned order: the id each node had before this numbering; together a permutation of [0, n_nodes)),
///   and per part its ghosts (the other ends of its edges, ascending) and halo edges (the edges other parts store
///   that end at its nodes, ascending), found with one exchange of the cut edges.
/// add_more, when given, runs on rank 0 on the new file before the ranks write their rows (further attributes).
///
/// Serial HDF5 has one writer at a time: rank 0 creates the file under a temporary name with every dataset at its
/// full size, then the ranks write their rows in turn, then rank 0 renames it into place (AtomicOutput). A failure
/// on any rank (an inconsistent part, an unwritable folder, a full disk, a file-size limit) leaves no file and makes
/// every rank throw the same Error (collectives carry failures: ranks/communicator.hpp).
void write_partitioned_file(const Communicator& comm, const LocalPart& part,
                            const std::vector<std::int64_t>& original_ids, const std::string& path,
                            const std::string& method, const EdgeMeshExtras& extras = {},
                            const std::function<void(const h5::File&)>& add_more = {});

}  // namespace fluxjac
