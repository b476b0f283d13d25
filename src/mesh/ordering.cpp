#include "mesh/ordering.hpp"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <utility>

#include "util/bucket_sort.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// Symmetric node adjacency of an edge mesh (CSR).
struct NodeAdjacency {
  Buckets<node_index> neighbours;

  std::int64_t degree(node_index node) const { return neighbours.start[node + 1] - neighbours.start[node]; }
};

NodeAdjacency build_adjacency(const EdgeMesh& mesh) {
  return {bucket_by_key<node_index>(mesh.n_nodes, [&](auto&& add) {
    for (edge_index e = 0; e < mesh.n_edges(); ++e) {
      add(mesh.left(e), mesh.right(e));
      add(mesh.right(e), mesh.left(e));
    }
  })};
}

/// Breadth-first level structures from a root, reusing one stamp array so no per-search clearing is needed.
class LevelSearch {
 public:
  explicit LevelSearch(const NodeAdjacency& adjacency)
      : adjacency_(adjacency),
        stamp_(static_cast<std::size_t>(adjacency.neighbours.n_keys()), 0),
        queue_(static_cast<std::size_t>(adjacency.neighbours.n_keys())) {}

  /// Searches from root; returns the eccentricity (number of levels - 1). last_level() then holds the
  /// nodes of the deepest level.
  int search(node_index root) {
    ++current_stamp_;
    std::size_t head = 0, tail = 0;
    queue_[tail++] = root;
    stamp_[root] = current_stamp_;
    int depth = 0;
    last_level_begin_ = 0;
    while (head < tail) {
      const std::size_t level_end = tail;
      last_level_begin_ = head;
      for (; head < level_end; ++head) {
        const node_index u = queue_[head];
        for (auto it = adjacency_.neighbours.begin(u); it != adjacency_.neighbours.end(u); ++it) {
          const node_index w = *it;
          if (stamp_[w] != current_stamp_) {
            stamp_[w] = current_stamp_;
            queue_[tail++] = w;
          }
        }
      }
      if (tail > level_end) ++depth;
    }
    last_level_end_ = tail;
    return depth;
  }

  /// The deepest level's node of smallest degree (ties: smallest id).
  node_index thinnest_node_of_last_level() const {
    node_index best = queue_[last_level_begin_];
    for (std::size_t i = last_level_begin_ + 1; i < last_level_end_; ++i) {
      const node_index u = queue_[i];
      if (adjacency_.degree(u) < adjacency_.degree(best) ||
          (adjacency_.degree(u) == adjacency_.degree(best) && u < best))
        best = u;
    }
    return best;
  }

 private:
  const NodeAdjacency& adjacency_;
  std::vector<int> stamp_;
  int current_stamp_ = 0;
  std::vector<node_index> queue_;
  std::size_t last_level_begin_ = 0, last_level_end_ = 0;
};

/// George-Liu: walk to the thinnest node of the deepest level while the eccentricity grows.
node_index pseudo_peripheral_node(LevelSearch& levels, node_index start) {
  node_index root = start;
  int eccentricity = levels.search(root);
  for (;;) {
    const node_index candidate = levels.thinnest_node_of_last_level();
    const int candidate_eccentricity = levels.search(candidate);
    if (candidate_eccentricity <= eccentricity) return root;
    root = candidate;
    eccentricity = candidate_eccentricity;
  }
}

}  // namespace

void reorder_nodes(EdgeMesh& mesh, FlowState* state, std::vector<std::uint8_t>* node_flags, NodeOrdering ordering,
                   std::uint64_t seed) {
  if (node_flags && !node_flags->empty() && static_cast<std::int64_t>(node_flags->size()) != mesh.n_nodes)
    fail(ExitCode::kRuntime, "renumbering: {} node flags for a mesh of {} nodes", node_flags->size(), mesh.n_nodes);
  if (ordering == NodeOrdering::kNatural) return;
  const std::vector<node_index> new_id_of_old =
      ordering == NodeOrdering::kRcm ? reverse_cuthill_mckee(mesh) : random_permutation(mesh.n_nodes, seed);
  renumber_nodes(mesh, state, new_id_of_old);
  if (node_flags && !node_flags->empty()) {
    std::vector<std::uint8_t> moved(node_flags->size());
    for (std::size_t i = 0; i < moved.size(); ++i) moved[new_id_of_old[i]] = (*node_flags)[i];
    node_flags->swap(moved);
  }
}

std::vector<node_index> reverse_cuthill_mckee(const EdgeMesh& mesh) {
  const std::int64_t n_nodes = mesh.n_nodes;
  const NodeAdjacency adjacency = build_adjacency(mesh);
  LevelSearch levels(adjacency);
  std::vector<std::uint8_t> numbered(static_cast<std::size_t>(n_nodes), 0);
  std::vector<node_index> order;
  order.reserve(static_cast<std::size_t>(n_nodes));
  std::vector<node_index> candidates;

  // ---- Cuthill-McKee, one connected component at a time -----------------------------------------------
  for (std::int64_t start = 0; start < n_nodes; ++start) {
    if (numbered[start]) continue;
    const node_index root = pseudo_peripheral_node(levels, static_cast<node_index>(start));
    std::size_t head = order.size();
    order.push_back(root);
    numbered[root] = 1;
    for (; head < order.size(); ++head) {
      const node_index u = order[head];
      candidates.clear();
      for (auto it = adjacency.neighbours.begin(u); it != adjacency.neighbours.end(u); ++it) {
        const node_index w = *it;
        if (!numbered[w]) {
          numbered[w] = 1;
          candidates.push_back(w);
        }
      }
      std::sort(candidates.begin(), candidates.end(), [&](node_index x, node_index y) {
        return adjacency.degree(x) != adjacency.degree(y) ? adjacency.degree(x) < adjacency.degree(y) : x < y;
      });
      order.insert(order.end(), candidates.begin(), candidates.end());
    }
  }

  // ---- reverse ----------------------------------------------------------------------------------------
  std::vector<node_index> new_id_of_old(static_cast<std::size_t>(n_nodes));
  for (std::int64_t k = 0; k < n_nodes; ++k) new_id_of_old[order[k]] = static_cast<node_index>(n_nodes - 1 - k);
  return new_id_of_old;
}

std::vector<node_index> random_permutation(std::int64_t n_nodes, std::uint64_t seed) {
  std::vector<node_index> permutation(static_cast<std::size_t>(n_nodes));
  for (std::int64_t i = 0; i < n_nodes; ++i) permutation[i] = static_cast<node_index>(i);
  // mt19937_64 output is fixed by the standard; the modulo bias is below n / 2^64, far beneath notice.
  std::mt19937_64 engine(seed);
  for (std::int64_t i = n_nodes - 1; i > 0; --i) {
    const std::int64_t j = static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(i + 1));
    std::swap(permutation[i], permutation[j]);
  }
  return permutation;
}

void renumber_nodes(EdgeMesh& mesh, FlowState* state, const std::vector<node_index>& new_id_of_old) {
  const std::int64_t n_nodes = mesh.n_nodes;
  if (static_cast<std::int64_t>(new_id_of_old.size()) != n_nodes)
    fail(ExitCode::kInvalidInput, "renumbering: {} new ids for a mesh of {} nodes", new_id_of_old.size(), n_nodes);
  std::vector<std::uint8_t> taken(static_cast<std::size_t>(n_nodes), 0);
  for (std::int64_t i = 0; i < n_nodes; ++i) {
    const node_index id = new_id_of_old[i];
    if (id < 0 || id >= n_nodes || taken[id])
      fail(ExitCode::kInvalidInput, "renumbering: new id {} of node {} is out of range or repeated: not a permutation",
           id, i);
    taken[id] = 1;
  }
  if (state && !state->Q.empty() && state->n_nodes() != n_nodes)
    fail(ExitCode::kInvalidInput, "renumbering: the state has {} nodes, the mesh {}", state->n_nodes(), n_nodes);

  // ---- node data --------------------------------------------------------------------------------------
  auto permute = [&](std::vector<double>& values, int width) {
    if (values.empty()) return;
    std::vector<double> permuted(values.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_nodes; ++i)
      for (int d = 0; d < width; ++d)
        permuted[width * static_cast<std::int64_t>(new_id_of_old[i]) + d] = values[width * i + d];
    values.swap(permuted);
  };
  permute(mesh.coords, 3);
  permute(mesh.volumes, 1);
  if (state) permute(state->Q, kBlock);

  // ---- edges: map, turn so that L < R, then sort by (L, R): counting sort on L, then R within rows ------
  const edge_index n_edges = mesh.n_edges();
  std::vector<node_index> left(static_cast<std::size_t>(n_edges)), right(static_cast<std::size_t>(n_edges));
  std::vector<std::uint8_t> turned(static_cast<std::size_t>(n_edges));
#pragma omp parallel for schedule(static)
  for (edge_index e = 0; e < n_edges; ++e) {
    const node_index l = new_id_of_old[mesh.left(e)], r = new_id_of_old[mesh.right(e)];
    turned[e] = l > r;
    left[e] = std::min(l, r);
    right[e] = std::max(l, r);
  }
  Buckets<edge_index> rows = bucket_by_key<edge_index>(n_nodes, [&](auto&& add) {
    for (edge_index e = 0; e < n_edges; ++e) add(left[e], e);
  });
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t node = 0; node < n_nodes; ++node)
    std::sort(rows.begin(node), rows.end(node),
              [&](edge_index x, edge_index y) { return right[x] != right[y] ? right[x] < right[y] : x < y; });
  const std::vector<edge_index>& old_edge_of_new = rows.values;

  std::vector<node_index> edges(mesh.edges.size());
  std::vector<double> normals(mesh.normals.size()), areas(mesh.areas.size());
#pragma omp parallel for schedule(static)
  for (edge_index e = 0; e < n_edges; ++e) {
    const edge_index old = old_edge_of_new[e];
    const double sign = turned[old] ? -1.0 : 1.0;
    edges[2 * e] = left[old];
    edges[2 * e + 1] = right[old];
    for (int d = 0; d < 3; ++d) normals[3 * e + d] = sign * mesh.normals[3 * old + d];
    areas[e] = mesh.areas[old];
  }
  mesh.edges.swap(edges);
  mesh.normals.swap(normals);
  mesh.areas.swap(areas);
}

std::int64_t ordering_bandwidth(const EdgeMesh& mesh) {
  std::int64_t bandwidth = 0;
  for (edge_index e = 0; e < mesh.n_edges(); ++e)
    bandwidth = std::max(bandwidth, std::abs(static_cast<std::int64_t>(mesh.right(e)) - mesh.left(e)));
  return bandwidth;
}

double mean_edge_span(const EdgeMesh& mesh) {
  if (mesh.n_edges() == 0) return 0.0;
  double sum = 0.0;
  for (edge_index e = 0; e < mesh.n_edges(); ++e)
    sum += static_cast<double>(std::abs(static_cast<std::int64_t>(mesh.right(e)) - mesh.left(e)));
  return sum / static_cast<double>(mesh.n_edges());
}

}  // namespace fluxjac
