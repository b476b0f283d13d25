#include "mesh/dual_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

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

// ---- reference cells: outward face loops and, per vertex, the faces around it --------------------------
constexpr int kMaxVertices = 8;
constexpr int kMaxFaces = 6;
constexpr int kMaxFaceVertices = 4;
constexpr int kMaxIncidentFaces = 4;  // the apex of a pyramid

struct CellShape {
  CellType type;
  int n_vertices;
  int n_faces;
  int face_size[kMaxFaces];
  int face_loop[kMaxFaces][kMaxFaceVertices];  ///< outward: the right-hand rule gives the normal leaving the cell
  // Derived by with_incidence(): per vertex, the faces around it and its neighbours in each face loop.
  int n_incident[kMaxVertices] = {};
  int incident_face[kMaxVertices][kMaxIncidentFaces] = {};
  int incident_next[kMaxVertices][kMaxIncidentFaces] = {};      ///< the vertex after it in that face's loop
  int incident_previous[kMaxVertices][kMaxIncidentFaces] = {};  ///< the vertex before it
};

constexpr CellShape with_incidence(CellShape shape) {
  for (int v = 0; v < kMaxVertices; ++v) shape.n_incident[v] = 0;
  for (int f = 0; f < shape.n_faces; ++f) {
    for (int p = 0; p < shape.face_size[f]; ++p) {
      const int v = shape.face_loop[f][p];
      const int size = shape.face_size[f];
      shape.incident_face[v][shape.n_incident[v]] = f;
      shape.incident_next[v][shape.n_incident[v]] = shape.face_loop[f][(p + 1) % size];
      shape.incident_previous[v][shape.n_incident[v]] = shape.face_loop[f][(p + size - 1) % size];
      ++shape.n_incident[v];
    }
  }
  return shape;
}

// The faces of each cell type for the CGNS vertex orderings of the header, as outward loops.
constexpr CellShape kTetrahedronShape =
    with_incidence({CellType::kTetrahedron, 4, 4, {3, 3, 3, 3}, {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}}});
constexpr CellShape kPyramidShape = with_incidence(
    {CellType::kPyramid, 5, 5, {4, 3, 3, 3, 3}, {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}}});
constexpr CellShape kPrismShape = with_incidence(
    {CellType::kPrism, 6, 5, {3, 3, 4, 4, 4}, {{0, 2, 1}, {3, 4, 5}, {0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}}});
constexpr CellShape kHexahedronShape =
    with_incidence({CellType::kHexahedron,
                    8,
                    6,
                    {4, 4, 4, 4, 4, 4},
                    {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}}});

// ---- the cell blocks of an element mesh under one global numbering ------------------------------------
struct CellBlock {
  const CellShape* shape;
  const node_index* vertices;
  std::int64_t first_cell;
  std::int64_t n_cells;
};

class CellBlocks {
 public:
  explicit CellBlocks(const ElementMesh& elements) {
    const std::pair<const CellShape*, const std::vector<node_index>*> sources[4] = {
        {&kTetrahedronShape, &elements.tetrahedra},
        {&kPyramidShape, &elements.pyramids},
        {&kPrismShape, &elements.prisms},
        {&kHexahedronShape, &elements.hexahedra}};
    std::int64_t first = 0;
    for (int b = 0; b < 4; ++b) {
      const std::int64_t count = static_cast<std::int64_t>(sources[b].second->size()) / sources[b].first->n_vertices;
      blocks_[b] = {sources[b].first, sources[b].second->data(), first, count};
      first += count;
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
  Vec3 point[kMaxVertices];
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

/// Volume of a cell and the dual sub-volume of each of its corners.
struct CellInspection {
  double volume = 0.0;
  double corner_volume[kMaxVertices] = {};
  int worst_corner = 0;  ///< local vertex with the smallest corner volume
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
  return inspection;
}

inline bool is_valid(const CellInspection& inspection) {
  return inspection.volume > 0.0 && inspection.corner_volume[inspection.worst_corner] > 0.0;
}

[[noreturn]] void fail_invalid_cell(const ElementMesh& elements, const CellBlocks& blocks, std::int64_t cell,
                                    std::size_t n_invalid) {
  const CellBlock& block = blocks.block_of(cell);
  const node_index* vertices = blocks.vertices_of(block, cell);
  const CellInspection inspection = inspect_cell(*block.shape, vertices, elements.coords.data());
  std::string nodes;
  for (int v = 0; v < block.shape->n_vertices; ++v) nodes += (v ? " " : "") + std::to_string(vertices[v]);
  const std::string where = fmt::format("cell {} ({} {} of its block, nodes {})", cell, to_string(block.shape->type),
                                        cell - block.first_cell, nodes);
  const std::string others = n_invalid > 1 ? fmt::format("; {} invalid cells in all", n_invalid) : std::string();
  if (!(inspection.volume > 0.0))
    fail(ExitCode::kInvalidInput,
         "{}: volume {:.6g} is not positive: the cell is inverted or degenerate (check its vertex ordering){}", where,
         inspection.volume, others);
  fail(ExitCode::kInvalidInput,
       "{}: the dual sub-volume at its corner node {} is {:.6g}, not positive: the cell is tangled{}", where,
       vertices[inspection.worst_corner], inspection.corner_volume[inspection.worst_corner], others);
}

// ---- node -> cells adjacency (CSR, cells ascending in each row) -----------------------------------------
struct NodeCells {
  std::vector<std::int64_t> offsets;  ///< [n_nodes + 1]
  std::vector<std::int64_t> cells;
};

NodeCells build_node_cells(const ElementMesh& elements, const CellBlocks& blocks) {
  NodeCells adjacency;
  adjacency.offsets.assign(static_cast<std::size_t>(elements.n_nodes) + 1, 0);
  for (const CellBlock& block : blocks.blocks()) {
    const std::int64_t entries = block.n_cells * block.shape->n_vertices;
    for (std::int64_t i = 0; i < entries; ++i) ++adjacency.offsets[block.vertices[i] + 1];
  }
  for (std::int64_t i = 0; i < elements.n_nodes; ++i) adjacency.offsets[i + 1] += adjacency.offsets[i];
  adjacency.cells.resize(static_cast<std::size_t>(adjacency.offsets.back()));
  std::vector<std::int64_t> cursor(adjacency.offsets.begin(), adjacency.offsets.end() - 1);
  for (const CellBlock& block : blocks.blocks()) {
    const int n_vertices = block.shape->n_vertices;
    for (std::int64_t c = 0; c < block.n_cells; ++c)
      for (int v = 0; v < n_vertices; ++v)
        adjacency.cells[cursor[block.vertices[c * n_vertices + v]]++] = block.first_cell + c;
  }
  return adjacency;
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

const char* to_string(CellType type) {
  switch (type) {
    case CellType::kTetrahedron:
      return "tetrahedron";
    case CellType::kPyramid:
      return "pyramid";
    case CellType::kPrism:
      return "prism";
    case CellType::kHexahedron:
      return "hexahedron";
  }
  return "cell";
}

int vertex_count(CellType type) {
  switch (type) {
    case CellType::kTetrahedron:
      return 4;
    case CellType::kPyramid:
      return 5;
    case CellType::kPrism:
      return 6;
    case CellType::kHexahedron:
      return 8;
  }
  return 0;
}

void reorder_vtk_wedges_to_cgns(std::vector<node_index>& prisms) {
  for (std::size_t c = 0; c + 6 <= prisms.size(); c += 6) {
    std::swap(prisms[c + 1], prisms[c + 2]);
    std::swap(prisms[c + 4], prisms[c + 5]);
  }
}

void validate_element_mesh(const ElementMesh& elements) {
  if (elements.n_nodes < 0 || elements.n_nodes > std::numeric_limits<node_index>::max())
    fail(ExitCode::kInvalidInput, "element mesh: {} nodes; node ids must fit in 32 bits (at most {} nodes)",
         elements.n_nodes, std::numeric_limits<node_index>::max());
  if (static_cast<std::int64_t>(elements.coords.size()) != 3 * elements.n_nodes)
    fail(ExitCode::kInvalidInput, "element mesh: {} coordinates for {} nodes (expected 3 per node)",
         elements.coords.size(), elements.n_nodes);
  for (std::int64_t i = 0; i < 3 * elements.n_nodes; ++i)
    if (!std::isfinite(elements.coords[i]))
      fail(ExitCode::kInvalidInput, "element mesh: node {} has a non-finite coordinate", i / 3);
  const std::pair<CellType, const std::vector<node_index>*> blocks[4] = {{CellType::kTetrahedron, &elements.tetrahedra},
                                                                         {CellType::kPyramid, &elements.pyramids},
                                                                         {CellType::kPrism, &elements.prisms},
                                                                         {CellType::kHexahedron, &elements.hexahedra}};
  std::int64_t first_cell = 0;
  for (const auto& [type, vertices] : blocks) {
    const int n_vertices = vertex_count(type);
    if (vertices->size() % n_vertices != 0)
      fail(ExitCode::kInvalidInput, "element mesh: the {} block has {} node ids, not a multiple of {}", to_string(type),
           vertices->size(), n_vertices);
    for (std::size_t i = 0; i < vertices->size(); ++i) {
      const node_index node = (*vertices)[i];
      const std::size_t cell = i / n_vertices;
      if (node < 0 || node >= elements.n_nodes)
        fail(ExitCode::kInvalidInput, "element mesh: cell {} ({} {} of its block) has node id {}, outside [0, {})",
             first_cell + static_cast<std::int64_t>(cell), to_string(type), cell, node, elements.n_nodes);
      for (std::size_t j = cell * n_vertices; j < i; ++j)
        if ((*vertices)[j] == node)
          fail(ExitCode::kInvalidInput,
               "element mesh: cell {} ({} {} of its block) lists node {} twice; collapsed cells are not supported "
               "(give them their proper type)",
               first_cell + static_cast<std::int64_t>(cell), to_string(type), cell, node);
    }
    first_cell += static_cast<std::int64_t>(vertices->size() / n_vertices);
  }
}

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
  if (!invalid.empty()) fail_invalid_cell(elements, blocks, invalid.front(), invalid.size());

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
      for (std::int64_t k = node_cells.offsets[node]; k < node_cells.offsets[node + 1]; ++k) {
        const CellBlock& block = blocks.block_of(node_cells.cells[k]);
        const CellShape& shape = *block.shape;
        const node_index* vertices = blocks.vertices_of(block, node_cells.cells[k]);
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
      for (std::int64_t k = node_cells.offsets[node]; k < node_cells.offsets[node + 1]; ++k) {
        const CellBlock& block = blocks.block_of(node_cells.cells[k]);
        const CellShape& shape = *block.shape;
        const node_index* vertices = blocks.vertices_of(block, node_cells.cells[k]);
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
