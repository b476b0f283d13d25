// fluxjac — box meshes of any size for `fluxjac mesh gen` (docs/design.md, "Meshes").
//
// The unit cube is cut into n^3 hexahedra, (n+1)^3 nodes, and each hexahedron is split into
//   tet:   6 tetrahedra (Kuhn / Freudenthal: one per path from corner (0,0,0) to (1,1,1) along the axes),
//          every face split along the diagonal through its lowest corner, so neighbours conform;
//   prism: 2 prisms along the xy diagonal through the lowest corner, extruded in z;
//   mixed: prisms in the lower half of the cell layers, clustered towards the wall z = 0 so they fill the
//          lower quarter of the box (a boundary layer), and Kuhn tetrahedra above. The xy diagonals of both
//          splits agree, so the layers conform. This gives about 5.4 edges per node, like the paper's
//          1.1M-node / 5.97M-edge wing-body mesh (n = 100: 1,030,301 nodes, 5,580,300 edges).
// Interior nodes are jittered; the median-dual metrics come from dual_metrics.hpp, the state is a Mach 0.85
// freestream with a stagnation bump and a supersonic bump, so every branch of the entropy fix is taken.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/element_mesh.hpp"
#include "mesh/ordering.hpp"
#include "mesh/part_balance.hpp"
#include "mesh/progress.hpp"
#include "util/memory.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

namespace h5 {
class File;
}

/// How the hexahedra of a box mesh are split.
enum class MeshKind { kTet, kPrism, kMixed };
inline constexpr NamedValue<MeshKind> kMeshKindNames[] = {
    {MeshKind::kTet, "tet"}, {MeshKind::kPrism, "prism"}, {MeshKind::kMixed, "mixed"}};
constexpr const auto& names_of(MeshKind) { return kMeshKindNames; }

/// \brief The kind named `text`; Error(kUsage) "unknown kind 'TEXT': use tet, prism or mixed" otherwise.
inline MeshKind parse_mesh_kind(const std::string& text) { return parse_named<MeshKind>(text, "kind"); }

/// What box mesh to build.
struct BoxMeshSpec {
  MeshKind kind = MeshKind::kMixed;
  int n = 10;  ///< hexahedra per direction
  NodeOrdering order = NodeOrdering::kNatural;
  double jitter = 0.2;     ///< interior-node displacement, fraction of the local spacing, in [0, 0.45)
  std::uint64_t seed = 1;  ///< jitter and random ordering
};

/// A generated mesh with its state.
struct GeneratedMesh {
  EdgeMesh mesh;
  FlowState state;
  std::vector<std::uint8_t> on_boundary;  ///< [n_nodes]: 1 on the box surface (open dual cells)
  std::int64_t n_tetrahedra = 0;
  std::int64_t n_prisms = 0;
  std::int64_t n_jitter_reduced = 0;  ///< nodes whose jitter was scaled down to keep every cell valid
};

/// \brief Fails with ExitCode::kUsage, saying what to change, if a spec cannot be built.
void validate_box_mesh_spec(const BoxMeshSpec& spec);

/// \brief The largest n the generator takes: (n+1)^3 nodes must fit 32-bit node ids.
int largest_box_mesh_n();

/// \brief Peak memory of generate_box_mesh for a spec, in bytes: the arrays alive at its largest stage (the
/// median dual for natural order, the renumbering otherwise), counted from the exact node, cell and edge
/// counts, with 10% for the allocator's slack, plus the program itself. Measured peaks (maximum resident set,
/// tet, prism and mixed meshes of n = 40 to 100) are 5% to 20% below it. Generated in `parts` slabs
/// (generate_part), the peak of the rank with the most held planes (box_slab_planes under `balance`): the same
/// stages scaled by its share of the node planes, its ghost planes included.
double estimate_box_mesh_bytes(const BoxMeshSpec& spec, int parts = 1, PartBalance balance = PartBalance::kAssembly);

/// \brief Fails with ExitCode::kUsage, giving the estimate, the available memory and the largest n that
/// fits, when estimate_box_mesh_bytes(spec) exceeds the available memory (unknown: no check).
/// For `parts` slabs balanced by `balance`, the estimate and the memory are those of one rank (each rank checks its
/// own host).
void check_box_mesh_memory(const BoxMeshSpec& spec,
                           const std::optional<AvailableMemory>& available = available_memory(), int parts = 1,
                           PartBalance balance = PartBalance::kAssembly);

/// \brief Number of prism cell layers at the bottom of the box: 0 (tet), n (prism), n / 2 (mixed).
int prism_layer_count(const BoxMeshSpec& spec);

/// \brief The cells of the whole box mesh of spec (two prisms or six tetrahedra per hexahedron of each layer).
CellCounts box_mesh_cells(const BoxMeshSpec& spec);

/// \brief Node planes z_0 = 0 < ... < z_n = 1: uniform, or for mixed clustered towards z = 0 with a
/// continuous spacing so that the prism layers fill the lower quarter of the box.
std::vector<double> box_z_levels(const BoxMeshSpec& spec);

/// \brief The jittered element mesh in natural node order (id = i + (n+1) (j + (n+1) k)). Where jitter
/// would make a cell invalid, the jitter of that cell's nodes is halved (then removed) until every cell is
/// valid. on_boundary and n_jitter_reduced, when given, receive the box-surface flags and that count.
ElementMesh build_box_elements(const BoxMeshSpec& spec, std::vector<std::uint8_t>* on_boundary = nullptr,
                               std::int64_t* n_jitter_reduced = nullptr);

/// \brief A slab of the box's node planes for generation in parts (docs/design.md, "Many GPUs"): a part owns the
/// node planes z = k for k in [first_plane, end_plane) and holds one more plane on each side inside the box, with
/// the cell layers between its held planes; its local node ids are the natural ids - first_node(), so they ascend
/// with them.
struct BoxSlab {
  int first_plane = 0, end_plane = 0;  ///< owned node planes
  int first_held = 0, end_held = 0;    ///< held node planes: the owned ones and a ghost plane on each side
  int n = 0;                           ///< the spec's n
  /// The natural id of the first held node.
  std::int64_t first_node() const { return static_cast<std::int64_t>(first_held) * (n + 1) * (n + 1); }
  /// Nodes per plane.
  std::int64_t plane_nodes() const { return static_cast<std::int64_t>(n + 1) * (n + 1); }
};

/// \brief The whole box as one slab (no ghost planes).
BoxSlab whole_box_slab(const BoxMeshSpec& spec);
/// \brief The slab owning node planes [first_plane, end_plane), with its ghost planes.
BoxSlab box_slab(const BoxMeshSpec& spec, int first_plane, int end_plane);

/// \brief The work of each node plane under `balance`, the sum of vertex_weight over its nodes, from which slabs are
/// balanced: for kAssembly the node-assembly work, nodes + twice the edges in the plane + the edges to the planes
/// beside it (the sum of 1 + degree), smaller in the prism layers, which have fewer edges; for kSolve the sum of
/// kSolveRowWeight + degree, which differs less between the layers.
std::vector<double> box_plane_work(const BoxMeshSpec& spec, PartBalance balance = PartBalance::kAssembly);

/// \brief Plane offsets [parts + 1] of `parts` slabs of about equal work (box_plane_work under `balance`), each at
/// least one plane; Error(kUsage) when the box has fewer than `parts` node planes.
std::vector<int> box_slab_planes(const BoxMeshSpec& spec, int parts, PartBalance balance = PartBalance::kAssembly);

/// What the jitter rounds of a part ask of the other parts: whether any part still has an invalid cell (the
/// rounds go on while one has), and its ghost planes' jitter scales from their owners (after each round's update
/// of the owned ones). Empty functions: a single part.
struct JitterSync {
  std::function<bool(bool local_invalid)> any;
  std::function<void(std::vector<double>& scale)> refresh;
};

/// \brief build_box_elements for a slab: its held nodes and cells in local ids (BoxSlab), jittered so that every
/// node gets exactly the coordinates the whole box gives it (sync carries the jitter rounds across parts). The
/// whole box's slab with an empty sync is build_box_elements. on_boundary receives the held nodes' flags,
/// n_jitter_reduced the count over the owned nodes.
ElementMesh build_box_slab_elements(const BoxMeshSpec& spec, const BoxSlab& slab, const JitterSync& sync,
                                    const MeshProgress& progress = {}, std::vector<std::uint8_t>* on_boundary = nullptr,
                                    std::int64_t* n_jitter_reduced = nullptr);

/// \brief The flow state at given coordinates [n][3]: freestream Mach 0.85 (rho = 1, p = 1/gamma, 2 degrees
/// angle of attack, 1 degree sideslip) whose speed is scaled by two smooth flat-topped bumps, one slowing
/// the flow to near stagnation (Mach < 0.2), one accelerating it to Mach > 1.05; density and pressure
/// follow isentropically at constant total enthalpy, so they stay positive.
FlowState disturbed_freestream_state(const std::vector<double>& coords);

/// \brief Builds a box mesh end to end: nodes, cells, median-dual metrics, ordering, state. Checks the spec
/// and the memory it needs (check_box_mesh_memory) before allocating anything. Deterministic for a spec
/// (independent of the number of OpenMP threads). Stages: "nodes", "cells", "dual metrics", "ordering",
/// "state", "done".
GeneratedMesh generate_box_mesh(const BoxMeshSpec& spec, const MeshProgress& progress = {});

/// \brief Writes a generated mesh atomically with its state, boundary flags, cell counts, ordering, generator
/// record and content digest (generated_mesh_digest), and `source`, the name it was asked for, when not empty.
void write_generated_mesh(const std::string& path, const GeneratedMesh& generated, const BoxMeshSpec& spec,
                          const std::string& source = {});

/// \brief Writes the /mesh attribute `generator` (box_mesh_generator_record) into an open file whose /mesh exists.
void write_box_mesh_generator_record(const h5::File& file, const BoxMeshSpec& spec);

/// \brief The version of the box-mesh generator in the record of every file it writes: raised whenever
/// generate_box_mesh makes other arrays for some spec, so that a cached file of an older generator is never taken
/// for the new one's (the bundled mesh's test, BundledMesh.RegeneratesIdenticallyFromItsDocumentedCommand, fails
/// on such a change until meshes/box-mixed-6-rcm.h5 is regenerated).
inline constexpr int kBoxMeshGeneratorVersion = 1;

/// \brief The spec a generated file was made from, as its /mesh attribute `generator` records it
/// (docs/formats.md, "Edge mesh and state"): "kind=mixed n=6 order=rcm seed=1 jitter=0.2 generator=1". The same
/// record means the same mesh, bit for bit: generate_box_mesh is deterministic for a spec and a generator version.
std::string box_mesh_generator_record(const BoxMeshSpec& spec);

/// \brief The generator record of an edge-mesh file, nullopt when it has none (a file that `mesh gen` did not
/// write, or one written before files carried it); Error(kInvalidInput) when the file cannot be read.
std::optional<std::string> read_box_mesh_generator_record(const std::string& path);

/// \brief The ContentDigest of a generated mesh: its edges, normals, areas, and each node's coordinates, volume,
/// boundary flag and state.
std::uint64_t generated_mesh_digest(const GeneratedMesh& generated);

/// \brief The content digest write_generated_mesh recorded in an open edge-mesh file (the /mesh attribute
/// `content_digest`, 16 hexadecimal digits), nullopt when it has none (a file written before files carried it, or by
/// `mesh gen` under mpirun, whose parts are numbered otherwise).
std::optional<std::string> read_generated_mesh_digest(const h5::File& file);

/// \brief The ContentDigest of what an open edge-mesh file stores, read slice_rows rows at a time (the check holds
/// one slice, whatever the mesh): what generated_mesh_digest gives for the mesh the file was written from, unless
/// the file was changed since. Error(kInvalidInput) when a dataset the generator writes is missing or has another
/// shape than /mesh's `n_nodes` and /mesh/edges give it.
std::uint64_t stored_mesh_digest(const h5::File& file, std::int64_t slice_rows = std::int64_t{1} << 19);

}  // namespace fluxjac
