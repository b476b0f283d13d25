#include "mesh/element_boundary.hpp"

#include <algorithm>
#include <array>

namespace fluxjac {
namespace {

/// The faces of each cell type as sets of local vertices (-1 pads triangles); the order within a face does not
/// matter here, only which vertices it has.
struct FaceSets {
  int n_faces;
  int faces[6][4];
};
constexpr FaceSets kTetrahedronFaces{4, {{0, 1, 2, -1}, {0, 1, 3, -1}, {1, 2, 3, -1}, {0, 2, 3, -1}}};
constexpr FaceSets kPyramidFaces{5, {{0, 1, 2, 3}, {0, 1, 4, -1}, {1, 2, 4, -1}, {2, 3, 4, -1}, {0, 3, 4, -1}}};
constexpr FaceSets kPrismFaces{5, {{0, 1, 2, -1}, {3, 4, 5, -1}, {0, 1, 3, 4}, {1, 2, 4, 5}, {0, 2, 3, 5}}};
constexpr FaceSets kHexahedronFaces{
    6, {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}, {1, 2, 5, 6}, {2, 3, 6, 7}, {0, 3, 4, 7}}};

/// A face keyed by its lowest node (the bucket it sits in) and its other nodes ascending; -1 ends a triangle.
using FaceRest = std::array<node_index, 3>;

struct Block {
  const FaceSets* sets;
  const std::vector<node_index>* vertices;
  int n_vertices;
};

/// Calls visit(lowest node, rest) for every face of every cell, cells in storage order.
template <class Visit>
void for_each_face(const ElementMesh& elements, Visit&& visit) {
  const Block blocks[4] = {{&kTetrahedronFaces, &elements.tetrahedra, 4},
                           {&kPyramidFaces, &elements.pyramids, 5},
                           {&kPrismFaces, &elements.prisms, 6},
                           {&kHexahedronFaces, &elements.hexahedra, 8}};
  for (const Block& block : blocks) {
    const std::size_t n_cells = block.vertices->size() / block.n_vertices;
    for (std::size_t c = 0; c < n_cells; ++c) {
      const node_index* cell = block.vertices->data() + c * block.n_vertices;
      for (int f = 0; f < block.sets->n_faces; ++f) {
        const int* local = block.sets->faces[f];
        const int size = local[3] < 0 ? 3 : 4;
        std::array<node_index, 4> nodes{-1, -1, -1, -1};
        for (int p = 0; p < size; ++p) nodes[p] = cell[local[p]];
        std::sort(nodes.begin(), nodes.begin() + size);
        visit(nodes[0], FaceRest{nodes[1], nodes[2], size == 4 ? nodes[3] : node_index{-1}});
      }
    }
  }
}

}  // namespace

ElementBoundary find_element_boundary(const ElementMesh& elements) {
  const std::int64_t n_nodes = elements.n_nodes;
  // ---- bucket the faces by their lowest node (a counting sort), so each bucket is small to sort ----------
  std::vector<std::int64_t> bucket_start(static_cast<std::size_t>(n_nodes) + 1, 0);
  for_each_face(elements, [&](node_index lowest, const FaceRest&) { ++bucket_start[lowest + 1]; });
  for (std::int64_t node = 0; node < n_nodes; ++node) bucket_start[node + 1] += bucket_start[node];
  std::vector<FaceRest> faces(static_cast<std::size_t>(bucket_start.back()));
  {
    std::vector<std::int64_t> next(bucket_start.begin(), bucket_start.end() - 1);
    for_each_face(elements, [&](node_index lowest, const FaceRest& rest) { faces[next[lowest]++] = rest; });
  }

  // ---- a face seen once is on the boundary ------------------------------------------------------------
  ElementBoundary boundary;
  boundary.on_boundary.assign(static_cast<std::size_t>(n_nodes), 0);
  std::int64_t n_boundary_faces = 0;
  // A face flags nodes outside its own bucket, which other threads may be flagging too: each thread collects
  // its nodes and applies them after the loop (no data race).
#pragma omp parallel reduction(+ : n_boundary_faces)
  {
    std::vector<node_index> flagged;
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t node = 0; node < n_nodes; ++node) {
      const auto first = faces.begin() + bucket_start[node];
      const auto last = faces.begin() + bucket_start[node + 1];
      std::sort(first, last);
      for (auto it = first; it != last;) {
        auto end = it + 1;
        while (end != last && *end == *it) ++end;
        if (end - it == 1) {
          ++n_boundary_faces;
          flagged.push_back(static_cast<node_index>(node));
          for (const node_index other : *it)
            if (other >= 0) flagged.push_back(other);
        }
        it = end;
      }
    }
#pragma omp critical
    for (const node_index node : flagged) boundary.on_boundary[node] = 1;
  }
  boundary.n_boundary_faces = n_boundary_faces;
  for (const std::uint8_t flag : boundary.on_boundary) boundary.n_boundary_nodes += flag;
  return boundary;
}

}  // namespace fluxjac
