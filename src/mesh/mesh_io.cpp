#include "mesh/mesh_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mesh/element_io.hpp"
#include "physics/gas.hpp"
#include "util/atomic_output.hpp"
#include "util/bucket_sort.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/memory.hpp"

namespace fluxjac {

void require_edge_mesh_format(const h5::File& file) {
  if (h5::read_format(file) == std::optional<std::string>(kElementMeshFormat))
    fail(ExitCode::kInvalidInput,
         "{}: an element mesh (format \"{}\"), not an edge mesh: make its edge mesh with 'fluxjac mesh dual {} -o "
         "EDGES.h5' and give that file",
         file.name(), kElementMeshFormat, file.name());
  h5::require_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
}
namespace {

using namespace edge_mesh_paths;
/// gamma values closer than this to 1.4 are taken as 1.4 (a float32 attribute holds 1.39999998).
constexpr double kGammaTolerance = 1e-6;

// ---- /mesh ---------------------------------------------------------------------------------------

std::int64_t read_node_count(const h5::File& file) {
  if (!h5::exists(file, kMeshGroup))
    fail(ExitCode::kInvalidInput, "{}: {}: group not found (no mesh in this file)", file.name(), kMeshGroup);
  const std::optional<std::int64_t> n_nodes = h5::read_integer_attribute(file, kMeshGroup, "n_nodes");
  if (!n_nodes) fail(ExitCode::kInvalidInput, "{}: {}: attribute \"n_nodes\" is missing", file.name(), kMeshGroup);
  if (*n_nodes <= 0)
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"n_nodes\" is {}, expected a positive node count", file.name(),
         kMeshGroup, *n_nodes);
  constexpr std::int64_t kMaxNodes = std::numeric_limits<node_index>::max();
  if (*n_nodes > kMaxNodes)
    fail(ExitCode::kInvalidInput,
         "{}: {}: attribute \"n_nodes\" is {}, more than the {} nodes that int32 node indices can address", file.name(),
         kMeshGroup, *n_nodes, kMaxNodes);
  return *n_nodes;
}

/// The file index of the k-th edge read: k itself for the whole mesh, the k-th selected edge for a slice, so that a
/// rank's message names the edge as one process reading the whole file would.
struct EdgeRows {
  const std::vector<std::int64_t>* selected = nullptr;
  std::int64_t operator()(std::size_t k) const { return selected ? (*selected)[k] : static_cast<std::int64_t>(k); }
};

/// Node ranges and self-loops, in file order.
template <class Index>
void check_edge_nodes(const std::string& file, const std::vector<Index>& edges, std::int64_t n_nodes,
                      const EdgeRows& row) {
  const std::size_t n_edges = edges.size() / 2;
  for (std::size_t e = 0; e < n_edges; ++e) {
    const std::int64_t left = edges[2 * e];
    const std::int64_t right = edges[2 * e + 1];
    if (left < 0 || left >= n_nodes)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: left node {} is out of range [0, {}) (n_nodes = {})", file, kEdges,
           row(e), left, n_nodes, n_nodes);
    if (right < 0 || right >= n_nodes)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: right node {} is out of range [0, {}) (n_nodes = {})", file, kEdges,
           row(e), right, n_nodes, n_nodes);
    if (left == right)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: self-loop: both ends are node {}", file, kEdges, row(e), left);
  }
}

std::vector<node_index> read_edges(const h5::File& file, const h5::DatasetInfo& info, std::int64_t n_nodes,
                                   const std::vector<h5::RowRange>* rows, const EdgeRows& row) {
  if (info.type == h5::kInt32) {
    std::vector<node_index> edges =
        rows ? h5::read_rows<node_index>(file, info, *rows) : h5::read<node_index>(file, info);
    check_edge_nodes(file.name(), edges, n_nodes, row);
    return edges;
  }
  const std::vector<std::int64_t> wide =
      rows ? h5::read_rows<std::int64_t>(file, info, *rows) : h5::read<std::int64_t>(file, info);
  check_edge_nodes(file.name(), wide, n_nodes, row);
  std::vector<node_index> edges(wide.size());
  std::transform(wide.begin(), wide.end(), edges.begin(), [](std::int64_t id) { return static_cast<node_index>(id); });
  return edges;
}

/// Duplicate edges, (a, b) and (b, a) alike. A counting sort buckets each edge's key (lower node, higher node) by
/// its lower node; the buckets hold a few keys each (about 5.4 edges per node), so sorting them is cheap, and a
/// local node ordering keeps the two passes cache-friendly. There are at most n_edges + 1 buckets (nodes share
/// them modulo that count), so a file declaring a huge n_nodes over a few edges costs nothing. Only when a
/// duplicate exists, a second pass finds the first edge (in file order) that repeats an earlier one, so the
/// message names both.
void check_duplicate_edges(const std::string& file, const std::vector<node_index>& edges, std::int64_t n_nodes,
                           const EdgeRows& row) {
  const std::size_t n_edges = edges.size() / 2;
  const std::size_t n_buckets = std::min(static_cast<std::size_t>(n_nodes), n_edges + 1);
  const auto lower = [&](std::size_t e) { return std::min(edges[2 * e], edges[2 * e + 1]); };
  const auto higher = [&](std::size_t e) { return std::max(edges[2 * e], edges[2 * e + 1]); };
  const auto key_of = [&](node_index low, node_index high) {
    return static_cast<std::uint64_t>(low) << 32 | static_cast<std::uint32_t>(high);
  };
  Buckets<std::uint64_t> keys = bucket_by_key<std::uint64_t>(static_cast<std::int64_t>(n_buckets), [&](auto&& add) {
    for (std::size_t e = 0; e < n_edges; ++e)
      add(static_cast<std::int64_t>(static_cast<std::size_t>(lower(e)) % n_buckets), key_of(lower(e), higher(e)));
  });

  std::vector<std::uint64_t> repeated;  // keys of the node pairs that occur more than once
  for (std::int64_t bucket = 0; bucket < keys.n_keys(); ++bucket) {
    const auto first = keys.begin(bucket);
    const auto last = keys.end(bucket);
    std::sort(first, last);
    for (auto it = std::adjacent_find(first, last); it != last; it = std::adjacent_find(it + 1, last))
      if (repeated.empty() || repeated.back() != *it) repeated.push_back(*it);
  }
  if (repeated.empty()) return;
  std::sort(repeated.begin(), repeated.end());

  std::unordered_map<std::uint64_t, std::size_t> first_edge;
  for (std::size_t e = 0; e < n_edges; ++e) {
    const std::uint64_t key = key_of(lower(e), higher(e));
    if (!std::binary_search(repeated.begin(), repeated.end(), key)) continue;
    const auto [earlier, inserted] = first_edge.emplace(key, e);
    if (!inserted) {
      const std::size_t other = earlier->second;
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: duplicate edge ({}, {}): edge {} already joins these nodes as ({}, {}) (each node pair "
           "may appear once, in either orientation)",
           file, kEdges, row(e), edges[2 * e], edges[2 * e + 1], row(other), edges[2 * other], edges[2 * other + 1]);
    }
  }
}

void check_normals(const std::string& file, const std::vector<double>& normals, const EdgeRows& row) {
  const std::size_t n_edges = normals.size() / 3;
  for (std::size_t e = 0; e < n_edges; ++e) {
    const double* normal = &normals[3 * e];
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(normal[k]))
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: component {} is {}, expected a finite number", file, kNormals,
             row(e), k, normal[k]);
    // Compare squared lengths; the square root only for the message.
    constexpr double kMinSquared = (1.0 - kNormalTolerance) * (1.0 - kNormalTolerance);
    constexpr double kMaxSquared = (1.0 + kNormalTolerance) * (1.0 + kNormalTolerance);
    const double squared = normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2];
    if (!(squared >= kMinSquared && squared <= kMaxSquared))
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: normal has length {:.9g}, expected unit length (tolerance 1e-6)", file,
           kNormals, row(e), std::sqrt(squared));
  }
}

void check_areas(const std::string& file, const std::vector<double>& areas, const EdgeRows& row) {
  for (std::size_t e = 0; e < areas.size(); ++e) {
    if (!std::isfinite(areas[e]))
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: area is {}, expected a finite number", file, kAreas, row(e), areas[e]);
    if (!(areas[e] > 0.0))
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: area is {}, expected a positive number", file, kAreas, row(e),
           areas[e]);
  }
}

/// Finite values in a [rows, components] dataset, naming the row (and the component when there are several).
void check_finite(const std::string& file, const char* path, const std::vector<double>& values, int components) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    const std::size_t row = i / static_cast<std::size_t>(components);
    if (components == 1)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: value is {}, expected a finite number", file, path, row, values[i]);
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: component {} is {}, expected a finite number", file, path, row,
         i % static_cast<std::size_t>(components), values[i]);
  }
}

/// Nodes that no edge reaches exist only where the file says so per node: a node count past the last node of any
/// edge needs a per-node dataset (coordinates, volumes, boundary flags or a state) that holds the other nodes.
/// Otherwise n_nodes is wrong, and a small file declaring billions of nodes would only fail later, in an
/// allocation of some command's per-node arrays.
void require_nodes_described(const h5::File& file, const EdgeMesh& mesh, bool has_node_dataset) {
  const std::int64_t reached = mesh.edges.empty() ? 0 : *std::max_element(mesh.edges.begin(), mesh.edges.end()) + 1;
  if (reached >= mesh.n_nodes || has_node_dataset || h5::exists(file, kBoundaryNodes) || h5::exists(file, kState))
    return;
  fail(ExitCode::kInvalidInput,
       "{}: {}: attribute \"n_nodes\" is {}, but no edge reaches a node past {} and the file stores nothing per node "
       "({}, {}, {} or {}) for the other {}: a wrong node count? (nodes that no edge reaches need one of those "
       "datasets)",
       file.name(), kMeshGroup, mesh.n_nodes, reached - 1, kCoords, kVolumes, kBoundaryNodes, kState,
       mesh.n_nodes - reached);
}

// ---- /state --------------------------------------------------------------------------------------

// ---- writing -------------------------------------------------------------------------------------

void check_writable(const std::string& path, const EdgeMesh& mesh) {
  const std::size_t n_edges = mesh.areas.size();
  const std::size_t n_nodes = mesh.n_nodes > 0 ? static_cast<std::size_t>(mesh.n_nodes) : 0;
  const bool consistent = mesh.n_nodes > 0 && mesh.edges.size() == 2 * n_edges && mesh.normals.size() == 3 * n_edges &&
                          (mesh.coords.empty() || mesh.coords.size() == 3 * n_nodes) &&
                          (mesh.volumes.empty() || mesh.volumes.size() == n_nodes);
  if (!consistent)
    fail(ExitCode::kRuntime,
         "{}: cannot write an inconsistent mesh: n_nodes {}, {} areas, {} edge ends, {} normal components, {} "
         "coordinates, {} volumes",
         path, mesh.n_nodes, n_edges, mesh.edges.size(), mesh.normals.size(), mesh.coords.size(), mesh.volumes.size());
}

void check_writable(const std::string& path, const FlowState& state, std::int64_t n_nodes) {
  if (state.Q.size() % kBlock != 0 || (n_nodes >= 0 && state.n_nodes() != n_nodes))
    fail(ExitCode::kRuntime, "{}: cannot write a state of {} values for {} nodes", path, state.Q.size(), n_nodes);
}

void write_mesh_group(const h5::File& file, const EdgeMesh& mesh) {
  const std::int64_t n_edges = mesh.n_edges();
  h5::create_group(file, kMeshGroup);
  h5::write_attribute(file, kMeshGroup, "n_nodes", std::int64_t{mesh.n_nodes});
  h5::write(file, kEdges, mesh.edges, {n_edges, 2});
  h5::write(file, kNormals, mesh.normals, {n_edges, 3});
  h5::write(file, kAreas, mesh.areas, {n_edges});
  if (!mesh.coords.empty()) h5::write(file, kCoords, mesh.coords, {mesh.n_nodes, 3});
  if (!mesh.volumes.empty()) h5::write(file, kVolumes, mesh.volumes, {mesh.n_nodes});
}

void write_state_group(const h5::File& file, const FlowState& state) {
  h5::create_group(file, kStateGroup);
  h5::write_attribute(file, kStateGroup, "gamma", state.gamma);
  h5::write(file, kState, state.Q, {state.n_nodes(), kBlock});
}

/// Creates the file under a temporary name, lets write_groups fill it, closes it and moves it into place.
template <class WriteGroups>
void write_atomically(const std::string& path, WriteGroups&& write_groups) {
  AtomicOutput output(path);
  {
    h5::File file = h5::File::create(output.temporary_path(), path);
    h5::write_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
    write_groups(file);
    file.close();
  }
  output.commit();
}

}  // namespace

namespace {

/// Reads the whole mesh (rows == nullptr) or the selected edges only (their nodes stay in file numbering; coords and
/// volumes are then not read).
EdgeMesh read_edges_of(const std::string& path, const std::vector<std::int64_t>* rows, std::int64_t* file_edges) {
  const h5::File file = h5::File::open(path);
  require_edge_mesh_format(file);
  EdgeMesh mesh;
  mesh.n_nodes = read_node_count(file);

  // Types and shapes of everything first, then the values.
  const h5::DatasetInfo edges = h5::describe_dataset(file, kEdges);
  h5::require_type(edges, {h5::kInt32, h5::kInt64});
  h5::require_shape(edges, {h5::kAnyExtent, 2}, "[n_edges, 2]: (left, right) node per edge");
  const std::int64_t n_edges = edges.shape[0];
  if (file_edges) *file_edges = n_edges;
  if (n_edges == 0) fail(ExitCode::kInvalidInput, "{}: {}: the mesh has no edges", path, kEdges);
  const std::string per_edge = fmt::format("n_edges = {} from {}", n_edges, kEdges);
  const std::string per_node = fmt::format("n_nodes = {} from {}", mesh.n_nodes, kMeshGroup);

  const h5::DatasetInfo normals = h5::describe_dataset(file, kNormals);
  h5::require_type(normals, {h5::kFloat64});
  h5::require_shape(normals, {n_edges, 3}, "[n_edges, 3], " + per_edge);
  const h5::DatasetInfo areas = h5::describe_dataset(file, kAreas);
  h5::require_type(areas, {h5::kFloat64});
  h5::require_shape(areas, {n_edges}, "[n_edges], " + per_edge);
  std::optional<h5::DatasetInfo> coords, volumes;
  if (!rows && h5::exists(file, kCoords)) {
    coords = h5::describe_dataset(file, kCoords);
    h5::require_type(*coords, {h5::kFloat64});
    h5::require_shape(*coords, {mesh.n_nodes, 3}, "[n_nodes, 3], " + per_node);
  }
  if (!rows && h5::exists(file, kVolumes)) {
    volumes = h5::describe_dataset(file, kVolumes);
    h5::require_type(*volumes, {h5::kFloat64});
    h5::require_shape(*volumes, {mesh.n_nodes}, "[n_nodes], " + per_node);
  }

  // Every dataset's storage first (h5::require_readable: a small file declaring a huge shape is damaged input, exit
  // code 2, whatever memory reading it would take), then what reading and checking will hold at once, before any
  // of it is allocated.
  for (const h5::DatasetInfo* info : {&edges, &normals, &areas}) h5::require_readable(file, *info, 0.0);
  if (coords) h5::require_readable(file, *coords, 0.0);
  if (volumes) h5::require_readable(file, *volumes, 0.0);
  std::vector<h5::RowRange> ranges;
  if (rows) {
    ranges = h5::row_ranges(*rows);
    if (!ranges.empty() && (ranges.front().begin < 0 || ranges.back().end > n_edges))
      fail(ExitCode::kInvalidInput, "{}: {}: the selected edges [{}, {}) lie outside its {} edges", path, kEdges,
           ranges.front().begin, ranges.back().end, n_edges);
  }
  const double edge_count = static_cast<double>(rows ? static_cast<std::int64_t>(rows->size()) : n_edges);
  const double edge_bytes = edge_count * ((edges.type == h5::kInt64 ? 16.0 : 0.0) + 8.0 + 24.0 + 8.0 + 8.0) +
                            16.0 * std::min(static_cast<double>(mesh.n_nodes), edge_count + 1.0);
  const double node_bytes = static_cast<double>(mesh.n_nodes) * ((coords ? 24.0 : 0.0) + (volumes ? 8.0 : 0.0));
  require_memory(edge_bytes + node_bytes,
                 fmt::format("{}: reading the mesh ({} nodes, {} edges)", path, mesh.n_nodes, n_edges));

  const EdgeRows row{rows};
  mesh.edges = read_edges(file, edges, mesh.n_nodes, rows ? &ranges : nullptr, row);
  if (!rows) require_nodes_described(file, mesh, coords.has_value() || volumes.has_value());
  check_duplicate_edges(path, mesh.edges, mesh.n_nodes, row);
  mesh.normals = rows ? h5::read_rows<double>(file, normals, ranges) : h5::read<double>(file, normals);
  check_normals(path, mesh.normals, row);
  mesh.areas = rows ? h5::read_rows<double>(file, areas, ranges) : h5::read<double>(file, areas);
  check_areas(path, mesh.areas, row);
  if (coords) {
    mesh.coords = h5::read<double>(file, *coords);
    check_finite(path, kCoords, mesh.coords, 3);
  }
  if (volumes) {
    mesh.volumes = h5::read<double>(file, *volumes);
    check_finite(path, kVolumes, mesh.volumes, 1);
  }
  return mesh;
}

}  // namespace

EdgeMesh read_edge_mesh(const std::string& path) { return read_edges_of(path, nullptr, nullptr); }

EdgeMesh read_edge_mesh_slice(const std::string& path, const std::vector<std::int64_t>& edge_ids,
                              std::int64_t& file_edges) {
  return read_edges_of(path, &edge_ids, &file_edges);
}

void require_state_gamma(const h5::File& file, const char* group) {
  const std::optional<double> gamma = h5::read_number_attribute(file, group, "gamma");
  if (!gamma)
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"gamma\" is missing (expected 1.4)", file.name(), group);
  if (!(std::abs(*gamma - kGamma) <= kGammaTolerance))
    fail(ExitCode::kInvalidInput, "{}: {}: attribute \"gamma\" is {}: only gamma = 1.4 is supported", file.name(),
         group, *gamma);
}

void check_state_values(const std::string& file, const char* dataset, const std::vector<double>& q,
                        std::int64_t first_node) {
  const std::size_t n_nodes = q.size() / kBlock;
  for (std::size_t k = 0; k < n_nodes; ++k) {
    const double* conservative = &q[kBlock * k];
    const std::int64_t node = first_node + static_cast<std::int64_t>(k);
    for (int k = 0; k < kBlock; ++k)
      if (!std::isfinite(conservative[k]))
        fail(ExitCode::kInvalidInput, "{}: {}[{}]: component {} is {}, expected a finite number", file, dataset, node,
             k, conservative[k]);
    if (!(conservative[0] > 0.0))
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: density is {}, expected a positive number", file, dataset, node,
           conservative[0]);
    if (conservative[0] < std::numeric_limits<double>::min())  // subnormal: the node's Jacobian blocks come out NaN
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: density is {:.3g}, below the normal range of float64 (smallest {:.3g}): the flux divides by it",
           file, dataset, node, conservative[0], std::numeric_limits<double>::min());
    const double pressure = primitive_from_conservative(conservative).p;
    if (!(pressure > 0.0))
      fail(ExitCode::kInvalidInput,
           "{}: {}[{}]: pressure is {:.9g}, expected a positive number (p = (gamma-1)*(rhoE - 0.5*rho*|u|^2))", file,
           dataset, node, pressure);
  }
}

namespace {

FlowState read_state_of(const std::string& path, std::int64_t expected_nodes, const h5::RowRange* rows) {
  const h5::File file = h5::File::open(path);
  require_edge_mesh_format(file);
  if (!h5::exists(file, kState))
    fail(ExitCode::kInvalidInput, "{}: {}: dataset not found (no flow state in this file; give one with --state)", path,
         kState);
  require_state_gamma(file, kStateGroup);

  const h5::DatasetInfo q = h5::describe_dataset(file, kState);
  h5::require_type(q, {h5::kFloat64});
  if (expected_nodes >= 0)
    h5::require_shape(q, {expected_nodes, kBlock},
                      fmt::format("[n_nodes, 5] with n_nodes = {} from the mesh", expected_nodes));
  else
    h5::require_shape(q, {h5::kAnyExtent, kBlock}, "[n_nodes, 5]");
  if (q.shape[0] == 0) fail(ExitCode::kInvalidInput, "{}: {}: the state has no nodes", path, kState);

  FlowState state;
  if (rows && (rows->begin < 0 || rows->end < rows->begin || rows->end > q.shape[0]))
    fail(ExitCode::kInvalidInput, "{}: {}: the selected nodes [{}, {}) lie outside its {} rows", path, kState,
         rows->begin, rows->end, q.shape[0]);
  state.Q = rows ? h5::read_rows<double>(file, q, {*rows}) : h5::read<double>(file, q);
  check_state_values(path, kState, state.Q, rows ? rows->begin : 0);
  state.gamma = kGamma;
  return state;
}

}  // namespace

FlowState read_flow_state(const std::string& path, std::int64_t expected_nodes) {
  return read_state_of(path, expected_nodes, nullptr);
}

FlowState read_flow_state_slice(const std::string& path, std::int64_t expected_nodes, std::int64_t first_node,
                                std::int64_t end_node) {
  const h5::RowRange rows{first_node, end_node};
  return read_state_of(path, expected_nodes, &rows);
}

void write_edge_mesh(const std::string& path, const EdgeMesh& mesh, const FlowState* state,
                     const std::function<void(const h5::File&)>& add_more) {
  check_writable(path, mesh);
  if (state) check_writable(path, *state, mesh.n_nodes);
  write_atomically(path, [&](const h5::File& file) {
    write_mesh_group(file, mesh);
    if (state) write_state_group(file, *state);
    if (add_more) add_more(file);
  });
}

void write_flow_state(const std::string& path, const FlowState& state) {
  check_writable(path, state, -1);
  write_atomically(path, [&](const h5::File& file) { write_state_group(file, state); });
}

}  // namespace fluxjac
