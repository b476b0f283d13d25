// ctest-label: cli
// Element meshes in, edge meshes out: the element-mesh file, `fluxjac mesh dual` (known metrics of a hand-made
// mixed mesh, invariance under cell renumbering, orderings and states, bad input), `fluxjac info`, and the
// import path from real mesh files (scripts/import_mesh.py with meshio, gmsh, scripts/make_wing_mesh.sh).
// Tests that need gmsh or python3-meshio skip with a message when those are not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "mesh/dual_metrics.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/element_boundary.hpp"
#include "mesh/element_io.hpp"
#include "mesh/freestream.hpp"
#include "mesh/generator.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/ordering.hpp"
#include "physics/gas.hpp"
#include "reference/reference.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;
using Vector = std::array<double, 3>;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

/// Runs a shell command through std::system; its stdout and stderr, together, land in a log file read back here.
CommandResult run_shell(const std::string& command) {
  static int count = 0;
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() /
      ("fluxjac-import-test-" + std::to_string(getpid()) + "-" + std::to_string(count++) + ".log");
  const int status = std::system(("{ " + command + " ; } > '" + log.string() + "' 2>&1").c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  return result;
}

const std::string kPython = "/usr/bin/python3";
const std::string kImportScript = std::string(FLUXJAC_SOURCE_DIR) + "/scripts/import_mesh.py";

bool have_meshio() {
  static const bool available = run_shell(kPython + " -c 'import meshio, h5py, numpy'").exit_code == 0;
  return available;
}
bool have_gmsh() {
  static const bool available = run_shell("command -v gmsh").exit_code == 0;
  return available;
}

#define SKIP_WITHOUT_MESHIO()                                                         \
  if (!have_meshio())                                                                 \
  GTEST_SKIP() << "SKIPPED: " << kPython                                              \
               << " cannot import meshio/h5py/numpy (apt-get install python3-meshio " \
                  "python3-h5py python3-numpy)"
#define SKIP_WITHOUT_GMSH() \
  if (!have_gmsh()) GTEST_SKIP() << "SKIPPED: gmsh not found (apt-get install gmsh)"

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& part : parts)
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' in:\n" << text;
}

// ---- a hand-made mixed mesh: one cell of each type, conforming ----------------------------------------------
// The unit cube (nodes 0-7) is a hexahedron. A right prism of height 1 along y stands on its face x = 1: base
// triangle (1, 0, 0) (2, 0, 0.5) (1, 0, 1), area 1/2. A pyramid of height 1/2 sits on its top face, apex
// (0.5, 0.5, 1.5), and a tetrahedron on the pyramid's side face towards +x, fourth vertex (1.5, 0.5, 1.5).
ElementMesh hand_made_mixed_mesh() {
  ElementMesh mesh;
  mesh.coords = {0, 0, 0, 1, 0, 0, 1, 1, 0,   0, 1, 0,   0,   0,   1,   1,   0,   1,
                 1, 1, 1, 0, 1, 1, 2, 0, 0.5, 2, 1, 0.5, 0.5, 0.5, 1.5, 1.5, 0.5, 1.5};
  mesh.n_nodes = 12;
  mesh.hexahedra = {0, 1, 2, 3, 4, 5, 6, 7};
  mesh.prisms = {1, 5, 8, 2, 6, 9};
  mesh.pyramids = {4, 5, 6, 7, 10};
  mesh.tetrahedra = {5, 6, 10, 11};
  return mesh;
}

/// A jittered box of 4^3 hexahedra split into 64 prisms (two layers) under 192 tetrahedra: 27 interior nodes.
ElementMesh mixed_box() {
  BoxMeshSpec spec;
  spec.kind = MeshKind::kMixed;
  spec.n = 4;
  spec.jitter = 0.2;
  return build_box_elements(spec);
}

/// The area vectors A n of a mesh by node pair (L, R).
using FaceMap = std::map<std::pair<node_index, node_index>, Vector>;
FaceMap faces_by_edge(const EdgeMesh& mesh) {
  FaceMap faces;
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const double* n = &mesh.normals[3 * e];
    faces[{mesh.left(e), mesh.right(e)}] = {mesh.areas[e] * n[0], mesh.areas[e] * n[1], mesh.areas[e] * n[2]};
  }
  return faces;
}

/// The dual face between a and b, oriented from a to b; NaN when they share no edge.
Vector face_from(const FaceMap& faces, node_index a, node_index b) {
  const auto found = faces.find({std::min(a, b), std::max(a, b)});
  if (found == faces.end()) return {NAN, NAN, NAN};
  const double sign = a < b ? 1.0 : -1.0;
  return {sign * found->second[0], sign * found->second[1], sign * found->second[2]};
}

/// Largest component difference (NaN compares as failed).
double max_difference(const Vector& a, const Vector& b) {
  double worst = 0.0;
  for (int d = 0; d < 3; ++d) worst = std::max(worst, std::isnan(a[d] - b[d]) ? INFINITY : std::abs(a[d] - b[d]));
  return worst;
}

/// Same edges; normals, areas, volumes and coordinates equal to a relative tolerance.
void expect_same_edge_mesh(const EdgeMesh& actual, const EdgeMesh& expected, double tolerance,
                           const std::string& what) {
  ASSERT_EQ(actual.n_nodes, expected.n_nodes) << what;
  ASSERT_EQ(actual.edges, expected.edges) << what;
  double max_area = 0.0, max_volume = 0.0;
  for (double a : expected.areas) max_area = std::max(max_area, a);
  for (double v : expected.volumes) max_volume = std::max(max_volume, v);
  for (edge_index e = 0; e < expected.n_edges(); ++e) {
    ASSERT_NEAR(actual.areas[e], expected.areas[e], tolerance * max_area) << what << " edge " << e;
    for (int d = 0; d < 3; ++d)
      ASSERT_NEAR(actual.normals[3 * e + d], expected.normals[3 * e + d], tolerance) << what << " edge " << e;
  }
  for (std::int64_t i = 0; i < expected.n_nodes; ++i)
    ASSERT_NEAR(actual.volumes[i], expected.volumes[i], tolerance * max_volume) << what << " node " << i;
  for (std::size_t i = 0; i < expected.coords.size(); ++i)
    ASSERT_NEAR(actual.coords[i], expected.coords[i], tolerance) << what << " coordinate " << i;
}

/// Largest |R_i| over interior nodes of the residual of a uniform freestream, relative to the largest flux
/// magnitude A |F| (so that "zero" is measured against the terms that cancel).
double interior_freestream_residual(const EdgeMesh& mesh, const std::vector<std::uint8_t>& on_boundary) {
  FreestreamConditions conditions;
  conditions.mach = 0.8;
  conditions.alpha_degrees = 3.0;
  conditions.beta_degrees = 1.0;
  const FlowState state = uniform_freestream_state(mesh.n_nodes, conditions);
  const std::vector<double> residual_values = residual(mesh, state.Q);
  double max_area = 0.0;
  for (double a : mesh.areas) max_area = std::max(max_area, a);
  double worst = 0.0;
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i) {
    if (on_boundary[i]) continue;
    for (int k = 0; k < kBlock; ++k) worst = std::max(worst, std::abs(residual_values[kBlock * i + k]));
  }
  const double flux_scale = max_area * (1.0 / kGamma + 0.8 * 0.8 + 2.0);  // A (p + rho u^2 + rho H u) bound
  return worst / flux_scale;
}

// ---- MeshDual: the hand-made mesh ----------------------------------------------------------------------------

TEST(MeshDual, HandMadeMixedMeshHasKnownMetrics) {
  const ElementMesh elements = hand_made_mixed_mesh();
  EXPECT_TRUE(find_invalid_cells(elements).empty());
  const EdgeMesh mesh = build_median_dual(elements);
  // 12 hexahedron edges, 5 more of the prism, 4 of the pyramid (its base is the cube's top), 3 of the tetrahedron.
  ASSERT_EQ(mesh.n_edges(), 24);

  // Volumes: cube 1, prism 1/2, pyramid 1/6, tetrahedron 1/12.
  EXPECT_NEAR(std::accumulate(mesh.volumes.begin(), mesh.volumes.end(), 0.0), 1.75, 1e-15);
  EXPECT_NEAR(mesh.volumes[0], 1.0 / 8, 1e-15);    // a cube corner in no other cell
  EXPECT_NEAR(mesh.volumes[8], 1.0 / 12, 1e-15);   // a prism corner: (1/3 of the triangle) x (half the height)
  EXPECT_NEAR(mesh.volumes[11], 1.0 / 48, 1e-15);  // the tetrahedron's own vertex: 1/4 of it
  // The apex: 4/45 of a unit-height pyramid (DualMetrics.SquarePyramid...) scaled by 1/2, plus 1/4 of the tetrahedron.
  EXPECT_NEAR(mesh.volumes[10], 2.0 / 45 + 1.0 / 48, 1e-15);

  // Faces: quarter squares along the cube's own edges; the prism's spanwise edge carries the 2D median-dual
  // cell of its corner (1/3 of the triangle); tetrahedron edges S_ij = (A_i - A_j) / 12 (A_k: outward area
  // vector of the face opposite k).
  const FaceMap faces = faces_by_edge(mesh);
  EXPECT_LT(max_difference(face_from(faces, 0, 1), {0.25, 0, 0}), 1e-15);
  EXPECT_LT(max_difference(face_from(faces, 0, 3), {0, 0.25, 0}), 1e-15);
  EXPECT_LT(max_difference(face_from(faces, 4, 0), {0, 0, -0.25}), 1e-15);
  EXPECT_LT(max_difference(face_from(faces, 8, 9), {0, 1.0 / 6, 0}), 1e-15);
  // Tetrahedron (5, 6, 10, 11): edge 10-11 lies in it alone; A_10 (face 5 6 11) = (0.25, 0, -0.25),
  // A_11 (face 5 6 10) = (-0.25, 0, -0.25), so S = (0.5, 0, 0) / 12.
  EXPECT_LT(max_difference(face_from(faces, 10, 11), {0.5 / 12, 0, 0}), 1e-15);

  // Every node is on the boundary: its closure vector is minus its share of the boundary, e.g. the cube
  // corner's three quarter faces facing -x, -y and -z; all of them together cancel.
  const std::vector<double> closure = dual_closure_vectors(mesh);
  EXPECT_LT(max_difference({closure[0], closure[1], closure[2]}, {0.25, 0.25, 0.25}), 1e-15);
  Vector sum{0, 0, 0};
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i)
    for (int d = 0; d < 3; ++d) sum[d] += closure[3 * i + d];
  EXPECT_LT(max_difference(sum, {0, 0, 0}), 1e-15);

  // Each edge collects its cells' contributions: the sum of the one-cell meshes' faces (unused nodes are allowed).
  ElementMesh single[4];
  for (ElementMesh& cell : single) cell.n_nodes = elements.n_nodes, cell.coords = elements.coords;
  single[0].hexahedra = elements.hexahedra;
  single[1].prisms = elements.prisms;
  single[2].pyramids = elements.pyramids;
  single[3].tetrahedra = elements.tetrahedra;
  FaceMap summed;
  for (const ElementMesh& cell : single)
    for (const auto& [edge, face] : faces_by_edge(build_median_dual(cell)))
      for (int d = 0; d < 3; ++d) summed[edge][d] += face[d];
  ASSERT_EQ(summed.size(), faces.size());
  for (const auto& [edge, face] : faces)
    EXPECT_LT(max_difference(face, summed[edge]), 1e-15) << "edge " << edge.first << "-" << edge.second;

  // Boundary: 20 cell faces, 3 of them shared (cube-prism, cube-pyramid, pyramid-tetrahedron).
  const ElementBoundary boundary = find_element_boundary(elements);
  EXPECT_EQ(boundary.n_boundary_faces, 14);
  EXPECT_EQ(boundary.n_boundary_nodes, 12);
}

TEST(MeshDual, CommandWritesTheSameMetricsAsTheLibrary) {
  TempDir dir;
  const ElementMesh elements = hand_made_mixed_mesh();
  write_element_mesh(dir.file("mixed.h5"), elements, nullptr);
  const ElementMeshFile reread = read_element_mesh(dir.file("mixed.h5"));
  EXPECT_EQ(reread.elements.hexahedra, elements.hexahedra);
  EXPECT_EQ(reread.elements.tetrahedra, elements.tetrahedra);
  EXPECT_FALSE(reread.state.has_value());

  const CommandResult result =
      run_fluxjac("mesh dual -q " + quoted(dir.file("mixed.h5")) + " --state none -o " + quoted(dir.file("edges.h5")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_contains(result.output, {"12 nodes", "24 edges", "1 tetrahedra, 1 pyramids, 1 prisms, 1 hexahedra"});
  const EdgeMesh written = read_edge_mesh(dir.file("edges.h5"));
  expect_same_edge_mesh(written, build_median_dual(elements), 0.0, "written");
  const EdgeMeshExtras extras = read_edge_mesh_extras(dir.file("edges.h5"), written.n_nodes);
  EXPECT_EQ(extras.boundary_nodes, std::vector<std::uint8_t>(12, 1));
  ASSERT_TRUE(extras.cells.has_value());
  EXPECT_EQ(extras.cells->total(), 4);
  const h5::File file = h5::File::open(dir.file("edges.h5"));
  EXPECT_FALSE(h5::exists(file, "/state"));
}

// ---- MeshDual: orientation does not depend on how cells are numbered -----------------------------------------

/// Shuffles the cells of every block and turns every cell's vertex list by an orientation-preserving
/// permutation (an even permutation of a tetrahedron, a rotation of the base, prisms and hexahedra upside down).
ElementMesh renumber_cells(const ElementMesh& elements, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  ElementMesh shuffled = elements;
  auto shuffle_block = [&](std::vector<node_index>& block, int n_vertices, const std::vector<std::vector<int>>& turns) {
    const std::size_t n_cells = block.size() / n_vertices;
    std::vector<std::size_t> order(n_cells);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<node_index> result(block.size());
    for (std::size_t c = 0; c < n_cells; ++c) {
      const std::vector<int>& turn = turns[random() % turns.size()];
      for (int v = 0; v < n_vertices; ++v) result[c * n_vertices + v] = block[order[c] * n_vertices + turn[v]];
    }
    block.swap(result);
  };
  shuffle_block(shuffled.tetrahedra, 4, {{1, 2, 0, 3}, {3, 1, 0, 2}, {1, 0, 3, 2}});
  shuffle_block(shuffled.pyramids, 5, {{1, 2, 3, 0, 4}, {3, 0, 1, 2, 4}});
  shuffle_block(shuffled.prisms, 6, {{1, 2, 0, 4, 5, 3}, {3, 5, 4, 0, 2, 1}});
  shuffle_block(shuffled.hexahedra, 8, {{1, 2, 3, 0, 5, 6, 7, 4}, {4, 7, 6, 5, 0, 3, 2, 1}});
  return shuffled;
}

TEST(MeshDual, OrientationDoesNotDependOnCellNumbering) {
  for (const ElementMesh& elements : {hand_made_mixed_mesh(), mixed_box()}) {
    const EdgeMesh reference = build_median_dual(elements);
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const ElementMesh shuffled = renumber_cells(elements, seed);
      ASSERT_NE(shuffled.tetrahedra, elements.tetrahedra);
      ASSERT_TRUE(find_invalid_cells(shuffled).empty()) << "a turn inverted a cell";
      // Only the order of the floating-point sums changes.
      expect_same_edge_mesh(build_median_dual(shuffled), reference, 1e-14, "seed " + std::to_string(seed));
    }
  }
}

// ---- MeshDual: orderings, states, closure and free-stream preservation ---------------------------------------

TEST(MeshDual, OrderingsKeepStateBoundaryAndClosureWithTheirNodes) {
  TempDir dir;
  const ElementMesh elements = mixed_box();
  const FlowState state = disturbed_freestream_state(elements.coords);  // a function of position
  write_element_mesh(dir.file("box.h5"), elements, &state);
  EXPECT_TRUE(read_element_mesh(dir.file("box.h5")).state.has_value());

  for (const std::string order : {"natural", "rcm", "random"}) {
    const std::string out = dir.file(order + ".h5");
    const CommandResult result =
        run_fluxjac("mesh dual -q " + quoted(dir.file("box.h5")) + " --order " + order + " -o " + quoted(out));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    expect_contains(result.output, {"order " + order, "state from the input"});
    const EdgeMesh mesh = read_edge_mesh(out);
    const FlowState stored = read_flow_state(out, mesh.n_nodes);
    EXPECT_EQ(stored.Q, disturbed_freestream_state(mesh.coords).Q) << order << ": the state left its nodes";
    const EdgeMeshExtras extras = read_edge_mesh_extras(out, mesh.n_nodes);
    EXPECT_EQ(extras.order, order);
    const DualClosureSummary closure = summarize_dual_closure(mesh, extras.boundary_nodes);
    EXPECT_EQ(closure.nodes_checked, 3 * 3 * 3) << order;
    EXPECT_LT(closure.max_relative, 1e-13) << order << ", worst node " << closure.worst_node;
    EXPECT_LT(interior_freestream_residual(mesh, extras.boundary_nodes), 1e-14) << order;
    if (order == "rcm") {
      EXPECT_LT(ordering_bandwidth(mesh), ordering_bandwidth(build_median_dual(elements)));
    }
  }
}

TEST(MeshDual, AnElementMeshGivenForAnEdgeMeshNamesMeshDual) {
  TempDir dir;
  write_element_mesh(dir.file("box.h5"), mixed_box(), nullptr);
  for (const std::string& command :
       {"run -q --mesh " + quoted(dir.file("box.h5")), "info " + quoted(dir.file("box.h5")),
        "mesh partition " + quoted(dir.file("box.h5")) + " --parts 2 -o " + quoted(dir.file("p.h5"))}) {
    const CommandResult result = run_fluxjac(command);
    if (command.rfind("info", 0) == 0) {  // info describes any fluxjac file, an element mesh too
      EXPECT_EQ(result.exit_code, 0) << result.output;
      continue;
    }
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(result.output.find("an element mesh"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("fluxjac mesh dual"), std::string::npos) << result.output;
  }
}

TEST(MeshDual, FreestreamStateFollowsMachAndAngles) {
  TempDir dir;
  write_element_mesh(dir.file("box.h5"), mixed_box(), nullptr);
  const CommandResult result = run_fluxjac("mesh dual -q " + quoted(dir.file("box.h5")) +
                                           " --mach 0.5 --alpha 90 --beta 0 -o " + quoted(dir.file("edges.h5")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const EdgeMesh mesh = read_edge_mesh(dir.file("edges.h5"));
  const FlowState state = read_flow_state(dir.file("edges.h5"), mesh.n_nodes);
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i) {
    const double* q = &state.Q[kBlock * i];
    EXPECT_DOUBLE_EQ(q[0], 1.0);
    EXPECT_NEAR(q[1], 0.0, 1e-16);  // alpha 90: straight up
    EXPECT_NEAR(q[3], 0.5, 1e-15);
    EXPECT_NEAR(q[4], 1.0 / (kGamma * kGammaMinusOne) + 0.125, 1e-15);  // p / (gamma - 1) + rho u^2 / 2
  }
}

// ---- MeshDual: bad input -------------------------------------------------------------------------------------

struct BadElementCase {
  std::string name;
  std::string dual_arguments;
  int exit_code;
  std::vector<std::string> message;
};

void PrintTo(const BadElementCase& c, std::ostream* out) { *out << c.name; }

/// Writes the file a case needs into dir and returns its path.
std::string write_bad_case(const TempDir& dir, const std::string& name) {
  const std::string path = dir.file(name + ".h5");
  ElementMesh elements = hand_made_mixed_mesh();
  if (name == "inverted") std::swap(elements.tetrahedra[1], elements.tetrahedra[2]);
  if (name == "duplicate_cell") elements.tetrahedra = {5, 6, 10, 11, 5, 6, 10, 11};
  if (name == "duplicate_cell_permuted")  // the cube again, turned a quarter round z: the same cell
    elements.hexahedra = {0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 0, 5, 6, 7, 4};
  if (name == "non_manifold_face") {  // a second tetrahedron on the pyramid's face (5, 6, 10), beside the first
    elements.coords.insert(elements.coords.end(), {1.5, 0.6, 1.2});
    elements.n_nodes = 13;
    elements.tetrahedra = {5, 6, 10, 11, 5, 6, 10, 12};
  }
  if (name == "concave_hexahedron") {  // the cube's corner (1, 1, 1) pushed in past the middle of the cube
    elements = ElementMesh{};
    elements.n_nodes = 8;
    elements.coords = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0.55, 0.55, 0.55, 0, 1, 1};
    elements.hexahedra = {0, 1, 2, 3, 4, 5, 6, 7};
  }
  if (name == "huge_coordinates")
    for (double& x : elements.coords) x *= 1e200;
  write_element_mesh(path, elements, nullptr);
  h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
  if (name == "no_cells") {
    for (const char* block : {"tetrahedra", "pyramids", "prisms", "hexahedra"})
      h5::remove(file, std::string("/elements/") + block);
  } else if (name == "node_out_of_range") {
    h5::replace(file, "/elements/tetrahedra", std::vector<std::int64_t>{5, 6, 10, 12}, {1, 4});
  } else if (name == "wrong_shape") {
    h5::replace(file, "/elements/prisms", std::vector<std::int32_t>{1, 5, 8, 2, 6, 9}, {2, 3});
  } else if (name == "repeated_node") {
    h5::replace(file, "/elements/tetrahedra", std::vector<std::int32_t>{5, 6, 10, 5}, {1, 4});
  } else if (name == "edge_mesh_given") {
    h5::write_format(file, kEdgeMeshFormat, kEdgeMeshFormatVersion);
  } else if (name == "bad_state") {
    FlowState state = uniform_freestream_state(elements.n_nodes, {});
    state.Q[kBlock * 7] = -1.0;
    h5::create_group(file, "/elements/state");
    h5::write_attribute(file, "/elements/state", "gamma", 1.4);
    h5::write(file, "/elements/state/Q", state.Q, {elements.n_nodes, kBlock});
  }
  file.close();
  return path;
}

class MeshDualBadInput : public ::testing::TestWithParam<BadElementCase> {};

TEST_P(MeshDualBadInput, FailsWithOneClearLineAndNoOutput) {
  TempDir dir;
  const BadElementCase& c = GetParam();
  const std::string input = write_bad_case(dir, c.name);
  const std::string output = dir.file("out.h5");
  const CommandResult result =
      run_fluxjac("mesh dual -q " + quoted(input) + " " + c.dual_arguments + " -o " + quoted(output));
  EXPECT_EQ(result.exit_code, c.exit_code) << result.output;
  expect_contains(result.output, c.message);
  EXPECT_FALSE(std::filesystem::exists(output)) << "a failed run left " << output;
}

INSTANTIATE_TEST_SUITE_P(
    MeshDual, MeshDualBadInput,
    ::testing::Values(
        BadElementCase{"inverted", "", 2, {"inverted.h5: ", "cell 0 (tetrahedron 0 of its block", "inverted"}},
        BadElementCase{"no_cells", "", 2, {"no_cells.h5: /elements: the mesh has no cells", "found: coords"}},
        BadElementCase{"node_out_of_range", "", 2, {"/elements/tetrahedra[0]: node id 12 is out of range [0, 12)"}},
        BadElementCase{"wrong_shape", "", 2, {"/elements/prisms", "[2, 3]"}},
        BadElementCase{"repeated_node", "", 2, {"lists node 5 twice"}},
        BadElementCase{"duplicate_cell",
                       "",
                       2,
                       {"duplicate_cell.h5: ",
                        "cell 0 (tetrahedron 0 of its block, nodes 5 6 10 11) and cell 1 "
                        "(tetrahedron 1 of its block, nodes 5 6 10 11) have the same nodes",
                        "given twice"}},
        BadElementCase{"duplicate_cell_permuted",
                       "",
                       2,
                       {"cell 3 (hexahedron 0 of its block, nodes 0 1 2 3 4 5 6 7) and cell 4 (hexahedron 1 of its "
                        "block, nodes 1 2 3 0 5 6 7 4) have the same nodes"}},
        BadElementCase{"non_manifold_face",
                       "",
                       2,
                       {"the face with nodes 5 6 10 belongs to 3 cells", "cell 0 (tetrahedron 0",
                        "cell 1 (tetrahedron 1", "not manifold"}},
        BadElementCase{"concave_hexahedron",
                       "",
                       2,
                       {"cell 0 (hexahedron 0 of its block", "corner Jacobian at its node 6", "concave"}},
        BadElementCase{"huge_coordinates",
                       "",
                       2,
                       {"cell 2 (prism 0 of its block, nodes 1 5 8 2 6 9): node 1 is at (1e+200, 0, 0)", "rescale"}},
        BadElementCase{"edge_mesh_given", "", 2, {"\"fluxjac-edge-mesh\"", "fluxjac-element-mesh"}},
        BadElementCase{"bad_state", "", 2, {"/elements/state/Q[7]", "density"}},
        BadElementCase{"no_state", "--state input", 3, {"--state input", "no /elements/state/Q"}},
        BadElementCase{"mach_without_freestream", "--state none --mach 0.7", 3, {"--mach", "--state freestream"}}),
    [](const auto& info) { return info.param.name; });

TEST(MeshDual, DuplicatedCellsAreNamedWhereverTheyAre) {
  ElementMesh elements = mixed_box();
  // Interior tetrahedron 37 once more at the end of its block, its vertices turned round (same orientation).
  const node_index* original = &elements.tetrahedra[4 * 37];
  const std::array<node_index, 4> copy = {original[1], original[2], original[0], original[3]};
  elements.tetrahedra.insert(elements.tetrahedra.end(), copy.begin(), copy.end());
  test::expect_invalid([&] { find_element_boundary(elements); },
                       {"cell 37 (tetrahedron 37 of its block", "cell 192 (tetrahedron 192 of its block",
                        "have the same nodes", "4 faces are shared by duplicated cells"});
}

// ---- MeshDual: fluxjac info --------------------------------------------------------------------------------

TEST(MeshDual, InfoReportsCellCountsEdgeRatioClosureAndBandwidth) {
  TempDir dir;
  write_element_mesh(dir.file("box.h5"), mixed_box(), nullptr);
  const CommandResult elements = run_fluxjac("info " + quoted(dir.file("box.h5")));
  ASSERT_EQ(elements.exit_code, 0) << elements.output;
  expect_contains(elements.output, {"fluxjac element mesh", "192 tetrahedra, 0 pyramids, 64 prisms, 0 hexahedra",
                                    "per node", "over 27 interior nodes", "bandwidth max |L-R|"});

  ASSERT_EQ(run_fluxjac("mesh dual -q --order rcm " + quoted(dir.file("box.h5")) + " -o " + quoted(dir.file("e.h5")))
                .exit_code,
            0);
  const CommandResult edges = run_fluxjac("info " + quoted(dir.file("e.h5")));
  ASSERT_EQ(edges.exit_code, 0) << edges.output;
  expect_contains(edges.output, {"made from", "192 tetrahedra", "per node", "over 27 interior nodes",
                                 "bandwidth max |L-R|", "node order", "rcm"});
  const std::smatch closure = [&] {
    std::smatch match;
    std::regex_search(edges.output, match, std::regex(R"(sum A n\| = (\S+) x mean face area over 27)"));
    return match;
  }();
  ASSERT_FALSE(closure.empty()) << edges.output;
  EXPECT_LT(std::stod(closure[1]), 1e-12);
}

TEST(MeshDual, HelpNamesEveryOptionAndMeshGenStoresBoundaryFlags) {
  const CommandResult help = run_fluxjac("mesh dual --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  expect_contains(help.output,
                  {"elements", "--output", "--order", "natural", "rcm", "random", "--seed", "--state", "freestream",
                   "input", "none", "--mach", "--alpha", "--beta", "--quiet", "import_mesh.py"});

  TempDir dir;
  const CommandResult gen = run_fluxjac("mesh gen -q --kind mixed --n 3 --order random -o " + quoted(dir.file("g.h5")));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const EdgeMesh mesh = read_edge_mesh(dir.file("g.h5"));
  const EdgeMeshExtras extras = read_edge_mesh_extras(dir.file("g.h5"), mesh.n_nodes);
  ASSERT_EQ(extras.boundary_nodes.size(), 64u);
  EXPECT_EQ(std::count(extras.boundary_nodes.begin(), extras.boundary_nodes.end(), 0), 8);
  EXPECT_LT(summarize_dual_closure(mesh, extras.boundary_nodes).max_relative, 1e-13);
  const CommandResult info = run_fluxjac("info " + quoted(dir.file("g.h5")));
  expect_contains(info.output, {"over 8 interior nodes", "node order", "random"});
}

// ---- MeshImport: scripts/import_mesh.py ----------------------------------------------------------------------

/// Runs import_mesh.py; the element mesh goes to out.
CommandResult import_mesh(const std::string& input, const std::string& out, const std::string& options = "") {
  return run_shell(kPython + " " + quoted(kImportScript) + " " + quoted(input) + " -o " + quoted(out) + " " + options);
}

/// Meshes tests/data/hybrid_box.geo with gmsh: prisms and hexahedra in an extruded layer, tetrahedra and
/// pyramids above it.
std::string mesh_hybrid_box(const TempDir& dir) {
  const std::string msh = dir.file("hybrid_box.msh");
  const CommandResult gmsh = run_shell(
      "gmsh -3 -format msh41 " + quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/hybrid_box.geo") + " -o " + quoted(msh));
  EXPECT_EQ(gmsh.exit_code, 0) << gmsh.output;
  return msh;
}

TEST(MeshImport, GmshHybridMeshClosesInteriorDualCellsAndPreservesFreestream) {
  SKIP_WITHOUT_GMSH();
  SKIP_WITHOUT_MESHIO();
  TempDir dir;
  const std::string msh = mesh_hybrid_box(dir);
  const CommandResult imported = import_mesh(msh, dir.file("elements.h5"));
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  expect_contains(imported.output, {"dropped lower-dimensional cells", "triangle", "quad"});

  const ElementMesh elements = read_element_mesh(dir.file("elements.h5")).elements;
  EXPECT_GT(elements.n_tetrahedra(), 0);
  EXPECT_GT(elements.n_pyramids(), 0);
  EXPECT_GT(elements.n_prisms(), 0);
  EXPECT_GT(elements.n_hexahedra(), 0);
  const EdgeMesh mesh = build_median_dual(elements);
  const ElementBoundary boundary = find_element_boundary(elements);
  const DualClosureSummary closure = summarize_dual_closure(mesh, boundary.on_boundary);
  EXPECT_GT(closure.nodes_checked, 20);
  EXPECT_LT(closure.max_relative, 1e-13) << "worst node " << closure.worst_node;
  EXPECT_NEAR(std::accumulate(mesh.volumes.begin(), mesh.volumes.end(), 0.0), 2.0, 1e-12);  // the 2 x 1 x 1 box
  EXPECT_LT(interior_freestream_residual(mesh, boundary.on_boundary), 1e-14);
  // Boundary nodes are exactly those on the box surface.
  for (std::int64_t i = 0; i < elements.n_nodes; ++i) {
    const double* x = &elements.coords[3 * i];
    const bool on_surface = std::abs(x[0]) < 1e-12 || std::abs(x[0] - 2) < 1e-12 || std::abs(x[1]) < 1e-12 ||
                            std::abs(x[1] - 1) < 1e-12 || std::abs(x[2]) < 1e-12 || std::abs(x[2] - 1) < 1e-12;
    EXPECT_EQ(boundary.on_boundary[i] != 0, on_surface) << "node " << i;
  }
}

TEST(MeshImport, RoundTripsEveryMeshioFormat) {
  SKIP_WITHOUT_MESHIO();
  TempDir dir;
  const ElementMesh elements = hand_made_mixed_mesh();
  const FlowState state = disturbed_freestream_state(elements.coords);
  write_element_mesh(dir.file("mixed.h5"), elements, &state);
  const CommandResult fixtures =
      run_shell(kPython + " " + quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/meshio_fixtures.py") + " roundtrip " +
                quoted(dir.file("mixed.h5")) + " " + quoted(dir.path()));
  ASSERT_EQ(fixtures.exit_code, 0) << fixtures.output;

  const EdgeMesh expected = build_median_dual(elements);
  ElementMesh tetrahedron_only = elements;
  tetrahedron_only.pyramids.clear(), tetrahedron_only.prisms.clear(), tetrahedron_only.hexahedra.clear();
  int checked = 0;
  for (const std::string format : {"gmsh22", "su2", "vtk", "vtu", "medit", "medit_binary", "xdmf", "ugrid", "nastran",
                                   "tecplot", "cgns", "vtk_wedges"}) {
    SCOPED_TRACE(format);
    EXPECT_NE(fixtures.output.find(format + " ok"), std::string::npos) << fixtures.output;
    if (!std::filesystem::exists(dir.file(format + ".h5"))) continue;
    const ElementMeshFile imported = read_element_mesh(dir.file(format + ".h5"));
    if (format == "cgns") {
      // meshio's CGNS writer keeps tetrahedra only; the unused nodes are dropped.
      EXPECT_EQ(imported.elements.n_cells(), 1);
      EXPECT_EQ(imported.elements.n_nodes, 4);
      continue;
    }
    const CellCounts counts = count_cells(imported.elements);
    EXPECT_EQ(counts.text(), "1 tetrahedra, 1 pyramids, 1 prisms, 1 hexahedra");
    // The same cells up to orientation-preserving vertex order: the same dual, to the text formats' precision.
    expect_same_edge_mesh(build_median_dual(imported.elements), expected, 1e-7, format);
    if (format == "vtk_wedges") {
      ASSERT_TRUE(imported.state.has_value());
      EXPECT_EQ(imported.state->Q, state.Q);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 11);
}

TEST(MeshImport, RefusesSurface2DAndMalformedInputsWithClearMessages) {
  SKIP_WITHOUT_MESHIO();
  TempDir dir;
  const CommandResult fixtures =
      run_shell(kPython + " " + quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/meshio_fixtures.py") + " bad " +
                quoted(dir.path()));
  ASSERT_EQ(fixtures.exit_code, 0) << fixtures.output;
  const std::map<std::string, std::vector<std::string>> cases = {
      {"surface.vtu", {"no 3D cells", "4 triangle", "surface-only mesh"}},
      {"planar.vtu", {"no 3D cells", "2 triangle", "a 2D mesh"}},
      {"collapsed.vtu", {"hexahedron 0 repeats vertices in an unknown pattern"}},
      {"missing.msh", {"missing.msh: no such file"}},
  };
  for (const auto& [input, message] : cases) {
    const CommandResult result = import_mesh(dir.file(input), dir.file("out.h5"));
    EXPECT_EQ(result.exit_code, 2) << input << ": " << result.output;
    expect_contains(result.output, message);
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "one line: " << result.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.h5")));
  const CommandResult no_field = import_mesh(dir.file("surface.vtu"), dir.file("out.h5"), "--state-field Q");
  EXPECT_NE(no_field.exit_code, 0);
}

TEST(MeshImport, WingScriptMakesAClosedFreestreamPreservingMesh) {
  SKIP_WITHOUT_GMSH();
  SKIP_WITHOUT_MESHIO();
  TempDir dir;
  const std::string out = dir.file("wing.h5");
  const CommandResult result =
      run_shell("bash " + quoted(std::string(FLUXJAC_SOURCE_DIR) + "/scripts/make_wing_mesh.sh") +
                " --size 0.2 --span 2 --farfield 4 --curvature 0 --sections 20 --threads 1 --fluxjac " +
                quoted(FLUXJAC_EXECUTABLE) + " -o " + quoted(out));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_contains(result.output, {"gmsh:", "import_mesh.py", "fluxjac mesh dual", "done:"});
  const EdgeMesh mesh = read_edge_mesh(out);
  const EdgeMeshExtras extras = read_edge_mesh_extras(out, mesh.n_nodes);
  ASSERT_TRUE(extras.cells.has_value());
  EXPECT_GT(extras.cells->tetrahedra, 1000);
  const DualClosureSummary closure = summarize_dual_closure(mesh, extras.boundary_nodes);
  EXPECT_GT(closure.nodes_checked, 100);
  EXPECT_LT(closure.max_relative, 1e-12) << "worst node " << closure.worst_node;
  EXPECT_LT(interior_freestream_residual(mesh, extras.boundary_nodes), 1e-13);
  // The box minus the wing. Box: 4 chords before the leading edge and after the swept tip's trailing edge
  // (2 tan 30 + 0.5), span 2 + 4, height 2 x 4. Wing: section area 0.0822 c^2 (NACA 0012), c from 1 to 0.5
  // over the span 2, so 0.0822 x 2 x (1 + 0.5 + 0.25) / 3 = 0.0959; coarse facets cut off some of it.
  const double volume = std::accumulate(mesh.volumes.begin(), mesh.volumes.end(), 0.0);
  const double box = (8.0 + 2.0 * std::tan(30.0 * 3.14159265358979 / 180.0) + 0.5) * 6.0 * 8.0;
  EXPECT_NEAR(volume, box - 0.0959, 0.02);
}

}  // namespace
}  // namespace fluxjac
