#include "part/part_writer.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "mesh/mesh_io.hpp"
#include "partition/partition_check.hpp"
#include "ranks/write_in_turn.hpp"
#include "util/bucket_sort.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using namespace edge_mesh_paths;
using namespace partition_paths;

/// What one rank writes, in file numbering.
struct PartRows {
  std::int64_t first_node = 0, n_owned = 0;
  std::vector<node_index> edges;  ///< [stored][2]
  std::vector<double> normals, areas;
  std::vector<double> coords, volumes, state;  ///< owned rows (coords and volumes empty when absent)
  std::vector<std::int64_t> ghosts;            ///< ascending
  std::vector<std::int64_t> halo_edges;        ///< ascending file edge ids
  std::int64_t halo_expected = 0;              ///< local edges whose R it owns and L it does not
};

/// The stored edges (L owned), sorted by (L, R) in file ids, with the ghosts and the count of halo edges (local, no
/// collective: a rank that fails here meets the others in their next collective).
PartRows collect_rows(const Communicator& comm, const LocalPart& part, std::int64_t first_node,
                      const std::vector<std::int64_t>& original_ids, const EdgeMeshExtras& extras) {
  const RankLayout& layout = part.layout;
  const EdgeMesh& mesh = part.mesh;
  PartRows rows;
  rows.first_node = first_node;
  rows.n_owned = layout.owned_count();
  const std::int64_t n_local = layout.local_count();
  for (std::int64_t k = 0; k < rows.n_owned; ++k)
    if (layout.global_id(layout.owned_node(k)) != first_node + k)
      fail(ExitCode::kRuntime,
           "rank {}: its owned node {} has global id {}, not {}: the owned nodes of the ranks must be consecutive "
           "ranges in rank order to be written as parts",
           comm.rank(), k, layout.global_id(layout.owned_node(k)), first_node + k);
  if (static_cast<std::int64_t>(original_ids.size()) != rows.n_owned)
    fail(ExitCode::kRuntime, "rank {}: {} original ids for {} owned nodes", comm.rank(), original_ids.size(),
         rows.n_owned);
  if (!extras.boundary_nodes.empty() && static_cast<std::int64_t>(extras.boundary_nodes.size()) != rows.n_owned)
    fail(ExitCode::kRuntime, "rank {}: {} boundary flags for {} owned nodes", comm.rank(), extras.boundary_nodes.size(),
         rows.n_owned);
  if (static_cast<std::int64_t>(part.state.Q.size()) != n_local * kBlock)
    fail(ExitCode::kRuntime, "rank {}: a state of {} values for {} local nodes", comm.rank(), part.state.Q.size(),
         n_local);

  const std::vector<std::uint8_t> owned = layout.owned_mask();
  std::vector<std::uint8_t> ghost(owned.size(), 0);
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const node_index left = mesh.left(e), right = mesh.right(e);
    if (!owned[left] && !owned[right])
      fail(ExitCode::kRuntime, "rank {} holds edge ({}, {}), which touches none of its nodes", comm.rank(),
           layout.global_id(left), layout.global_id(right));
    if (!owned[left]) ++rows.halo_expected;
    for (const node_index end : {left, right}) ghost[end] |= !owned[end];
  }
  for (std::size_t local = 0; local < ghost.size(); ++local)  // local ids ascend with global ids (local_part.hpp)
    if (ghost[local]) rows.ghosts.push_back(layout.global_id(static_cast<node_index>(local)));
  // The stored edges sorted by (L, R) in local ids, so in file ids: grouped by L (util/bucket_sort.hpp), each group
  // sorted by R.
  Buckets<edge_index> by_left = bucket_by_key<edge_index>(n_local, [&](auto add) {
    for (edge_index e = 0; e < mesh.n_edges(); ++e)
      if (owned[mesh.left(e)]) add(mesh.left(e), e);
  });
  for (std::int64_t left = 0; left < n_local; ++left)
    std::sort(by_left.begin(left), by_left.end(left),
              [&](edge_index a, edge_index b) { return mesh.right(a) < mesh.right(b); });
  const std::vector<edge_index>& stored = by_left.values;
  rows.edges.reserve(2 * stored.size());
  rows.normals.reserve(3 * stored.size());
  rows.areas.reserve(stored.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const edge_index e = stored[i];
    if (i > 0 && mesh.left(e) == mesh.left(stored[i - 1]) && mesh.right(e) == mesh.right(stored[i - 1]))
      fail(ExitCode::kRuntime, "rank {} holds edge ({}, {}) twice", comm.rank(), layout.global_id(mesh.left(e)),
           layout.global_id(mesh.right(e)));
    for (const node_index end : {mesh.left(e), mesh.right(e)})
      rows.edges.push_back(static_cast<node_index>(layout.global_id(end)));
    rows.normals.insert(rows.normals.end(), &mesh.normals[3 * e], &mesh.normals[3 * e] + 3);
    rows.areas.push_back(mesh.areas[e]);
  }
  const bool has_coords = static_cast<std::int64_t>(mesh.coords.size()) == 3 * n_local;
  const bool has_volumes = static_cast<std::int64_t>(mesh.volumes.size()) == n_local;
  for (std::int64_t k = 0; k < rows.n_owned; ++k) {
    const std::size_t local = static_cast<std::size_t>(layout.owned_node(k));
    if (has_coords) rows.coords.insert(rows.coords.end(), &mesh.coords[3 * local], &mesh.coords[3 * local] + 3);
    if (has_volumes) rows.volumes.push_back(mesh.volumes[local]);
    rows.state.insert(rows.state.end(), &part.state.Q[kBlock * local], &part.state.Q[kBlock * local] + kBlock);
  }
  return rows;
}

/// Offsets from each rank's count.
std::vector<std::int64_t> offsets_of(const Communicator& comm, std::int64_t count) {
  const std::vector<std::int64_t> counts = comm.all_gather(count);
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
  return offsets;
}

/// The rows [begin, end) as one range (none when empty).
std::vector<h5::RowRange> range_of(std::int64_t begin, std::int64_t end) {
  if (begin == end) return {};
  return {{begin, end}};
}

}  // namespace

void write_partitioned_file(const Communicator& comm, const LocalPart& part,
                            const std::vector<std::int64_t>& original_ids, const std::string& path,
                            const std::string& method, const EdgeMeshExtras& extras,
                            const std::function<void(const h5::File&)>& add_more) {
  const std::vector<std::int64_t> node_offsets = offsets_of(comm, part.layout.owned_count());
  const std::int64_t n_nodes = node_offsets.back();
  PartRows rows = collect_rows(comm, part, node_offsets[comm.rank()], original_ids, extras);
  const std::int64_t n_stored = static_cast<std::int64_t>(rows.areas.size());
  const std::vector<std::int64_t> edge_offsets = offsets_of(comm, n_stored);
  const std::int64_t n_edges = edge_offsets.back();

  // The halo edges: every rank tells the owner of each cut edge's R node where the edge lies in the file.
  std::vector<std::vector<std::int64_t>> to_rank(static_cast<std::size_t>(comm.size()));
  for (std::int64_t i = 0; i < n_stored; ++i) {
    const std::int64_t right = rows.edges[2 * i + 1];
    if (right >= rows.first_node && right < rows.first_node + rows.n_owned) continue;
    const auto owner = std::upper_bound(node_offsets.begin(), node_offsets.end(), right) - node_offsets.begin() - 1;
    to_rank[static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(owner, 0, comm.size() - 1))].push_back(
        edge_offsets[comm.rank()] + i);
  }
  const std::vector<std::vector<std::int64_t>> from_rank = comm.all_to_all(to_rank);
  for (const std::vector<std::int64_t>& list : from_rank)
    rows.halo_edges.insert(rows.halo_edges.end(), list.begin(), list.end());
  std::sort(rows.halo_edges.begin(), rows.halo_edges.end());
  if (static_cast<std::int64_t>(rows.halo_edges.size()) != rows.halo_expected)
    fail(ExitCode::kRuntime,
         "rank {} holds {} edges that end at its nodes from another rank's, but the other ranks store {} such "
         "edges: the parts do not hold their cut edges alike",
         comm.rank(), rows.halo_expected, rows.halo_edges.size());

  const std::vector<std::int64_t> ghost_offsets = offsets_of(comm, static_cast<std::int64_t>(rows.ghosts.size()));
  const std::vector<std::int64_t> halo_offsets = offsets_of(comm, static_cast<std::int64_t>(rows.halo_edges.size()));
  const bool coords = comm.sum(std::int64_t{rows.coords.empty() && rows.n_owned > 0 ? 0 : 1}) == comm.size();
  const bool volumes = comm.sum(std::int64_t{rows.volumes.empty() && rows.n_owned > 0 ? 0 : 1}) == comm.size();
  const bool boundary =
      comm.sum(std::int64_t{extras.boundary_nodes.empty() && rows.n_owned > 0 ? 0 : 1}) == comm.size();

  // ---- rank 0 creates the file with every dataset at its full size ------------------------------------------
  const int me = comm.rank();
  const auto create = [&](const std::string& temporary) {
    h5::File file = h5::File::create(temporary, path);
    h5::write_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
    h5::create_group(file, kMeshGroup);
    h5::write_attribute(file, kMeshGroup, "n_nodes", n_nodes);
    h5::create_dataset<node_index>(file, kEdges, {n_edges, 2});
    h5::create_dataset<double>(file, kNormals, {n_edges, 3});
    h5::create_dataset<double>(file, kAreas, {n_edges});
    if (coords) h5::create_dataset<double>(file, kCoords, {n_nodes, 3});
    if (volumes) h5::create_dataset<double>(file, kVolumes, {n_nodes});
    if (boundary) h5::create_dataset(file, kBoundaryNodes, H5T_STD_U8LE, {n_nodes});
    write_edge_mesh_extra_attributes(file, extras);
    h5::create_group(file, kStateGroup);
    h5::write_attribute(file, kStateGroup, "gamma", part.state.gamma);
    h5::create_dataset<double>(file, kState, {n_nodes, kBlock});
    h5::create_group(file, kGroup);
    h5::write_attribute(file, kGroup, "parts", std::int64_t{comm.size()});
    h5::write_attribute(file, kGroup, "method", method);
    const auto write_list = [&](const char* list_path, const std::vector<std::int64_t>& values) {
      h5::write(file, list_path, values, {static_cast<std::int64_t>(values.size())});
    };
    write_list(kNodeOffsets, node_offsets);
    write_list(kEdgeOffsets, edge_offsets);
    write_list(kGhostOffsets, ghost_offsets);
    write_list(kHaloEdgeOffsets, halo_offsets);
    h5::create_dataset<std::int64_t>(file, kOriginalNode, {n_nodes});
    h5::create_dataset<std::int64_t>(file, kGhostNodes, {ghost_offsets.back()});
    h5::create_dataset<std::int64_t>(file, kHaloEdges, {halo_offsets.back()});
    if (add_more) add_more(file);
    file.close();
  };

  // ---- each rank writes its rows in turn (serial HDF5 has one writer) ---------------------------------------
  const auto write_own = [&](const std::string& temporary) {
    h5::File file = h5::File::open(temporary, h5::File::Mode::kReadWrite, path);
    const std::vector<h5::RowRange> nodes = range_of(node_offsets[me], node_offsets[me + 1]);
    const std::vector<h5::RowRange> edges = range_of(edge_offsets[me], edge_offsets[me + 1]);
    h5::write_rows(file, kEdges, edges, rows.edges);
    h5::write_rows(file, kNormals, edges, rows.normals);
    h5::write_rows(file, kAreas, edges, rows.areas);
    if (coords) h5::write_rows(file, kCoords, nodes, rows.coords);
    if (volumes) h5::write_rows(file, kVolumes, nodes, rows.volumes);
    if (boundary) h5::write_rows_raw(file, kBoundaryNodes, nodes, H5T_NATIVE_UINT8, extras.boundary_nodes.data());
    h5::write_rows(file, kState, nodes, rows.state);
    h5::write_rows(file, kOriginalNode, nodes, original_ids);
    h5::write_rows(file, kGhostNodes, range_of(ghost_offsets[me], ghost_offsets[me + 1]), rows.ghosts);
    h5::write_rows(file, kHaloEdges, range_of(halo_offsets[me], halo_offsets[me + 1]), rows.halo_edges);
    file.close();
  };
  write_in_turn(comm, path, create, write_own);
}

}  // namespace fluxjac
