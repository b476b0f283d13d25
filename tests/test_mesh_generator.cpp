// ctest-label: unit
// Median-dual metrics on hand-checkable cells, the box generator (topology, conformity, closure, volumes,
// determinism, state) and the node orderings.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "mesh/dual_metrics.hpp"
#include "mesh/generator.hpp"
#include "mesh/mesh_digest.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/ordering.hpp"
#include "physics/gas.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/memory.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fluxjac {
namespace {

using Vector = std::array<double, 3>;

/// Area vector A n of an edge, oriented from the smaller to the larger of the two given node ids.
Vector area_vector(const EdgeMesh& mesh, node_index a, node_index b) {
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    if (std::min(a, b) == mesh.left(e) && std::max(a, b) == mesh.right(e)) {
      const double sign = a < b ? 1.0 : -1.0;
      return {sign * mesh.areas[e] * mesh.normals[3 * e], sign * mesh.areas[e] * mesh.normals[3 * e + 1],
              sign * mesh.areas[e] * mesh.normals[3 * e + 2]};
    }
  }
  ADD_FAILURE() << "no edge (" << a << ", " << b << ")";
  return {0.0, 0.0, 0.0};
}

void expect_vector_near(const Vector& actual, const Vector& expected, double tolerance, const std::string& what) {
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(actual[d], expected[d], tolerance) << what << " component " << d;
}

double total_volume(const EdgeMesh& mesh) {
  double sum = 0.0;
  for (double v : mesh.volumes) sum += v;
  return sum;
}

/// Throws unless the call fails with fluxjac::Error of the given code; returns the message.
template <class F>
std::string error_message_of(F&& call, ExitCode expected_code) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(static_cast<int>(error.code()), static_cast<int>(expected_code)) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected fluxjac::Error";
  return {};
}

BoxMeshSpec spec_of(const std::string& kind, int n, const std::string& order = "natural", double jitter = 0.2,
                    std::uint64_t seed = 1) {
  BoxMeshSpec spec;
  spec.kind = parse_mesh_kind(kind);
  spec.n = n;
  spec.order = parse_node_ordering(order);
  spec.jitter = jitter;
  spec.seed = seed;
  return spec;
}

/// Edge count of a box split by Kuhn tetrahedra above `prism_layers` prism layers: axis edges, xy
/// diagonals in every node plane, and the xz, yz and body diagonals of the tetrahedral layers.
std::int64_t expected_box_edges(std::int64_t n, std::int64_t prism_layers) {
  const std::int64_t tet_layers = n - prism_layers;
  return 3 * n * (n + 1) * (n + 1) + n * n * (n + 1) + 2 * n * (n + 1) * tet_layers + n * n * tet_layers;
}

// ---- single cells, by hand ----------------------------------------------------------------------------------

TEST(DualMetrics, UnitTetrahedronMatchesHandComputation) {
  ElementMesh cell;
  cell.n_nodes = 4;
  cell.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  cell.tetrahedra = {0, 1, 2, 3};
  const EdgeMesh mesh = build_median_dual(cell);
  ASSERT_EQ(mesh.n_edges(), 6);
  for (double v : mesh.volumes) EXPECT_NEAR(v, 1.0 / 24.0, 1e-15);
  // Median dual of a tetrahedron: S_ij = (A_i - A_j) / 12, A_k the outward area vector of the face opposite k.
  const Vector opposite_face[4] = {{0.5, 0.5, 0.5}, {-0.5, 0, 0}, {0, -0.5, 0}, {0, 0, -0.5}};
  for (node_index i = 0; i < 4; ++i)
    for (node_index j = i + 1; j < 4; ++j) {
      Vector expected;
      for (int d = 0; d < 3; ++d) expected[d] = (opposite_face[i][d] - opposite_face[j][d]) / 12.0;
      expect_vector_near(area_vector(mesh, i, j), expected, 1e-15, "edge " + std::to_string(i) + std::to_string(j));
    }
  // Edge (0,1) directly: triangles (m, f, c) on faces z=0 and y=0 give (1, 1/2, 1/2) / 12.
  expect_vector_near(area_vector(mesh, 0, 1), {1.0 / 12, 1.0 / 24, 1.0 / 24}, 1e-15, "edge 01");
}

TEST(DualMetrics, UnitCubeHexahedronHasQuarterFacesAlongItsEdges) {
  ElementMesh cell;
  cell.n_nodes = 8;
  cell.coords = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
  cell.hexahedra = {0, 1, 2, 3, 4, 5, 6, 7};
  const EdgeMesh mesh = build_median_dual(cell);
  ASSERT_EQ(mesh.n_edges(), 12);  // the twelve hexahedron edges, no face diagonals
  for (double v : mesh.volumes) EXPECT_NEAR(v, 0.125, 1e-15);
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    EXPECT_NEAR(mesh.areas[e], 0.25, 1e-15);
    for (int d = 0; d < 3; ++d) {
      const double edge_direction = cell.coords[3 * mesh.right(e) + d] - cell.coords[3 * mesh.left(e) + d];
      EXPECT_NEAR(mesh.normals[3 * e + d], edge_direction, 1e-15) << "edge " << e;
    }
  }
}

TEST(DualMetrics, RightPrismIsTheTriangleDualTimesHalfTheHeight) {
  ElementMesh cell;
  cell.n_nodes = 6;
  cell.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1};
  cell.prisms = {0, 1, 2, 3, 4, 5};
  const EdgeMesh mesh = build_median_dual(cell);
  ASSERT_EQ(mesh.n_edges(), 9);
  for (double v : mesh.volumes) EXPECT_NEAR(v, 1.0 / 12.0, 1e-15);  // (1/6 of the triangle) x (1/2 height)
  EXPECT_NEAR(total_volume(mesh), 0.5, 1e-15);
  // Vertical edge: the 2D median-dual cell of the right-angle corner, area 1/6, facing up.
  expect_vector_near(area_vector(mesh, 0, 3), {0, 0, 1.0 / 6}, 1e-15, "edge 03");
  // Horizontal edge (0,1): the 2D dual segment (1/3, 1/6) times the half height 1/2.
  expect_vector_near(area_vector(mesh, 0, 1), {1.0 / 6, 1.0 / 12, 0}, 1e-15, "edge 01");
  expect_vector_near(area_vector(mesh, 4, 3), {-1.0 / 6, -1.0 / 12, 0}, 1e-15, "edge 43");
}

TEST(DualMetrics, SquarePyramidVolumesAndApexClosure) {
  ElementMesh cell;
  cell.n_nodes = 5;
  cell.coords = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0.5, 0.5, 1};
  cell.pyramids = {0, 1, 2, 3, 4};
  const EdgeMesh mesh = build_median_dual(cell);
  ASSERT_EQ(mesh.n_edges(), 8);
  // Cell centroid (0.5, 0.5, 0.2): every face cone has volume 1/15; the apex gets 1/3 of each side cone.
  EXPECT_NEAR(mesh.volumes[4], 4.0 / 45.0, 1e-15);
  for (int base = 0; base < 4; ++base) EXPECT_NEAR(mesh.volumes[base], 11.0 / 180.0, 1e-15);
  EXPECT_NEAR(total_volume(mesh), 1.0 / 3.0, 1e-15);
  // A lone cell is open: the apex dual cell is closed by 1/3 of each side face, whose sum is the base area.
  const std::vector<double> closure = dual_closure_vectors(mesh);
  expect_vector_near({closure[12], closure[13], closure[14]}, {0, 0, -1.0 / 3}, 1e-15, "apex closure");
}

TEST(DualMetrics, TwoTetrahedraSharingAFaceGiveTheSumOfBoth) {
  ElementMesh cells;
  cells.n_nodes = 5;
  cells.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4, 0.4, -1};
  cells.tetrahedra = {0, 1, 2, 3, 0, 2, 1, 4};
  const EdgeMesh mesh = build_median_dual(cells);
  EXPECT_EQ(mesh.n_edges(), 9);
  EXPECT_NEAR(total_volume(mesh), 1.0 / 6 + 1.0 / 6, 1e-15);
  // Shared edges collect one triangle pair from each cell; the sum runs over both.
  ElementMesh upper = cells, lower = cells;
  upper.tetrahedra = {0, 1, 2, 3};
  lower.tetrahedra = {0, 2, 1, 4};
  const Vector a = area_vector(build_median_dual(upper), 0, 1), b = area_vector(build_median_dual(lower), 0, 1);
  expect_vector_near(area_vector(mesh, 0, 1), {a[0] + b[0], a[1] + b[1], a[2] + b[2]}, 1e-15, "shared edge 01");
}

TEST(DualMetrics, JitteredHexahedraAndPyramidsCloseInteriorDualCells) {
  // A jittered 3x3x3 grid: hexahedra in a checkerboard, the other cells split into six pyramids around an
  // added centre node (their bases are the warped quadrilateral faces shared with the hexahedra).
  const int n = 3, side = n + 1;
  ElementMesh cells;
  auto grid_node = [&](int i, int j, int k) { return static_cast<node_index>(i + side * (j + side * k)); };
  for (int k = 0; k < side; ++k)
    for (int j = 0; j < side; ++j)
      for (int i = 0; i < side; ++i) {
        const bool interior = i > 0 && j > 0 && k > 0 && i < n && j < n && k < n;
        const double wobble = interior ? 0.08 * std::sin(3.0 * i + 5.0 * j + 7.0 * k) : 0.0;
        cells.coords.insert(cells.coords.end(), {i + wobble, j - wobble, k + 0.5 * wobble});
      }
  std::vector<std::uint8_t> on_boundary(static_cast<std::size_t>(side * side * side), 0);
  for (int node = 0; node < side * side * side; ++node) {
    const int i = node % side, j = (node / side) % side, k = node / (side * side);
    on_boundary[node] = i == 0 || j == 0 || k == 0 || i == n || j == n || k == n;
  }
  // Pyramid bases: the hexahedron's faces turned inwards, so each points to the centre.
  const int inward_faces[6][4] = {{0, 1, 2, 3}, {7, 6, 5, 4}, {4, 5, 1, 0}, {5, 6, 2, 1}, {6, 7, 3, 2}, {7, 4, 0, 3}};
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const node_index corner[8] = {grid_node(i, j, k),
                                      grid_node(i + 1, j, k),
                                      grid_node(i + 1, j + 1, k),
                                      grid_node(i, j + 1, k),
                                      grid_node(i, j, k + 1),
                                      grid_node(i + 1, j, k + 1),
                                      grid_node(i + 1, j + 1, k + 1),
                                      grid_node(i, j + 1, k + 1)};
        if ((i + j + k) % 2 == 0) {
          cells.hexahedra.insert(cells.hexahedra.end(), corner, corner + 8);
          continue;
        }
        const node_index centre = static_cast<node_index>(cells.coords.size() / 3);
        double sum[3] = {0, 0, 0};
        for (node_index c : corner)
          for (int d = 0; d < 3; ++d) sum[d] += cells.coords[3 * c + d];
        cells.coords.insert(cells.coords.end(), {sum[0] / 8, sum[1] / 8, sum[2] / 8});
        on_boundary.push_back(0);
        for (const auto& face : inward_faces)
          cells.pyramids.insert(cells.pyramids.end(),
                                {corner[face[0]], corner[face[1]], corner[face[2]], corner[face[3]], centre});
      }
  cells.n_nodes = static_cast<std::int64_t>(cells.coords.size() / 3);
  const EdgeMesh mesh = build_median_dual(cells);
  const DualClosureSummary closure = summarize_dual_closure(mesh, on_boundary);
  EXPECT_EQ(closure.nodes_checked, 8 + 13);
  EXPECT_LT(closure.max_relative, 1e-14) << "worst node " << closure.worst_node;
  EXPECT_NEAR(total_volume(mesh), 27.0, 1e-12);
  for (double v : mesh.volumes) EXPECT_GT(v, 0.0);
}

TEST(DualMetrics, InvertedTetrahedronFailsNamingTheCell) {
  ElementMesh cells;
  cells.n_nodes = 5;
  cells.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  cells.tetrahedra = {0, 1, 2, 3, 1, 3, 2, 4};  // the second has the wrong orientation
  const std::string message = error_message_of([&] { build_median_dual(cells); }, ExitCode::kInvalidInput);
  EXPECT_NE(message.find("cell 1 "), std::string::npos) << message;
  EXPECT_NE(message.find("inverted"), std::string::npos) << message;
  EXPECT_EQ(find_invalid_cells(cells), std::vector<std::int64_t>{1});
}

TEST(DualMetrics, RejectsOutOfRangeNodeIdsAndConvertsVtkWedges) {
  ElementMesh cells;
  cells.n_nodes = 4;
  cells.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  cells.tetrahedra = {0, 1, 2, 7};
  const std::string message = error_message_of([&] { build_median_dual(cells); }, ExitCode::kInvalidInput);
  EXPECT_NE(message.find("node id 7"), std::string::npos) << message;

  ElementMesh prism;
  prism.n_nodes = 6;
  prism.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1};
  prism.prisms = {0, 2, 1, 3, 5, 4};  // VTK_WEDGE order: inverted for CGNS
  EXPECT_EQ(find_invalid_cells(prism).size(), 1u);
  reorder_vtk_wedges_to_cgns(prism.prisms);
  EXPECT_NEAR(total_volume(build_median_dual(prism)), 0.5, 1e-15);
}

// ---- the box generator -------------------------------------------------------------------------------------

TEST(MeshGenSpec, RejectsInvalidSpecsWithUsageErrors) {
  const std::pair<BoxMeshSpec, std::string> cases[] = {
      {spec_of("tet", 0), "at least 1"},
      {spec_of("tet", 4, "natural", 0.45), "jitter"},
      {spec_of("tet", 4, "natural", -0.1), "jitter"},
      {spec_of("tet", 2000), "32-bit node ids"},
  };
  for (const auto& [spec, expected] : cases) {
    const std::string message = error_message_of([&] { generate_box_mesh(spec); }, ExitCode::kUsage);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(MeshGenSpec, KindsAndOrderingsAreParsedByName) {
  for (const MeshKind kind : {MeshKind::kTet, MeshKind::kPrism, MeshKind::kMixed})
    EXPECT_EQ(parse_mesh_kind(to_string(kind)), kind);
  for (const NodeOrdering order : {NodeOrdering::kNatural, NodeOrdering::kRandom, NodeOrdering::kRcm})
    EXPECT_EQ(parse_node_ordering(to_string(order)), order);
  EXPECT_EQ(name_list<MeshKind>(), "tet, prism or mixed");
  EXPECT_EQ(name_list<NodeOrdering>(), "natural, random or rcm");
  const std::string kind = error_message_of([] { parse_mesh_kind("hex"); }, ExitCode::kUsage);
  EXPECT_EQ(kind, "unknown kind 'hex': use tet, prism or mixed");
  const std::string order = error_message_of([] { parse_node_ordering("metis"); }, ExitCode::kUsage);
  EXPECT_EQ(order, "unknown order 'metis': use natural, random or rcm");
}

// ---- memory ------------------------------------------------------------------------------------------------

TEST(MeshGenMemory, RefusesAMeshLargerThanTheMemoryBeforeAllocatingAnything) {
  // n = 1200: 1.73e9 nodes (node ids still fit in 32 bits), about 1 TiB at the peak.
  const BoxMeshSpec spec = spec_of("mixed", 1200);
  const double needed = estimate_box_mesh_bytes(spec);
  EXPECT_GT(needed, 0.5 * 1024.0 * 1024 * 1024 * 1024);
  const AvailableMemory some{std::int64_t{8} << 30, "a test's 8 GiB"};
  const std::string message = error_message_of([&] { check_box_mesh_memory(spec, some); }, ExitCode::kUsage);
  const std::vector<std::string> fragments = {"box mesh mixed n = 1200 (natural order)",
                                              "needs about " + format_bytes(needed),
                                              "8.0 GiB is available (a test's 8 GiB)", "use n <= "};
  for (const std::string& fragment : fragments)
    EXPECT_NE(message.find(fragment), std::string::npos) << fragment << " in: " << message;
  // The advice is the largest n that fits.
  const int largest = std::stoi(message.substr(message.find("use n <= ") + 9));
  EXPECT_LE(estimate_box_mesh_bytes(spec_of("mixed", largest)), static_cast<double>(some.bytes));
  EXPECT_GT(estimate_box_mesh_bytes(spec_of("mixed", largest + 1)), static_cast<double>(some.bytes));
  EXPECT_NO_THROW(check_box_mesh_memory(spec_of("mixed", largest), some));
  EXPECT_NO_THROW(check_box_mesh_memory(spec, std::nullopt)) << "unknown memory: no check";

  // generate_box_mesh checks with the machine's memory first (this machine has far less than 1 TiB).
  const std::optional<AvailableMemory> machine = available_memory();
  ASSERT_TRUE(machine.has_value());
  if (static_cast<double>(machine->bytes) < needed)
    error_message_of([&] { generate_box_mesh(spec); }, ExitCode::kUsage);
}

TEST(MeshGenMemory, EstimateGrowsWithTheMeshAndCoversItsResultArrays) {
  for (const char* kind : {"tet", "prism", "mixed"}) {
    double previous = 0.0;
    for (int n : {1, 2, 10, 100, 1000}) {
      const double natural = estimate_box_mesh_bytes(spec_of(kind, n));
      EXPECT_GT(natural, previous) << kind << " " << n;
      EXPECT_GE(estimate_box_mesh_bytes(spec_of(kind, n, "rcm")), natural) << "renumbering adds arrays";
      EXPECT_EQ(estimate_box_mesh_bytes(spec_of(kind, n, "rcm")), estimate_box_mesh_bytes(spec_of(kind, n, "random")));
      previous = natural;
    }
    // The generated mesh and state alone (40 bytes per edge, 72 per node) stay below the estimate.
    const GeneratedMesh generated = generate_box_mesh(spec_of(kind, 8, "rcm"));
    const double result_bytes =
        40.0 * static_cast<double>(generated.mesh.n_edges()) + 72.0 * static_cast<double>(generated.mesh.n_nodes);
    EXPECT_LT(result_bytes, estimate_box_mesh_bytes(spec_of(kind, 8, "rcm")) - 16.0 * 1024 * 1024) << kind;
  }
}

TEST(MeshGenSpec, LargeJitterIsReducedWhereACellWouldTurnInvalid) {
  for (const char* kind : {"tet", "prism", "mixed"}) {
    std::int64_t reduced = 0;
    const ElementMesh elements = build_box_elements(spec_of(kind, 8, "natural", 0.449), nullptr, &reduced);
    EXPECT_TRUE(find_invalid_cells(elements).empty()) << kind;
    EXPECT_GT(reduced, 0) << kind;
  }
}

TEST(MeshGenTopology, EdgeCountsMatchTheSplitFormulas) {
  for (int n : {1, 2, 5}) {
    const GeneratedMesh tet = generate_box_mesh(spec_of("tet", n));
    EXPECT_EQ(tet.mesh.n_nodes, (n + 1) * (n + 1) * (n + 1));
    EXPECT_EQ(tet.n_tetrahedra, 6 * n * n * n);
    // Kuhn: 3 axis directions, 3 face diagonals, 1 body diagonal.
    EXPECT_EQ(tet.mesh.n_edges(), 3 * n * (n + 1) * (n + 1) + 3 * n * n * (n + 1) + n * n * n) << "n = " << n;
    const GeneratedMesh prism = generate_box_mesh(spec_of("prism", n));
    EXPECT_EQ(prism.n_prisms, 2 * n * n * n);
    EXPECT_EQ(prism.mesh.n_edges(), expected_box_edges(n, n)) << "n = " << n;
    const GeneratedMesh mixed = generate_box_mesh(spec_of("mixed", n));
    EXPECT_EQ(mixed.mesh.n_edges(), expected_box_edges(n, n / 2)) << "n = " << n;
  }
}

TEST(MeshGenTopology, CellsConformFaceByFace) {
  // Every triangle or quadrilateral face is shared by exactly two cells, or lies on the box surface.
  for (const char* kind : {"tet", "prism", "mixed"}) {
    const int n = 4;
    const ElementMesh elements = build_box_elements(spec_of(kind, n));
    std::map<std::vector<node_index>, int> face_count;
    auto add_face = [&](std::vector<node_index> face) {
      std::sort(face.begin(), face.end());
      ++face_count[face];
    };
    const int tet_faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
    for (std::int64_t c = 0; c < elements.n_tetrahedra(); ++c)
      for (const auto& f : tet_faces) {
        const node_index* v = &elements.tetrahedra[4 * c];
        add_face({v[f[0]], v[f[1]], v[f[2]]});
      }
    for (std::int64_t c = 0; c < elements.n_prisms(); ++c) {
      const node_index* v = &elements.prisms[6 * c];
      add_face({v[0], v[1], v[2]});
      add_face({v[3], v[4], v[5]});
      add_face({v[0], v[1], v[4], v[3]});
      add_face({v[1], v[2], v[5], v[4]});
      add_face({v[2], v[0], v[3], v[5]});
    }
    const std::int64_t side = n + 1;
    for (const auto& [face, count] : face_count) {
      if (count == 2) continue;
      ASSERT_EQ(count, 1) << kind;
      // A face seen once must lie in one plane i, j or k = 0 or n.
      bool on_surface = false;
      for (int axis = 0; axis < 3; ++axis) {
        for (std::int64_t plane : {std::int64_t{0}, std::int64_t{n}}) {
          bool all = true;
          for (node_index node : face) {
            const std::int64_t index[3] = {node % side, (node / side) % side, node / (side * side)};
            all = all && index[axis] == plane;
          }
          on_surface = on_surface || all;
        }
      }
      EXPECT_TRUE(on_surface) << kind << ": an interior face is not matched by a neighbour";
    }
  }
}

class MeshGenMetrics : public ::testing::TestWithParam<const char*> {};

TEST_P(MeshGenMetrics, InteriorDualCellsCloseAndVolumesFillTheBox) {
  const GeneratedMesh generated = generate_box_mesh(spec_of(GetParam(), 8, "natural", 0.3, 7));
  const EdgeMesh& mesh = generated.mesh;
  const DualClosureSummary closure = summarize_dual_closure(mesh, generated.on_boundary);
  EXPECT_EQ(closure.nodes_checked, 7 * 7 * 7);
  EXPECT_LT(closure.max_relative, 1e-12) << "worst node " << closure.worst_node;
  // Boundary dual cells are open: a check of every node must see it.
  EXPECT_GT(summarize_dual_closure(mesh, {}).max_relative, 1e-3);
  EXPECT_NEAR(total_volume(mesh), 1.0, 1e-12);
  for (double v : mesh.volumes) EXPECT_GT(v, 0.0);
}

TEST_P(MeshGenMetrics, AreasArePositiveNormalsUnitAndEdgesSorted) {
  const GeneratedMesh generated = generate_box_mesh(spec_of(GetParam(), 6, "rcm", 0.2, 3));
  const EdgeMesh& mesh = generated.mesh;
  ASSERT_EQ(mesh.edges.size(), 2 * mesh.areas.size());
  ASSERT_EQ(mesh.normals.size(), 3 * mesh.areas.size());
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    EXPECT_GT(mesh.areas[e], 0.0);
    const double* n = &mesh.normals[3 * e];
    EXPECT_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-14);
    EXPECT_LT(mesh.left(e), mesh.right(e));
    if (e > 0) {
      EXPECT_LT(std::make_pair(mesh.left(e - 1), mesh.right(e - 1)), std::make_pair(mesh.left(e), mesh.right(e)));
    }
    // The dual face points from L to R.
    double along = 0.0;
    for (int d = 0; d < 3; ++d)
      along += n[d] * (mesh.coords[3 * mesh.right(e) + d] - mesh.coords[3 * mesh.left(e) + d]);
    EXPECT_GT(along, 0.0) << "edge " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(MeshGenKinds, MeshGenMetrics, ::testing::Values("tet", "prism", "mixed"));

TEST(MeshGenMixed, EdgesPerNodeApproachThePaperMesh) {
  const GeneratedMesh mixed = generate_box_mesh(spec_of("mixed", 20));
  const double edges_per_node = static_cast<double>(mixed.mesh.n_edges()) / static_cast<double>(mixed.mesh.n_nodes);
  // 5.10 at n = 20 (surface nodes have fewer edges), 5.42 at n = 100; the paper's mesh has 5.43.
  EXPECT_GT(edges_per_node, 5.0);
  EXPECT_LT(edges_per_node, 5.6);
  EXPECT_EQ(mixed.mesh.n_edges(), expected_box_edges(20, 10));
  EXPECT_NEAR(static_cast<double>(expected_box_edges(100, 50)) / (101.0 * 101.0 * 101.0), 5.4, 0.05);
  // The prism layers are clustered into the lower quarter of the box, thinnest at the wall.
  const std::vector<double> z = box_z_levels(spec_of("mixed", 20));
  EXPECT_NEAR(z[10], 0.25, 1e-12);
  EXPECT_LT(z[1] - z[0], 0.2 * (z[20] - z[19]));
  for (int k = 0; k + 2 <= 20; ++k) EXPECT_LE(z[k + 1] - z[k], z[k + 2] - z[k + 1] + 1e-12) << "layer " << k;
}

// ---- slabs for generation in parts (mesh/part_balance.hpp) ---------------------------------------------------

TEST(MeshGenSlabs, EachPlanesWorkIsTheSumOfItsNodesVertexWeights) {
  for (const char* kind : {"tet", "prism", "mixed"}) {
    const BoxMeshSpec spec = spec_of(kind, 6);
    const GeneratedMesh generated = generate_box_mesh(spec);  // natural order: plane k holds ids k (n+1)^2 ..
    const std::int64_t plane_nodes = (spec.n + 1) * (spec.n + 1);
    std::vector<std::int64_t> degree(static_cast<std::size_t>(generated.mesh.n_nodes), 0);
    for (edge_index e = 0; e < generated.mesh.n_edges(); ++e)
      ++degree[generated.mesh.left(e)], ++degree[generated.mesh.right(e)];
    for (const PartBalance balance : {PartBalance::kAssembly, PartBalance::kSolve}) {
      std::vector<double> expected(static_cast<std::size_t>(spec.n) + 1, 0.0);
      for (std::int64_t node = 0; node < generated.mesh.n_nodes; ++node)
        expected[node / plane_nodes] += static_cast<double>(vertex_weight(balance, degree[node]));
      EXPECT_EQ(box_plane_work(spec, balance), expected) << kind << ", " << to_string(balance);
    }
  }
}

TEST(MeshGenSlabs, EachBalancesSlabsHoldEqualWorkWithinAPlaneAndAssemblyWorkKeepsItsSlabs) {
  for (const char* kind : {"tet", "prism", "mixed"})
    for (const int n : {12, 13, 100})
      for (int parts = 1; parts <= 7; ++parts)
        for (const PartBalance balance : {PartBalance::kAssembly, PartBalance::kSolve}) {
          SCOPED_TRACE(fmt::format("{} n = {}, {} parts, {}", kind, n, parts, to_string(balance)));
          const BoxMeshSpec spec = spec_of(kind, n);
          const std::vector<int> planes = box_slab_planes(spec, parts, balance);
          const std::vector<double> work = box_plane_work(spec, balance);
          ASSERT_EQ(planes.size(), static_cast<std::size_t>(parts) + 1);
          EXPECT_EQ(planes.front(), 0);
          EXPECT_EQ(planes.back(), n + 1);
          const double total = std::accumulate(work.begin(), work.end(), 0.0);
          const double heaviest = *std::max_element(work.begin(), work.end());
          for (int r = 0; r < parts; ++r) {
            EXPECT_GE(planes[r + 1] - planes[r], 1);
            const double slab = std::accumulate(work.begin() + planes[r], work.begin() + planes[r + 1], 0.0);
            EXPECT_LE(std::abs(slab - total / parts), heaviest) << "slab " << r << ": within one plane of its share";
          }
          if (balance == PartBalance::kAssembly)
            EXPECT_EQ(box_slab_planes(spec, parts), planes) << "assembly is the default";
        }
  // Node-assembly work as it always was: the mixed box's prism planes, fewer edges per node, come in thicker slabs,
  // so the slabs hold unequal node counts (n = 100, 2 ranks: 60 and 41 planes). The solve's weights (24 + degree)
  // differ less between the layers: 54 and 47.
  EXPECT_EQ(box_slab_planes(spec_of("mixed", 100), 2), (std::vector<int>{0, 60, 101}));
  EXPECT_EQ(box_slab_planes(spec_of("mixed", 100), 3), (std::vector<int>{0, 45, 74, 101}));
  EXPECT_EQ(box_slab_planes(spec_of("mixed", 100), 4), (std::vector<int>{0, 34, 60, 81, 101}));
  EXPECT_EQ(box_slab_planes(spec_of("mixed", 12), 2), (std::vector<int>{0, 8, 13}));
  EXPECT_EQ(box_slab_planes(spec_of("mixed", 100), 2, PartBalance::kSolve), (std::vector<int>{0, 54, 101}));
  // Tetrahedra alone have the same work in every interior plane: both balances give the same slabs there.
  EXPECT_EQ(box_slab_planes(spec_of("tet", 13), 2), box_slab_planes(spec_of("tet", 13), 2, PartBalance::kSolve));
}

TEST(MeshGenSlabs, MemoryEstimateFollowsTheBalancesThickestSlab) {
  const BoxMeshSpec spec = spec_of("mixed", 100, "rcm");
  // Assembly work puts 60 of 101 planes (and a ghost plane) on rank 0, the solve's weights 54: the thickest slab is
  // smaller.
  EXPECT_LT(estimate_box_mesh_bytes(spec, 2, PartBalance::kSolve), estimate_box_mesh_bytes(spec, 2));
  EXPECT_EQ(estimate_box_mesh_bytes(spec, 2), estimate_box_mesh_bytes(spec, 2, PartBalance::kAssembly));
}

TEST(MeshGenDeterminism, SameSeedSameMeshOtherSeedOtherJitter) {
  const BoxMeshSpec spec = spec_of("mixed", 6, "random", 0.25, 11);
  const GeneratedMesh first = generate_box_mesh(spec);
  GeneratedMesh second;
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  second = generate_box_mesh(spec);
  omp_set_num_threads(threads);
#else
  second = generate_box_mesh(spec);
#endif
  EXPECT_EQ(first.mesh.edges, second.mesh.edges);
  EXPECT_EQ(first.mesh.normals, second.mesh.normals);
  EXPECT_EQ(first.mesh.areas, second.mesh.areas);
  EXPECT_EQ(first.mesh.coords, second.mesh.coords);
  EXPECT_EQ(first.mesh.volumes, second.mesh.volumes);
  EXPECT_EQ(first.state.Q, second.state.Q);

  BoxMeshSpec other = spec;
  other.seed = 12;
  other.order = NodeOrdering::kNatural;
  BoxMeshSpec same = spec;
  same.order = NodeOrdering::kNatural;
  const std::vector<double> a = generate_box_mesh(same).mesh.coords, b = generate_box_mesh(other).mesh.coords;
  EXPECT_NE(a, b);
  const GeneratedMesh flat = generate_box_mesh(spec_of("mixed", 6, "natural", 0.0));
  EXPECT_NE(a, flat.mesh.coords);  // the jitter moves interior nodes ...
  for (std::size_t i = 0; i < a.size(); ++i)
    if (flat.on_boundary[i / 3]) {
      EXPECT_EQ(a[i], flat.mesh.coords[i]);  // ... and leaves the box surface alone
    }
}

TEST(MeshGenRecord, GeneratedFileRecordsItsSpecAndEveryFieldChangesTheRecord) {
  const test::TempDir dir;
  const BoxMeshSpec spec = spec_of("tet", 2, "rcm", 0.25, 3);
  const std::string path = dir.file("box.h5"), bare = dir.file("bare.h5");
  const GeneratedMesh generated = generate_box_mesh(spec);
  write_generated_mesh(path, generated, spec);
  EXPECT_EQ(read_box_mesh_generator_record(path), box_mesh_generator_record(spec));
  EXPECT_EQ(box_mesh_generator_record(spec),
            fmt::format("kind=tet n=2 order=rcm seed=3 jitter=0.25 generator={}", kBoxMeshGeneratorVersion));
  write_edge_mesh(bare, generated.mesh, &generated.state);
  EXPECT_EQ(read_box_mesh_generator_record(bare), std::nullopt) << "a file the generator did not write";

  std::set<std::string> records{box_mesh_generator_record(spec)};
  for (const BoxMeshSpec& other :
       {spec_of("prism", 2, "rcm", 0.25, 3), spec_of("tet", 3, "rcm", 0.25, 3), spec_of("tet", 2, "natural", 0.25, 3),
        spec_of("tet", 2, "rcm", 0.2, 3), spec_of("tet", 2, "rcm", 0.25, 4)})
    records.insert(box_mesh_generator_record(other));
  EXPECT_EQ(records.size(), 6u) << "two specs share a record";
}

TEST(MeshGenRecord, GeneratedFileRecordsTheDigestOfWhatItStoresAndEveryArrayChangesIt) {
  const test::TempDir dir;
  const BoxMeshSpec spec = spec_of("mixed", 3, "rcm");
  const std::string path = dir.file("box.h5"), bare = dir.file("bare.h5");
  const GeneratedMesh generated = generate_box_mesh(spec);
  write_generated_mesh(path, generated, spec);
  const std::uint64_t digest = generated_mesh_digest(generated);
  {
    const h5::File file = h5::File::open(path);
    EXPECT_EQ(read_generated_mesh_digest(file), digest_text(digest));
    // Read whole, or in slices that split the edges and the nodes anywhere: the same digest.
    for (const std::int64_t slice_rows : {std::int64_t{1} << 19, std::int64_t{50}, std::int64_t{7}})
      EXPECT_EQ(stored_mesh_digest(file, slice_rows), digest) << "slices of " << slice_rows << " rows";
  }
  write_edge_mesh(bare, generated.mesh, &generated.state);
  EXPECT_EQ(read_generated_mesh_digest(h5::File::open(bare)), std::nullopt) << "a file the generator did not write";

  // One bit of any array, or one node more, is another digest.
  const auto changed = [&](const std::function<void(GeneratedMesh&)>& change) {
    GeneratedMesh copy = generated;
    change(copy);
    return generated_mesh_digest(copy) != digest;
  };
  const auto last_bit = [](double& value) { value = std::nextafter(value, 2 * value + 1); };
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { last_bit(g.mesh.areas[5]); })) << "an area";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { last_bit(g.mesh.normals[7]); })) << "a normal";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { std::swap(g.mesh.edges[0], g.mesh.edges[1]); })) << "an edge's ends";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { last_bit(g.mesh.coords[4]); })) << "a coordinate";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { last_bit(g.mesh.volumes[3]); })) << "a volume";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { g.on_boundary[2] ^= 1; })) << "a boundary flag";
  EXPECT_TRUE(changed([&](GeneratedMesh& g) { last_bit(g.state.Q[kBlock * 10 + 4]); })) << "a state";
  // Two nodes' states swapped: the sums over the nodes see each state with its node.
  std::int64_t other = 1;
  while (generated.state.Q[kBlock * other] == generated.state.Q[0]) ++other;
  EXPECT_TRUE(changed([&](GeneratedMesh& g) {
    std::swap_ranges(g.state.Q.begin(), g.state.Q.begin() + kBlock, g.state.Q.begin() + kBlock * other);
  })) << "two nodes' states";
}

TEST(MeshGenState, HasStagnationAndSupersonicRegionsAndPositiveThermodynamics) {
  for (const char* kind : {"tet", "mixed"}) {
    const GeneratedMesh generated = generate_box_mesh(spec_of(kind, 10, "natural", 0.3));
    const FlowState& state = generated.state;
    ASSERT_EQ(state.n_nodes(), generated.mesh.n_nodes);
    EXPECT_EQ(state.gamma, kGamma);
    double min_mach = 1e300, max_mach = 0.0;
    for (std::int64_t i = 0; i < state.n_nodes(); ++i) {
      const Primitive<double> q = primitive_from_conservative(&state.Q[kBlock * i]);
      ASSERT_GT(q.rho, 0.0);
      ASSERT_GT(q.p, 0.0);
      const double mach = std::sqrt(q.u * q.u + q.v * q.v + q.w * q.w) / std::sqrt(kGamma * q.p / q.rho);
      min_mach = std::min(min_mach, mach);
      max_mach = std::max(max_mach, mach);
    }
    EXPECT_LT(min_mach, 0.2) << kind;
    EXPECT_GT(max_mach, 1.05) << kind;
  }
  // Far from the bumps: the freestream, Mach 0.85 with rho = 1 and p = 1/gamma.
  const FlowState corner = disturbed_freestream_state({0.0, 0.0, 1.0});
  const Primitive<double> q = primitive_from_conservative(corner.Q.data());
  EXPECT_NEAR(q.rho, 1.0, 1e-12);
  EXPECT_NEAR(q.p, 1.0 / kGamma, 1e-12);
  EXPECT_NEAR(std::sqrt(q.u * q.u + q.v * q.v + q.w * q.w), 0.85, 1e-12);
}

TEST(MeshGenProgress, ReportsEveryStageInOrder) {
  std::vector<std::pair<std::string, double>> calls;
  generate_box_mesh(spec_of("tet", 2, "rcm"),
                    [&](const std::string& stage, double fraction) { calls.emplace_back(stage, fraction); });
  const std::vector<std::string> expected = {"nodes", "cells", "dual metrics", "ordering", "state", "done"};
  ASSERT_EQ(calls.size(), expected.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, expected[i]);
    if (i > 0) {
      EXPECT_GE(calls[i].second, calls[i - 1].second);
    }
  }
  EXPECT_EQ(calls.back().second, 1.0);
}

// ---- orderings ---------------------------------------------------------------------------------------------

/// The edges of a mesh as {(min id, max id) -> (area vector from min to max)} in another numbering.
std::map<std::pair<node_index, node_index>, Vector> edges_in_numbering(const EdgeMesh& mesh,
                                                                       const std::vector<node_index>& id_map) {
  std::map<std::pair<node_index, node_index>, Vector> edges;
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    node_index a = id_map[mesh.left(e)], b = id_map[mesh.right(e)];
    const double sign = a < b ? 1.0 : -1.0;
    if (a > b) std::swap(a, b);
    edges[{a, b}] = {sign * mesh.areas[e] * mesh.normals[3 * e], sign * mesh.areas[e] * mesh.normals[3 * e + 1],
                     sign * mesh.areas[e] * mesh.normals[3 * e + 2]};
  }
  return edges;
}

TEST(Ordering, RandomPermutationIsAReproduciblePermutation) {
  const std::vector<node_index> p = random_permutation(1000, 5);
  std::vector<node_index> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(p, random_permutation(1000, 5));
  EXPECT_NE(p, random_permutation(1000, 6));
}

TEST(Ordering, RenumberingKeepsEveryEdgeWithItsGeometry) {
  const GeneratedMesh original = generate_box_mesh(spec_of("mixed", 5, "natural", 0.3));
  for (const char* method : {"random", "rcm"}) {
    EdgeMesh mesh = original.mesh;
    FlowState state = original.state;
    const std::vector<node_index> new_id_of_old =
        std::string(method) == "rcm" ? reverse_cuthill_mckee(mesh) : random_permutation(mesh.n_nodes, 9);
    renumber_nodes(mesh, &state, new_id_of_old);

    std::vector<node_index> identity(static_cast<std::size_t>(mesh.n_nodes)), old_of_new(identity.size());
    for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<node_index>(i);
    for (std::size_t i = 0; i < identity.size(); ++i) old_of_new[new_id_of_old[i]] = static_cast<node_index>(i);
    const auto before = edges_in_numbering(original.mesh, identity);
    const auto after = edges_in_numbering(mesh, old_of_new);
    ASSERT_EQ(before.size(), after.size()) << method;
    ASSERT_EQ(static_cast<std::size_t>(mesh.n_edges()), after.size()) << method << ": duplicate edges";
    for (const auto& [key, vector] : before) {
      const auto found = after.find(key);
      ASSERT_NE(found, after.end()) << method;
      EXPECT_EQ(found->second, vector) << method;  // exact: only negations and moves
    }
    for (edge_index e = 0; e < mesh.n_edges(); ++e) {
      EXPECT_LT(mesh.left(e), mesh.right(e));
      if (e > 0) {
        EXPECT_LT(std::make_pair(mesh.left(e - 1), mesh.right(e - 1)), std::make_pair(mesh.left(e), mesh.right(e)));
      }
    }
    for (std::int64_t i = 0; i < mesh.n_nodes; ++i) {
      const node_index j = new_id_of_old[i];
      EXPECT_EQ(mesh.volumes[j], original.mesh.volumes[i]);
      for (int d = 0; d < 3; ++d) EXPECT_EQ(mesh.coords[3 * j + d], original.mesh.coords[3 * i + d]);
      for (int k = 0; k < kBlock; ++k) EXPECT_EQ(state.Q[kBlock * j + k], original.state.Q[kBlock * i + k]);
    }
    EXPECT_LT(summarize_dual_closure(mesh, {}).max_closure, 1e300);  // runs on the renumbered mesh
  }
  EdgeMesh mesh = original.mesh;
  std::vector<node_index> not_a_permutation(static_cast<std::size_t>(mesh.n_nodes), 0);
  error_message_of([&] { renumber_nodes(mesh, nullptr, not_a_permutation); }, ExitCode::kInvalidInput);
}

TEST(Ordering, ReverseCuthillMcKeeShrinksTheBandwidth) {
  const GeneratedMesh random = generate_box_mesh(spec_of("mixed", 12, "random"));
  const GeneratedMesh rcm = generate_box_mesh(spec_of("mixed", 12, "rcm"));
  const GeneratedMesh natural = generate_box_mesh(spec_of("mixed", 12, "natural"));
  ASSERT_EQ(random.mesh.n_edges(), rcm.mesh.n_edges());
  EXPECT_LT(ordering_bandwidth(rcm.mesh) * 5, ordering_bandwidth(random.mesh));
  EXPECT_LT(mean_edge_span(rcm.mesh) * 5, mean_edge_span(random.mesh));
  EXPECT_LE(ordering_bandwidth(rcm.mesh), ordering_bandwidth(natural.mesh));
  // Interior closure and boundary flags survive the renumbering.
  EXPECT_LT(summarize_dual_closure(rcm.mesh, rcm.on_boundary).max_relative, 1e-12);
  EXPECT_LT(summarize_dual_closure(random.mesh, random.on_boundary).max_relative, 1e-12);
}

// Paper-size timing (not a test: run with --gtest_also_run_disabled_tests in a Release build).
TEST(DISABLED_MeshGenBenchmark, PaperSizeMixedRcm) {
  for (const char* order : {"natural", "rcm"}) {
    const auto start = std::chrono::steady_clock::now();
    std::string last_stage;
    auto stage_start = start;
    const GeneratedMesh generated = generate_box_mesh(spec_of("mixed", 100, order), [&](const std::string& stage,
                                                                                        double) {
      const auto now = std::chrono::steady_clock::now();
      if (!last_stage.empty())
        std::printf("  %-13s %.2f s\n", last_stage.c_str(), std::chrono::duration<double>(now - stage_start).count());
      last_stage = stage;
      stage_start = now;
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "mixed n=100 %s: %.2f s, %lld nodes, %lld edges (%.3f per node), bandwidth %lld, mean span %.1f, "
        "interior closure %.2e, %lld nodes with reduced jitter\n",
        order, seconds, static_cast<long long>(generated.mesh.n_nodes),
        static_cast<long long>(generated.mesh.n_edges()),
        static_cast<double>(generated.mesh.n_edges()) / static_cast<double>(generated.mesh.n_nodes),
        static_cast<long long>(ordering_bandwidth(generated.mesh)), mean_edge_span(generated.mesh),
        summarize_dual_closure(generated.mesh, generated.on_boundary).max_relative,
        static_cast<long long>(generated.n_jitter_reduced));
  }
}

}  // namespace
}  // namespace fluxjac
