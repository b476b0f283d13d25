// fluxjac — reading, validating and writing edge meshes and flow states (docs/design.md, "Edge mesh and state").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"

namespace fluxjac {

namespace h5 {
class File;
}

/// Root attribute `format` of mesh and state files.
inline constexpr const char* kEdgeMeshFormat = "fluxjac-edge-mesh";
/// Root attribute `version` of mesh and state files.
inline constexpr int kEdgeMeshFormatVersion = 1;
/// Largest allowed deviation of |normal| from 1.
inline constexpr double kNormalTolerance = 1e-6;

/// \brief Requires the format of an edge-mesh file (h5::require_format), naming `fluxjac mesh dual` for an element
/// mesh, the file the edge mesh is made from.
void require_edge_mesh_format(const h5::File& file);

/// \brief The groups and datasets of a fluxjac-edge-mesh file (docs/formats.md): one list for every reader and
/// writer of the format (mesh_io, edge_mesh_extras, partition_io).
namespace edge_mesh_paths {
inline constexpr const char* kMeshGroup = "/mesh";
inline constexpr const char* kEdges = "/mesh/edges";
inline constexpr const char* kNormals = "/mesh/normals";
inline constexpr const char* kAreas = "/mesh/areas";
inline constexpr const char* kCoords = "/mesh/coords";
inline constexpr const char* kVolumes = "/mesh/volumes";
inline constexpr const char* kBoundaryNodes = "/mesh/boundary_nodes";
inline constexpr const char* kStateGroup = "/state";
inline constexpr const char* kState = "/state/Q";
}  // namespace edge_mesh_paths

/// \brief Reads /mesh of a fluxjac-edge-mesh file and validates all of it (root attributes, dataset types
/// and shapes, every dataset's storage before any memory is estimated or allocated, node ranges, self-loops,
/// duplicate edges in either orientation, finite values, unit normals, positive areas, and a per-node dataset for
/// nodes that no edge reaches). Throws Error(kInvalidInput) with one line naming the file, dataset and first bad
/// index.
EdgeMesh read_edge_mesh(const std::string& path);

/// \brief Reads /state of a fluxjac-edge-mesh file (the mesh file or a separate state file) and validates
/// it: gamma == 1.4, Q of shape [expected_nodes, 5] (any row count when expected_nodes < 0), finite,
/// positive density and pressure. Throws Error(kInvalidInput) naming the file, dataset and node.
FlowState read_flow_state(const std::string& path, std::int64_t expected_nodes);

/// \brief Error(kInvalidInput) unless the state group's attribute gamma is 1.4 (within 1e-6), naming the file.
void require_state_gamma(const h5::File& file, const char* group);

/// \brief Error(kInvalidInput) naming the file, dataset, node and component unless every state (rows of 5
/// conservative values) is finite with positive density and pressure. Edge-mesh and element-mesh states alike; q
/// holds the rows from first_node on (a rank's slice), and messages name the node as the file numbers it.
void check_state_values(const std::string& file, const char* dataset, const std::vector<double>& q,
                        std::int64_t first_node = 0);

/// \brief Reads only the edges edge_ids (ascending file indices) of a mesh file, with the same checks as
/// read_edge_mesh on them, errors naming edges by their file index: a rank's slice of a partitioned mesh. Node ids
/// stay in file numbering (n_nodes is the file's), coords and volumes are not read; file_edges receives the file's
/// edge count.
EdgeMesh read_edge_mesh_slice(const std::string& path, const std::vector<std::int64_t>& edge_ids,
                              std::int64_t& file_edges);

/// \brief Reads the states of nodes [first_node, end_node) only, with read_flow_state's checks on them (errors name
/// the nodes by their file index).
FlowState read_flow_state_slice(const std::string& path, std::int64_t expected_nodes, std::int64_t first_node,
                                std::int64_t end_node);

/// \brief Writes mesh (and state when not null) atomically in the docs/design.md, "Edge mesh and state" layout, edges
/// as int32; add_more, when given, writes further datasets and attributes into the file before it is closed and
/// committed. Only array sizes are checked (Error(kRuntime) when inconsistent); values are written as given.
void write_edge_mesh(const std::string& path, const EdgeMesh& mesh, const FlowState* state,
                     const std::function<void(const h5::File&)>& add_more = {});

/// \brief Writes a state-only file (root attributes and /state), atomically; read it with read_flow_state.
void write_flow_state(const std::string& path, const FlowState& state);

}  // namespace fluxjac
