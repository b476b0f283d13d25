#include "mesh/dual_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "util/bucket_sort.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

// ---- small vector algebra ---------------------------------------------------------------------------
struct Vec3 {
  double x, y, z;
};
inline Vec3 operator+(const Vec3& a, const Vec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(const Vec3& a, const Vec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(double s, const Vec3& a) { return {s * a.x, s * a.y, s * a.z}; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 load_point(const double* coords, node_index node) {
  const double* p = coords + 3 * static_cast<std::int64_t>(node);
  return {p[0], p[1], p[2]};
}

/// Signed volume of the tetrahedron (apex, p0, p1, p2); positive when (p0, p1, p2) faces away from apex.
inline double tetrahedron_volume(const Vec3& apex, const Vec3& p0, const Vec3& p1, const Vec3& p2) {
  return dot(p0 - apex, cross(p1 - apex, p2 - apex)) / 6.0;
}

// ---- reference cells: the shared face table plus, per vertex, the faces and neighbours around it ----------
constexpr int kMaxIncidentFaces = 4;  // the apex of a pyramid

struct CellShape {
  CellType type;
  int n_vertices;
  int n_faces;
  int face_size[kMaxCellFaces];
  int face_loop[kMaxCellFaces][kMaxFaceVertices];  ///< outward loops (cell_faces)
  int n_incident[kMaxCellVertices] = {};
  int incident_face[kMaxCellVertices][kMaxIncidentFaces] = {};
  int incident_next[kMaxCellVertices][kMaxIncidentFaces] = {};      ///< the vertex after it in that face's loop
  int incident_previous[kMaxCellVertices][kMaxIncidentFaces] = {};  ///< the vertex before it
  /// At a vertex where three faces meet: its three neighbours in their order around it, so that the corner
  /// Jacobian det(x_q0 - x_v, x_q1 - x_v, x_q2 - x_v) is positive at every corner of a valid (convex) cell.
  /// The pyramid apex (four faces) has none: its corner tetrahedra are those of the base corners.
  bool has_corner[kMaxCellVertices] = {};
  int corner_neighbour[kMaxCellVertices][3] = {};
};

constexpr CellShape make_shape(CellType type) {
  const CellFaces& faces = cell_faces(type);
  CellShape shape{type, faces.n_vertices, faces.n_faces, {}, {}};
  for (int f = 0; f < faces.n_faces; ++f) {
    const int size = faces.face_size[f];
    shape.face_size[f] = size;
    for (int p = 0; p < size; ++p) shape.face_loop[f][p] = faces.face_loop[f][p];
    for (int p = 0; p < size; ++p) {
      const int v = faces.face_loop[f][p];
      shape.incident_face[v][shape.n_incident[v]] = f;
      shape.incident_next[v][shape.n_incident[v]] = faces.face_loop[f][(p + 1) % size];
      shape.incident_previous[v][shape.n_incident[v]] = faces.face_loop[f][(p + size - 1) % size];
      ++shape.n_incident[v];
    }
  }
  // Walking round a vertex over its outward loops, the face after the one whose loop reads (v, q) is the one
  // whose loop reads (q, v): so each neighbour is followed by the `next` of the face where it is `previous`.
  for (int v = 0; v < shape.n_vertices; ++v) {
    if (shape.n_incident[v] != 3) continue;
    shape.has_corner[v] = true;
    int neighbour = shape.incident_next[v][0];
    for (int k = 0; k < 3; ++k) {
      shape.corner_neighbour[v][k] = neighbour;
      int i = 0;
      while (shape.incident_previous[v][i] != neighbour) ++i;
      neighbour = shape.incident_next[v][i];
    }
  }
  return shape;
}

constexpr CellShape kTetrahedronShape = make_shape(CellType::kTetrahedron);
constexpr CellShape kPyramidShape = make_shape(CellType::kPyramid);
constexpr CellShape kPrismShape = make_shape(CellType::kPrism);
constexpr CellShape kHexahedronShape = make_shape(CellType::kHexahedron);

// ---- the cell blocks of an element mesh under one global numbering ------------------------------------
struct CellBlock {
  const CellShape* shape;
  const node_index* vertices;
  std::int64_t first_cell;
  std::int64_t n_cells;
};

constexpr const CellShape& shape_of(CellType type) {
  switch (type) {
    case CellType::kTetrahedron:
      return kTetrahedronShape;
    case CellType::kPyramid:
      return kPyramidShape;
    case CellType::kPrism:
      return kPrismShape;
    case CellType::kHexahedron:
      break;
  }
  return kHexahedronShape;
}

class CellBlocks {
 public:
  explicit CellBlocks(const ElementMesh& elements) {
    std::int64_t first = 0;
    for (int b = 0; b < 4; ++b) {
      const CellType type = kCellTypes[b];
      blocks_[b] = {&shape_of(type), elements.cells(type).data(), first, elements.n_cells(type)};
      first += blocks_[b].n_cells;
    }
    n_cells_ = first;
  }

  std::int64_t n_cells() const { return n_cells_; }
  const std::array<CellBlock, 4>& blocks() const { return blocks_; }

  const CellBlock& block_of(std::int64_t cell) const {
    int b = 0;
    while (cell >= blocks_[b].first_cell + blocks_[b].n_cells) ++b;
    return blocks_[b];
  }
  const node_index* vertices_of(const CellBlock& block, std::int64_t cell) const {
    return block.vertices + (cell - block.first_cell) * block.shape->n_vertices;
  }

 private:
  std::array<CellBlock, 4> blocks_{};
  std::int64_t n_cells_ = 0;
};

// ---- per-cell geometry ---------------------------------------------------------------------------------
/// Vertex coordinates and the vertex-average centroid of one cell.
struct CellGeometry {
  Vec3 point[kMaxCellVertices];
  Vec3 centroid;
};

inline CellGeometry load_cell(const CellShape& shape, const node_index* vertices, const double* coords) {
  CellGeometry cell;
  Vec3 sum{0.0, 0.0, 0.0};
  for (int v = 0; v < shape.n_vertices; ++v) {
    cell.point[v] = load_point(coords, vertices[v]);
    sum = sum + cell.point[v];
  }
  cell.centroid = (1.0 / shape.n_vertices) * sum;
  return cell;
}

/// Vertex average of a face, summed in ascending node-id order so that both cells sharing the face get
/// the bit-identical point (the split of a quadrilateral face must be the same on both sides).
inline Vec3 face_centroid(const CellShape& shape, int face, const node_index* vertices, const CellGeometry& cell) {
  const int size = shape.face_size[face];
  int local[kMaxFaceVertices] = {};
  for (int p = 0; p < size; ++p) local[p] = shape.face_loop[face][p];
  for (int i = 1; i < size; ++i)
    for (int j = i; j > 0 && vertices[local[j - 1]] > vertices[local[j]]; --j) std::swap(local[j - 1], local[j]);
  Vec3 sum = cell.point[local[0]];
  for (int p = 1; p < size; ++p) sum = sum + cell.point[local[p]];
  return (1.0 / size) * sum;
}

/// Volume of a cell, the Jacobian and the dual sub-volume of each of its corners.
struct CellInspection {
  double volume = 0.0;
  double corner_volume[kMaxCellVertices] = {};
  int worst_corner = 0;  ///< local vertex with the smallest corner volume
  double corner_jacobian[kMaxCellVertices] = {};
  int worst_jacobian_corner = -1;  ///< local vertex with the smallest corner Jacobian (-1: no such corner)
};

CellInspection inspect_cell(const CellShape& shape, const node_index* vertices, const double* coords) {
  const CellGeometry cell = load_cell(shape, vertices, coords);
  CellInspection inspection;
  for (int f = 0; f < shape.n_faces; ++f) {
    const Vec3 center = face_centroid(shape, f, vertices, cell);
    const int size = shape.face_size[f];
    for (int p = 0; p < size; ++p) {
      const int v0 = shape.face_loop[f][p];
      const int v1 = shape.face_loop[f][(p + 1) % size];
      const double fan = tetrahedron_volume(cell.centroid, center, cell.point[v0], cell.point[v1]);
      inspection.volume += fan;
      inspection.corner_volume[v0] += 0.5 * fan;
      inspection.corner_volume[v1] += 0.5 * fan;
    }
  }
  for (int v = 1; v < shape.n_vertices; ++v)
    if (inspection.corner_volume[v] < inspection.corner_volume[inspection.worst_corner]) inspection.worst_corner = v;
  // A concave corner can hide behind positive dual sub-volumes (they are averages over the corner's faces),
  // so each corner's own Jacobian is checked too.
  for (int v = 0; v < shape.n_vertices; ++v) {
    if (!shape.has_corner[v]) continue;
    const Vec3& x = cell.point[v];
    const int* q = shape.corner_neighbour[v];
    inspection.corner_jacobian[v] = dot(cell.point[q[0]] - x, cross(cell.point[q[1]] - x, cell.point[q[2]] - x));
    if (inspection.worst_jacobian_corner < 0 ||
        inspection.corner_jacobian[v] < inspection.corner_jacobian[inspection.worst_jacobian_corner])
      inspection.worst_jacobian_corner = v;
  }
  return inspection;
}

inline bool is_valid(const CellInspection& inspection) {
  return inspection.volume > 0.0 && inspection.corner_volume[inspection.worst_corner] > 0.0 &&
         (inspection.worst_jacobian_corner < 0 || inspection.corner_jacobian[inspection.worst_jacobian_corner] > 0.0);
}

[[noreturn]] void fail_invalid_cell(const ElementMesh& elements, std::int64_t id, std::size_t n_invalid) {
  const CellRef cell = cell_at(elements, id);
  const CellInspection inspection = inspect_cell(shape_of(cell.type), cell.vertices, elements.coords.data());
  const std::string where = describe_cell(cell);
  const std::string others = n_invalid > 1 ? fmt::format("; {} invalid cells in all", n_invalid) : std::string();
  if (!(inspection.volume > 0.0))
    fail(ExitCode::kInvalidInput,
         "{}: volume {:.6g} is not positive: the cell is inverted or degenerate (check its vertex ordering){}", where,
         inspection.volume, others);
  const int corner = inspection.worst_jacobian_corner;
  if (corner >= 0 && !(inspection.corner_jacobian[corner] > 0.0))
    fail(ExitCode::kInvalidInput,
         "{}: the corner Jacobian at its node {} is {:.6g}, not positive: the cell is concave or folded there{}", where,
         cell.vertices[corner], inspection.corner_jacobian[corner], others);
  fail(ExitCode::kInvalidInput,
       "{}: the dual sub-volume at its corner node {} is {:.6g}, not positive: the cell is tangled{}", where,
       cell.vertices[inspection.worst_corner], inspection.corner_volume[inspection.worst_corner], others);
}

// ---- node -> cells adjacency (cells ascending in each node's bucket) ------------------------------------
using NodeCells = Buckets<std::int64_t>;

NodeCells build_node_cells(const ElementMesh& elements, const CellBlocks& blocks) {
  return bucket_by_key<std::int64_t>(elements.n_nodes, [&](auto&& add) {
    for (const CellBlock& block : blocks.blocks()) {
      const int n_vertices = block.shape->n_vertices;
      for (std::int64_t c = 0; c < block.n_cells; ++c)
        for (int v = 0; v < n_vertices; ++v) add(block.vertices[c * n_vertices + v], block.first_cell + c);
    }
  });
}

inline int local_vertex(const node_index* vertices, node_index node) {
  int k = 0;
  while (vertices[k] != node) ++k;
  return k;
}

/// Running sum of the dual-face area vector from one node to a higher neighbour.
struct NeighbourFace {
  node_index neighbour;
  Vec3 area_vector;
};

inline void add_to_face(std::vector<NeighbourFace>& faces, node_index neighbour, const Vec3& contribution) {
  for (NeighbourFace& face : faces) {
    if (face.neighbour == neighbour) {
      face.area_vector = face.area_vector + contribution;
      return;
    }
  }
  faces.push_back({neighbour, contribution});
}

}  // namespace

std::vector<std::int64_t> find_invalid_cells(const ElementMesh& elements) {
  validate_element_mesh(elements);
  const CellBlocks blocks(elements);
  const std::int64_t n_cells = blocks.n_cells();
  std::vector<std::uint8_t> invalid(static_cast<std::size_t>(n_cells), 0);
  const double* coords = elements.coords.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t cell = 0; cell < n_cells; ++cell) {
    const CellBlock& block = blocks.block_of(cell);
    const CellInspection inspection = inspect_cell(*block.shape, blocks.vertices_of(block, cell), coords);
    invalid[cell] = is_valid(inspection) ? 0 : 1;
  }
  std::vector<std::int64_t> ids;
  for (std::int64_t cell = 0; cell < n_cells; ++cell)
    if (invalid[cell]) ids.push_back(cell);
  return ids;
}

EdgeMesh build_median_dual(const ElementMesh& elements) {
  const std::vector<std::int64_t> invalid = find_invalid_cells(elements);
  const CellBlocks blocks(elements);
  if (!invalid.empty()) fail_invalid_cell(elements, invalid.front(), invalid.size());

  const std::int64_t n_nodes = elements.n_nodes;
  const double* coords = elements.coords.data();
  const NodeCells node_cells = build_node_cells(elements, blocks);

  // ---- pass 1: count each node's higher-numbered neighbours (the edges it owns as L) ----------------
  std::vector<edge_index> edge_offsets(static_cast<std::size_t>(n_nodes) + 1, 0);
#pragma omp parallel
  {
    std::vector<node_index> neighbours;
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t node = 0; node < n_nodes; ++node) {
      const node_index a = static_cast<node_index>(node);
      neighbours.clear();
      for (std::int64_t k = node_cells.start[node]; k < node_cells.start[node + 1]; ++k) {
        const CellBlock& block = blocks.block_of(node_cells.values[k]);
        const CellShape& shape = *block.shape;
        const node_index* vertices = blocks.vertices_of(block, node_cells.values[k]);
        const int v = local_vertex(vertices, a);
        for (int i = 0; i < shape.n_incident[v]; ++i) {
          const node_index next = vertices[shape.incident_next[v][i]];
          if (next > a && std::find(neighbours.begin(), neighbours.end(), next) == neighbours.end())
            neighbours.push_back(next);
        }
      }
      edge_offsets[node + 1] = static_cast<edge_index>(neighbours.size());
    }
  }
  for (std::int64_t node = 0; node < n_nodes; ++node) edge_offsets[node + 1] += edge_offsets[node];
  const edge_index n_edges = edge_offsets.back();

  EdgeMesh mesh;
  mesh.n_nodes = n_nodes;
  mesh.edges.resize(2 * static_cast<std::size_t>(n_edges));
  mesh.normals.resize(3 * static_cast<std::size_t>(n_edges));
  mesh.areas.resize(static_cast<std::size_t>(n_edges));
  mesh.coords = elements.coords;
  mesh.volumes.assign(static_cast<std::size_t>(n_nodes), 0.0);

  // ---- pass 2: gather, per node, its dual volume and the dual faces to its higher neighbours ----------
  // Each node sums the contributions of its cells in ascending cell order, so results do not depend on
  // the number of threads. The face loop (..., r, a, q, ...) is outward; the triangle (midpoint, face
  // centroid, cell centroid) of edge a->q is oriented by 0.5 (c - m) x (f - m), that of a->r the other way.
#pragma omp parallel
  {
    std::vector<NeighbourFace> faces;
#pragma omp for schedule(dynamic, 4096)
    for (std::int64_t node = 0; node < n_nodes; ++node) {
      const node_index a = static_cast<node_index>(node);
      faces.clear();
      double volume = 0.0;
      for (std::int64_t k = node_cells.start[node]; k < node_cells.start[node + 1]; ++k) {
        const CellBlock& block = blocks.block_of(node_cells.values[k]);
        const CellShape& shape = *block.shape;
        const node_index* vertices = blocks.vertices_of(block, node_cells.values[k]);
        const int v = local_vertex(vertices, a);
        const CellGeometry cell = load_cell(shape, vertices, coords);
        const Vec3& c = cell.centroid;
        const Vec3& xa = cell.point[v];
        for (int i = 0; i < shape.n_incident[v]; ++i) {
          const int next = shape.incident_next[v][i];
          const int previous = shape.incident_previous[v][i];
          const Vec3 f = face_centroid(shape, shape.incident_face[v][i], vertices, cell);
          const Vec3& xq = cell.point[next];
          const Vec3& xr = cell.point[previous];
          // Half of the fan tetrahedra (c, f, a, q) and (c, f, r, a); their sum is (f-c).((a-c) x (q-r)) / 6.
          volume += dot(f - c, cross(xa - c, xq - xr)) / 12.0;
          if (vertices[next] > a) {
            const Vec3 m = 0.5 * (xa + xq);
            add_to_face(faces, vertices[next], 0.5 * cross(c - m, f - m));
          }
          if (vertices[previous] > a) {
            const Vec3 m = 0.5 * (xa + xr);
            add_to_face(faces, vertices[previous], 0.5 * cross(f - m, c - m));
          }
        }
      }
      std::sort(faces.begin(), faces.end(),
                [](const NeighbourFace& x, const NeighbourFace& y) { return x.neighbour < y.neighbour; });
      mesh.volumes[node] = volume;
      edge_index e = edge_offsets[node];
      for (const NeighbourFace& face : faces) {
        const Vec3& s = face.area_vector;
        const double area = std::sqrt(dot(s, s));
        mesh.edges[2 * e] = a;
        mesh.edges[2 * e + 1] = face.neighbour;
        mesh.areas[e] = area;
        mesh.normals[3 * e] = s.x / area;
        mesh.normals[3 * e + 1] = s.y / area;
        mesh.normals[3 * e + 2] = s.z / area;
        ++e;
      }
    }
  }

  for (edge_index e = 0; e < n_edges; ++e)
    if (!(mesh.areas[e] > 0.0) || !std::isfinite(mesh.areas[e]))
      fail(ExitCode::kInvalidInput,
           "edge {} ({}, {}): its median-dual face has area {:.6g}; the cells around it are degenerate", e,
           mesh.edges[2 * e], mesh.edges[2 * e + 1], mesh.areas[e]);
  return mesh;
}

std::vector<double> dual_closure_vectors(const EdgeMesh& mesh) {
  std::vector<double> closure(3 * static_cast<std::size_t>(mesh.n_nodes), 0.0);
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const std::int64_t left = mesh.left(e), right = mesh.right(e);
    for (int d = 0; d < 3; ++d) {
      const double component = mesh.areas[e] * mesh.normals[3 * e + d];
      closure[3 * left + d] += component;
      closure[3 * right + d] -= component;
    }
  }
  return closure;
}

DualClosureSummary summarize_dual_closure(const EdgeMesh& mesh, const std::vector<std::uint8_t>& skip_node) {
  DualClosureSummary summary;
  const std::vector<double> closure = dual_closure_vectors(mesh);
  double area_sum = 0.0;
  for (double area : mesh.areas) area_sum += area;
  summary.mean_area = mesh.n_edges() > 0 ? area_sum / static_cast<double>(mesh.n_edges()) : 0.0;
  for (std::int64_t node = 0; node < mesh.n_nodes; ++node) {
    if (!skip_node.empty() && skip_node[node]) continue;
    ++summary.nodes_checked;
    const double* v = &closure[3 * node];
    const double magnitude = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (summary.worst_node < 0 || magnitude > summary.max_closure) {
      summary.max_closure = magnitude;
      summary.worst_node = node;
    }
  }
  summary.max_relative = summary.mean_area > 0.0 ? summary.max_closure / summary.mean_area : 0.0;
  return summary;
}

}  // namespace fluxjac
