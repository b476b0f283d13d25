#include "mesh/element_boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "util/bucket_sort.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// One side of a face: the face's nodes but the lowest (the bucket it sits in) ascending, -1 ending a
/// triangle, and the cell it bounds. Sorting a bucket brings the sides of one face together, cells ascending.
struct FaceSide {
  std::array<node_index, 3> rest;
  std::int64_t cell;

  bool operator<(const FaceSide& other) const { return std::tie(rest, cell) < std::tie(other.rest, other.cell); }
};

/// Calls add(lowest node, side) for every face of every cell, cells in global order.
template <class Add>
void for_each_face_side(const ElementMesh& elements, Add&& add) {
  for_each_cell(elements, [&](const CellRef& cell) {
    const CellFaces& faces = cell_faces(cell.type);
    for (int f = 0; f < faces.n_faces; ++f) {
      const int size = faces.face_size[f];
      std::array<node_index, 4> nodes{-1, -1, -1, -1};
      for (int p = 0; p < size; ++p) nodes[p] = cell.vertices[faces.face_loop[f][p]];
      for (int i = 1; i < size; ++i)  // insertion sort: at most 4 nodes
        for (int j = i; j > 0 && nodes[j - 1] > nodes[j]; --j) std::swap(nodes[j - 1], nodes[j]);
      add(nodes[0], FaceSide{{nodes[1], nodes[2], nodes[3]}, cell.id});
    }
  });
}

/// Whether two cells have the same type and the same nodes, in any order.
bool same_cell(const CellRef& a, const CellRef& b) {
  if (a.type != b.type) return false;
  const int n = vertex_count(a.type);
  for (int i = 0; i < n; ++i)
    if (std::find(b.vertices, b.vertices + n, a.vertices[i]) == b.vertices + n) return false;
  return true;
}

/// The first topology defect found (smallest cells first, so the report does not depend on the threads).
struct Defect {
  enum Kind { kNone, kDuplicateCell, kNonManifoldFace } kind = kNone;
  std::int64_t first = -1, second = -1;  ///< duplicate: the two cells; non-manifold: the first two of the face
  node_index lowest = -1;                ///< non-manifold: the face's nodes
  std::array<node_index, 3> rest{};
  int n_cells = 0;  ///< non-manifold: cells sharing the face

  bool better_than(const Defect& other) const {
    if (kind == kNone || other.kind == kNone) return other.kind == kNone && kind != kNone;
    if (kind != other.kind) return kind < other.kind;  // a duplicated cell also makes faces non-manifold
    return std::tie(first, second) < std::tie(other.first, other.second);
  }
};

[[noreturn]] void fail_defect(const ElementMesh& elements, const Defect& defect, std::int64_t n_duplicate_faces,
                              std::int64_t n_non_manifold_faces) {
  if (defect.kind == Defect::kDuplicateCell)
    fail(ExitCode::kInvalidInput,
         "element mesh: {} and {} have the same nodes: a cell is given twice (remove one; {} faces are shared by "
         "duplicated cells)",
         describe_cell(cell_at(elements, defect.first)), describe_cell(cell_at(elements, defect.second)),
         n_duplicate_faces);
  std::string nodes = std::to_string(defect.lowest);
  for (const node_index node : defect.rest)
    if (node >= 0) nodes += " " + std::to_string(node);
  fail(ExitCode::kInvalidInput,
       "element mesh: the face with nodes {} belongs to {} cells (the first two: {} and {}); a face can bound at "
       "most two cells (the mesh is not manifold there; {} such faces in all)",
       nodes, defect.n_cells, describe_cell(cell_at(elements, defect.first)),
       describe_cell(cell_at(elements, defect.second)), n_non_manifold_faces);
}

}  // namespace

ElementBoundary find_element_boundary(const ElementMesh& elements) {
  const std::int64_t n_nodes = elements.n_nodes;
  // Bucketing by the lowest node keeps each sort small (a few tens of sides).
  Buckets<FaceSide> sides = bucket_by_key<FaceSide>(n_nodes, [&](auto&& add) { for_each_face_side(elements, add); });

  // ---- a face with one side is on the boundary; more than two sides, or two of one cell, is a defect ----------
  ElementBoundary boundary;
  boundary.on_boundary.assign(static_cast<std::size_t>(n_nodes), 0);
  std::int64_t n_boundary_faces = 0, n_duplicate_faces = 0, n_non_manifold_faces = 0;
  Defect defect;
  // A face flags nodes outside its own bucket, which other threads may be flagging too: each thread collects
  // its nodes and applies them after the loop (no data race).
#pragma omp parallel reduction(+ : n_boundary_faces, n_duplicate_faces, n_non_manifold_faces)
  {
    std::vector<node_index> flagged;
    Defect found;
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t node = 0; node < n_nodes; ++node) {
      const auto first = sides.begin(node), last = sides.end(node);
      std::sort(first, last);
      for (auto it = first; it != last;) {
        auto end = it + 1;
        while (end != last && end->rest == it->rest) ++end;
        if (end - it == 1) {
          ++n_boundary_faces;
          flagged.push_back(static_cast<node_index>(node));
          for (const node_index other : it->rest)
            if (other >= 0) flagged.push_back(other);
        } else {
          Defect here;
          for (auto a = it; a != end && here.kind == Defect::kNone; ++a)
            for (auto b = a + 1; b != end; ++b)
              if (same_cell(cell_at(elements, a->cell), cell_at(elements, b->cell))) {
                here = {Defect::kDuplicateCell, a->cell, b->cell};
                break;
              }
          if (here.kind == Defect::kDuplicateCell) {
            ++n_duplicate_faces;
          } else if (end - it > 2) {
            ++n_non_manifold_faces;
            here = {Defect::kNonManifoldFace,      it->cell, (it + 1)->cell,
                    static_cast<node_index>(node), it->rest, static_cast<int>(end - it)};
          }
          if (here.better_than(found)) found = here;
        }
        it = end;
      }
    }
#pragma omp critical
    {
      for (const node_index node : flagged) boundary.on_boundary[node] = 1;
      if (found.better_than(defect)) defect = found;
    }
  }
  if (defect.kind != Defect::kNone) fail_defect(elements, defect, n_duplicate_faces, n_non_manifold_faces);
  boundary.n_boundary_faces = n_boundary_faces;
  for (const std::uint8_t flag : boundary.on_boundary) boundary.n_boundary_nodes += flag;
  return boundary;
}

}  // namespace fluxjac
