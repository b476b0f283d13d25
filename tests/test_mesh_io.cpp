// ctest-label: unit
// Mesh and state files (docs/design.md, "Edge mesh and state"): bitwise round trips, the accepted variations (int64
// edges, state in its own file, fixed-length strings), one test per kind of invalid input (each message must name the
// file, the dataset and the first offending index, on one line), the atomic writer, and `fluxjac info`.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cli/file_info.hpp"
#include "mesh/mesh_io.hpp"
#include "physics/gas.hpp"
#include "test_support.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::bitwise_equal;
using test::expect_invalid;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Five nodes: the corners of a tetrahedron (0-3) and a fifth node joined to 1, 2, 3; nine edges.
EdgeMesh small_mesh() {
  EdgeMesh mesh;
  mesh.n_nodes = 5;
  mesh.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  mesh.edges = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3, 1, 4, 2, 4, 3, 4};
  const edge_index n_edges = static_cast<edge_index>(mesh.edges.size() / 2);
  for (edge_index e = 0; e < n_edges; ++e) {
    const int left = mesh.edges[2 * e], right = mesh.edges[2 * e + 1];
    double d[3], length = 0.0;
    for (int k = 0; k < 3; ++k) {
      d[k] = mesh.coords[3 * right + k] - mesh.coords[3 * left + k];
      length += d[k] * d[k];
    }
    length = std::sqrt(length);
    for (int k = 0; k < 3; ++k) mesh.normals.push_back(d[k] / length);
    mesh.areas.push_back(0.1 + 0.01 * static_cast<double>(e) + 1e-17);
  }
  mesh.volumes = {0.2, 0.3, 0.1 + 0.2, 0.4, 1.0 / 3.0};
  return mesh;
}

/// A subsonic state with a different value at every node.
FlowState small_state(int n_nodes) {
  FlowState state;
  for (int i = 0; i < n_nodes; ++i) {
    const double rho = 1.0 + 0.1 * i, u = 0.3 + 0.01 * i, v = -0.1, w = 0.05 * i, p = 1.0 / 1.4 + 0.01 * i;
    const double rho_e = p / kGammaMinusOne + 0.5 * rho * (u * u + v * v + w * w);
    state.Q.insert(state.Q.end(), {rho, rho * u, rho * v, rho * w, rho_e});
  }
  return state;
}

/// A valid mesh + state file, rewritten before each test, and the means to spoil it.
class MeshIO : public ::testing::Test {
 protected:
  void SetUp() override { write_good(); }
  void write_good() {
    const FlowState state = small_state(5);
    write_edge_mesh(path_, small_mesh(), &state);
  }
  h5::File edit() const { return h5::File::open(path_, h5::File::Mode::kReadWrite); }

  template <class T>
  void replace(const std::string& dataset, const std::vector<T>& values, const std::vector<std::int64_t>& shape) {
    h5::File file = edit();
    h5::replace(file, dataset, values, shape);
    file.close();
  }
  void remove(const std::string& dataset) {
    h5::File file = edit();
    h5::remove(file, dataset);
    file.close();
  }
  template <class T>
  void set_attribute(const std::string& object, const std::string& name, T value) {
    h5::File file = edit();
    h5::write_attribute(file, object, name, value);
    file.close();
  }
  void remove_attribute(const std::string& object, const std::string& name) {
    h5::File file = edit();
    h5::remove_attribute(file, object, name);
    file.close();
  }
  /// Changes one value of a float64 dataset of the good file.
  void set_value(const std::string& dataset, std::size_t index, double value) {
    std::vector<double> values;
    std::vector<std::int64_t> shape;
    {
      const h5::File file = h5::File::open(path_);
      const h5::DatasetInfo info = h5::describe_dataset(file, dataset);
      values = h5::read<double>(file, info);
      shape = info.shape;
    }
    values.at(index) = value;
    replace(dataset, values, shape);
  }
  void set_edge(std::size_t edge, int left, int right) {
    std::vector<node_index> edges = small_mesh().edges;
    edges.at(2 * edge) = left;
    edges.at(2 * edge + 1) = right;
    replace(dataset_edges, edges, {9, 2});
  }

  void expect_mesh_rejected(const std::vector<std::string>& fragments) {
    std::vector<std::string> all = fragments;
    all.push_back("mesh.h5");
    expect_invalid([&] { read_edge_mesh(path_); }, all);
  }
  void expect_state_rejected(const std::vector<std::string>& fragments) {
    std::vector<std::string> all = fragments;
    all.push_back("mesh.h5");
    expect_invalid([&] { read_flow_state(path_, 5); }, all);
  }

  const std::string dataset_edges = "/mesh/edges";
  test::TempDir dir_;
  std::string path_ = dir_.file("mesh.h5");
};

// ---- round trips and accepted variations ---------------------------------------------------------

TEST_F(MeshIO, RoundTripIsBitwiseExact) {
  const EdgeMesh expected = small_mesh();
  const EdgeMesh mesh = read_edge_mesh(path_);
  EXPECT_EQ(mesh.n_nodes, 5);
  EXPECT_EQ(mesh.edges, expected.edges);
  EXPECT_TRUE(bitwise_equal(mesh.normals, expected.normals));
  EXPECT_TRUE(bitwise_equal(mesh.areas, expected.areas));
  EXPECT_TRUE(bitwise_equal(mesh.coords, expected.coords));
  EXPECT_TRUE(bitwise_equal(mesh.volumes, expected.volumes));
  const FlowState state = read_flow_state(path_, 5);
  EXPECT_TRUE(bitwise_equal(state.Q, small_state(5).Q));
  EXPECT_EQ(state.gamma, 1.4);
}

TEST_F(MeshIO, OptionalDatasetsMayBeAbsent) {
  EdgeMesh bare = small_mesh();
  bare.coords.clear();
  bare.volumes.clear();
  write_edge_mesh(path_, bare, nullptr);
  const EdgeMesh mesh = read_edge_mesh(path_);
  EXPECT_TRUE(mesh.coords.empty());
  EXPECT_TRUE(mesh.volumes.empty());
  EXPECT_EQ(mesh.edges, bare.edges);
}

TEST_F(MeshIO, FileLayoutIsTheDocumentedOne) {
  const h5::File file = h5::File::open(path_);
  EXPECT_EQ(h5::read_format(file), std::optional<std::string>("fluxjac-edge-mesh"));
  EXPECT_EQ(h5::read_integer_attribute(file, "/", "version"), std::optional<std::int64_t>(1));
  EXPECT_EQ(h5::read_integer_attribute(file, "/mesh", "n_nodes"), std::optional<std::int64_t>(5));
  EXPECT_EQ(h5::read_number_attribute(file, "/state", "gamma"), std::optional<double>(1.4));
  const auto expect_dataset = [&](const char* path, h5::ElementType type, std::vector<std::int64_t> shape) {
    const h5::DatasetInfo info = h5::describe_dataset(file, path);
    EXPECT_EQ(info.type.name(), type.name()) << path;
    EXPECT_EQ(info.shape, shape) << path;
  };
  expect_dataset("/mesh/edges", h5::kInt32, {9, 2});
  expect_dataset("/mesh/normals", h5::kFloat64, {9, 3});
  expect_dataset("/mesh/areas", h5::kFloat64, {9});
  expect_dataset("/mesh/coords", h5::kFloat64, {5, 3});
  expect_dataset("/mesh/volumes", h5::kFloat64, {5});
  expect_dataset("/state/Q", h5::kFloat64, {5, 5});
}

TEST_F(MeshIO, StateMayLiveInItsOwnFile) {
  const std::string mesh_path = dir_.file("mesh-only.h5");
  const std::string state_path = dir_.file("state.h5");
  write_edge_mesh(mesh_path, small_mesh(), nullptr);
  write_flow_state(state_path, small_state(5));
  const EdgeMesh mesh = read_edge_mesh(mesh_path);
  const FlowState state = read_flow_state(state_path, mesh.n_nodes);
  EXPECT_TRUE(bitwise_equal(state.Q, small_state(5).Q));
  expect_invalid([&] { read_flow_state(mesh_path, 5); }, {"mesh-only.h5", "/state/Q", "not found", "--state"});
  expect_invalid([&] { read_edge_mesh(state_path); }, {"state.h5", "/mesh", "not found"});
  expect_invalid([&] { read_flow_state(state_path, 6); }, {"state.h5", "/state/Q", "[5, 5]", "[6, 5]"});
}

TEST_F(MeshIO, Int64EdgesAreAccepted) {
  const std::vector<node_index> narrow = small_mesh().edges;
  replace(dataset_edges, std::vector<std::int64_t>(narrow.begin(), narrow.end()), {9, 2});
  EXPECT_EQ(read_edge_mesh(path_).edges, narrow);
}

TEST_F(MeshIO, FixedLengthFormatStringIsAccepted) {
  {
    h5::File file = edit();
    h5::remove_attribute(file, "/", "format");
    const h5::Datatype type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.id(), 32);
    H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
    const h5::Dataspace space(H5Screate(H5S_SCALAR));
    const h5::Attribute attribute(H5Acreate2(file.id(), "format", type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT));
    char text[32] = "fluxjac-edge-mesh";
    ASSERT_GE(H5Awrite(attribute.id(), type.id(), text), 0);
  }
  EXPECT_EQ(read_edge_mesh(path_).n_nodes, 5);
}

TEST_F(MeshIO, NormalsWithinTheToleranceAreAccepted) {
  set_value("/mesh/normals", 0, 1.0 + 5e-7);  // edge 0 has normal (1, 0, 0)
  EXPECT_NO_THROW(read_edge_mesh(path_));
}

// ---- files and root attributes ---------------------------------------------------------------------

TEST_F(MeshIO, MissingFileIsRejected) {
  expect_invalid([&] { read_edge_mesh(dir_.file("absent.h5")); }, {"absent.h5", "not found"});
}

TEST_F(MeshIO, NonHdf5FileIsRejected) {
  const std::string text_path = dir_.file("text.h5");
  std::ofstream(text_path) << "this is not HDF5\n";
  expect_invalid([&] { read_edge_mesh(text_path); }, {"text.h5", "not an HDF5 file"});
}

TEST_F(MeshIO, MissingFormatAttributeIsRejected) {
  remove_attribute("/", "format");
  expect_mesh_rejected({"format", "missing"});
}

TEST_F(MeshIO, WrongFormatAttributeIsRejected) {
  set_attribute("/", "format", "fluxjac-jacobian");
  expect_mesh_rejected({"\"fluxjac-jacobian\"", "expected \"fluxjac-edge-mesh\""});
  set_attribute("/", "format", std::int32_t{7});
  expect_mesh_rejected({"format", "int32", "expected a string"});
}

TEST_F(MeshIO, MissingOrWrongVersionIsRejected) {
  set_attribute("/", "version", std::int32_t{2});
  expect_mesh_rejected({"version", "is 2", "version 1"});
  remove_attribute("/", "version");
  expect_mesh_rejected({"version", "missing"});
}

// ---- datasets, shapes, types -------------------------------------------------------------------

TEST_F(MeshIO, MissingDatasetsAreRejected) {
  for (const char* dataset : {"/mesh/edges", "/mesh/normals", "/mesh/areas"}) {
    write_good();
    remove(dataset);
    SCOPED_TRACE(dataset);
    expect_mesh_rejected({dataset, "not found"});
  }
  write_good();
  remove("/state/Q");
  expect_state_rejected({"/state/Q", "not found"});
}

TEST_F(MeshIO, MissingOrBadNodeCountIsRejected) {
  remove_attribute("/mesh", "n_nodes");
  expect_mesh_rejected({"/mesh", "n_nodes", "missing"});
  set_attribute("/mesh", "n_nodes", std::int64_t{0});
  expect_mesh_rejected({"/mesh", "n_nodes", "is 0"});
  set_attribute("/mesh", "n_nodes", 5.0);
  expect_mesh_rejected({"/mesh", "n_nodes", "float64", "expected an integer"});
  set_attribute("/mesh", "n_nodes", std::int64_t{3'000'000'000});
  expect_mesh_rejected({"/mesh", "n_nodes", "3000000000", "int32"});
}

TEST_F(MeshIO, MisshapedEdgesAreRejected) {
  replace(dataset_edges, std::vector<std::int32_t>(27, 0), {9, 3});
  expect_mesh_rejected({"/mesh/edges", "shape [9, 3]", "expected [*, 2]"});
  replace(dataset_edges, small_mesh().edges, {18});
  expect_mesh_rejected({"/mesh/edges", "shape [18]", "expected [*, 2]"});
}

TEST_F(MeshIO, MisshapedEdgeDatasetsAreRejected) {
  replace("/mesh/normals", std::vector<double>(18, 0.0), {9, 2});
  expect_mesh_rejected({"/mesh/normals", "shape [9, 2]", "expected [9, 3]", "n_edges = 9"});
  write_good();
  replace("/mesh/normals", std::vector<double>(24, 0.0), {8, 3});
  expect_mesh_rejected({"/mesh/normals", "shape [8, 3]", "expected [9, 3]"});
  replace("/mesh/normals", small_mesh().normals, {9, 3});
  replace("/mesh/areas", std::vector<double>(8, 1.0), {8});
  expect_mesh_rejected({"/mesh/areas", "shape [8]", "expected [9]"});
  replace("/mesh/areas", std::vector<double>(9, 1.0), {9, 1});
  expect_mesh_rejected({"/mesh/areas", "shape [9, 1]", "expected [9]"});
}

TEST_F(MeshIO, MisshapedNodeDatasetsAreRejected) {
  replace("/mesh/coords", std::vector<double>(10, 0.0), {5, 2});
  expect_mesh_rejected({"/mesh/coords", "shape [5, 2]", "expected [5, 3]", "n_nodes = 5"});
  write_good();
  replace("/mesh/volumes", std::vector<double>(6, 1.0), {6});
  expect_mesh_rejected({"/mesh/volumes", "shape [6]", "expected [5]"});
  replace("/state/Q", std::vector<double>(20, 1.0), {5, 4});
  expect_state_rejected({"/state/Q", "shape [5, 4]", "expected [5, 5]"});
  replace("/state/Q", std::vector<double>(20, 1.0), {4, 5});
  expect_state_rejected({"/state/Q", "shape [4, 5]", "expected [5, 5]"});
}

TEST_F(MeshIO, MeshWithoutEdgesIsRejected) {
  replace(dataset_edges, std::vector<std::int32_t>{}, {0, 2});
  replace("/mesh/normals", std::vector<double>{}, {0, 3});
  replace("/mesh/areas", std::vector<double>{}, {0});
  expect_mesh_rejected({"/mesh/edges", "no edges"});
}

TEST_F(MeshIO, EdgesOfOtherTypesAreRejected) {
  const std::vector<node_index> edges = small_mesh().edges;
  replace(dataset_edges, std::vector<double>(edges.begin(), edges.end()), {9, 2});
  expect_mesh_rejected({"/mesh/edges", "type float64", "expected int32 or int64"});
  replace(dataset_edges, std::vector<std::int16_t>(edges.begin(), edges.end()), {9, 2});
  expect_mesh_rejected({"/mesh/edges", "type int16", "expected int32 or int64"});
  replace(dataset_edges, std::vector<std::uint32_t>(edges.begin(), edges.end()), {9, 2});
  expect_mesh_rejected({"/mesh/edges", "type uint32", "expected int32 or int64"});
}

TEST_F(MeshIO, FloatDatasetsMustBeFloat64) {
  const EdgeMesh mesh = small_mesh();
  replace("/mesh/normals", std::vector<float>(mesh.normals.begin(), mesh.normals.end()), {9, 3});
  expect_mesh_rejected({"/mesh/normals", "type float32", "expected float64"});
  write_good();
  replace("/mesh/areas", std::vector<std::int32_t>(9, 1), {9});
  expect_mesh_rejected({"/mesh/areas", "type int32", "expected float64"});
  write_good();
  replace("/mesh/coords", std::vector<float>(15, 0.0f), {5, 3});
  expect_mesh_rejected({"/mesh/coords", "type float32", "expected float64"});
  write_good();
  replace("/mesh/volumes", std::vector<float>(5, 1.0f), {5});
  expect_mesh_rejected({"/mesh/volumes", "type float32", "expected float64"});
  const std::vector<double> q = small_state(5).Q;
  replace("/state/Q", std::vector<float>(q.begin(), q.end()), {5, 5});
  expect_state_rejected({"/state/Q", "type float32", "expected float64"});
}

// ---- values ------------------------------------------------------------------------------------

TEST_F(MeshIO, NodeIndexOutOfRangeIsRejected) {
  set_edge(4, 1, 5);
  expect_mesh_rejected({"/mesh/edges[4]", "right node 5", "out of range [0, 5)"});
  set_edge(2, -1, 3);
  expect_mesh_rejected({"/mesh/edges[2]", "left node -1", "out of range"});
  const std::vector<node_index> narrow = small_mesh().edges;
  std::vector<std::int64_t> wide(narrow.begin(), narrow.end());
  wide[2 * 3] = std::int64_t{1} << 33;  // would wrap to 0 if narrowed before the check
  replace(dataset_edges, wide, {9, 2});
  expect_mesh_rejected({"/mesh/edges[3]", "8589934592", "out of range"});
}

TEST_F(MeshIO, SelfLoopIsRejected) {
  set_edge(6, 2, 2);
  expect_mesh_rejected({"/mesh/edges[6]", "self-loop", "node 2"});
}

TEST_F(MeshIO, DuplicateEdgeIsRejected) {
  set_edge(7, 0, 2);  // same as edge 1
  expect_mesh_rejected({"/mesh/edges[7]", "duplicate", "edge 1"});
  set_edge(8, 3, 1);  // edge 4 reversed
  expect_mesh_rejected({"/mesh/edges[8]", "duplicate", "edge 4"});
}

TEST_F(MeshIO, DuplicateEdgesAreFoundInALargeMesh) {
  // 100,000 nodes, 200,000 edges; the repeat must be named in file order, whatever order the buckets have.
  constexpr int kNodes = 100000;
  EdgeMesh mesh;
  mesh.n_nodes = kNodes;
  for (int i = 0; i < kNodes; ++i)
    for (int step : {1, 3}) {
      mesh.edges.insert(mesh.edges.end(), {i, (i + step) % kNodes});
      mesh.normals.insert(mesh.normals.end(), {0.0, 0.0, 1.0});
      mesh.areas.push_back(1.0);
    }
  write_edge_mesh(path_, mesh, nullptr);
  EXPECT_EQ(read_edge_mesh(path_).n_edges(), 2 * kNodes);
  // Edge 150001 (75000, 75003) becomes (77778, 77777): later, edge 155554 = (77777, 77778) repeats it reversed.
  mesh.edges[2 * 150001] = 77778;
  mesh.edges[2 * 150001 + 1] = 77777;
  write_edge_mesh(path_, mesh, nullptr);
  expect_mesh_rejected({"/mesh/edges[155554]", "duplicate", "edge 150001"});
}

TEST_F(MeshIO, NonFiniteNumbersAreRejected) {
  struct Case {
    const char* dataset;
    std::size_t index;  // flat index
    double value;
    const char* where;  // expected "dataset[row]"
  };
  const Case cases[] = {
      {"/mesh/normals", 3 * 3 + 1, kNaN, "/mesh/normals[3]"},
      {"/mesh/normals", 3 * 5, -kInf, "/mesh/normals[5]"},
      {"/mesh/areas", 2, kNaN, "/mesh/areas[2]"},
      {"/mesh/areas", 8, kInf, "/mesh/areas[8]"},
      {"/mesh/coords", 3 * 1 + 2, kInf, "/mesh/coords[1]"},
      {"/mesh/volumes", 4, kNaN, "/mesh/volumes[4]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.where);
    write_good();
    set_value(c.dataset, c.index, c.value);
    expect_mesh_rejected({c.where, "finite"});
  }
  write_good();
  set_value("/state/Q", 5 * 3 + 4, kNaN);
  expect_state_rejected({"/state/Q[3]", "component 4", "finite"});
}

TEST_F(MeshIO, NonUnitNormalIsRejected) {
  std::vector<double> normals = small_mesh().normals;
  for (int k = 0; k < 3; ++k) normals[3 * 5 + k] *= 0.93;
  replace("/mesh/normals", normals, {9, 3});
  expect_mesh_rejected({"/mesh/normals[5]", "length 0.93", "expected unit length (tolerance 1e-6)"});
}

TEST_F(MeshIO, NonPositiveAreaIsRejected) {
  set_value("/mesh/areas", 6, -0.5);
  set_value("/mesh/areas", 3, 0.0);
  expect_mesh_rejected({"/mesh/areas[3]", "area is 0", "positive"});
}

TEST_F(MeshIO, GammaOtherThanOnePointFourIsRejected) {
  set_attribute("/state", "gamma", 1.3);
  expect_state_rejected({"/state", "gamma", "1.3", "only gamma = 1.4 is supported"});
  remove_attribute("/state", "gamma");
  expect_state_rejected({"/state", "gamma", "missing"});
}

TEST_F(MeshIO, NonPositiveDensityIsRejected) {
  set_value("/state/Q", 5 * 2, -1.0);
  expect_state_rejected({"/state/Q[2]", "density is -1", "positive"});
  write_good();
  set_value("/state/Q", 5 * 4, 0.0);
  expect_state_rejected({"/state/Q[4]", "density is 0"});
}

TEST_F(MeshIO, NonPositivePressureIsRejected) {
  std::vector<double> q = small_state(5).Q;
  double* node = &q[5 * 3];
  const double kinetic = 0.5 * (node[1] * node[1] + node[2] * node[2] + node[3] * node[3]) / node[0];
  node[4] = 0.9 * kinetic;  // less total energy than kinetic energy: p < 0
  replace("/state/Q", q, {5, 5});
  expect_state_rejected({"/state/Q[3]", "pressure is -", "positive"});
}

// ---- writing -----------------------------------------------------------------------------------

TEST_F(MeshIO, FailedWriteLeavesNoFile) {
  EdgeMesh broken = small_mesh();
  broken.normals.pop_back();
  const std::string target = dir_.file("new.h5");
  try {
    write_edge_mesh(target, broken, nullptr);
    ADD_FAILURE() << "no Error for an inconsistent mesh";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kRuntime);
    EXPECT_NE(std::string(error.what()).find("new.h5"), std::string::npos) << error.what();
  }
  const FlowState short_state = small_state(4);
  EXPECT_THROW(write_edge_mesh(target, small_mesh(), &short_state), Error);
  EXPECT_THROW(write_edge_mesh(dir_.file("no/such/folder/mesh.h5"), small_mesh(), nullptr), Error);
  std::vector<std::string> left_behind;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    left_behind.push_back(entry.path().filename().string());
  EXPECT_EQ(left_behind, std::vector<std::string>{"mesh.h5"});
}

TEST_F(MeshIO, FailedWriteKeepsThePreviousFile) {
  EdgeMesh broken = small_mesh();
  broken.areas.pop_back();
  EXPECT_THROW(write_edge_mesh(path_, broken, nullptr), Error);
  EXPECT_EQ(read_edge_mesh(path_).n_edges(), 9);
}

TEST(MeshIOAtomicOutput, ExceptionBeforeCommitLeavesNeitherFile) {
  const test::TempDir dir;
  const std::string target = dir.file("out.h5");
  std::string temporary;
  try {
    AtomicOutput output(target);
    temporary = output.temporary_path();
    std::ofstream(temporary) << "half a file";
    ASSERT_TRUE(std::filesystem::exists(temporary));
    throw std::runtime_error("writer failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_FALSE(std::filesystem::exists(temporary));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(MeshIOAtomicOutput, CommitMovesTheTemporaryIntoPlace) {
  const test::TempDir dir;
  const std::string target = dir.file("out.h5");
  std::ofstream(target) << "old";
  {
    AtomicOutput output(target);
    EXPECT_EQ(output.temporary_path().rfind(target + ".tmp-" + std::to_string(::getpid()) + "-", 0), 0u)
        << output.temporary_path();
    std::ofstream(output.temporary_path()) << "new";
    std::string seen;
    std::ifstream(target) >> seen;
    EXPECT_EQ(seen, "old");  // the final name keeps the old file until commit
    output.commit();
    EXPECT_TRUE(output.committed());
  }
  std::string content;
  std::ifstream(target) >> content;
  EXPECT_EQ(content, "new");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1)
      << "the temporary is gone, only the target remains";
}

TEST(MeshIOAtomicOutput, MissingFolderIsAUsageError) {
  const test::TempDir dir;
  try {
    AtomicOutput output(dir.file("absent/out.h5"));
    ADD_FAILURE() << "no Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("does not exist"), std::string::npos) << error.what();
  }
}

// ---- fluxjac info ------------------------------------------------------------------------------

TEST_F(MeshIO, DescribeSummarisesMeshAndState) {
  const std::string text = describe_file(path_);
  for (const char* fragment : {"fluxjac edge mesh", "nodes", "5", "edges", "9 (1.8 per node)", "coords yes",
                               "bandwidth max |L-R| = 3", "density", "pressure", "Mach number"})
    EXPECT_NE(text.find(fragment), std::string::npos) << "\"" << fragment << "\" missing in:\n" << text;
}

TEST_F(MeshIO, DescribeRejectsForeignAndInvalidFiles) {
  set_value("/mesh/areas", 4, -1.0);
  expect_invalid([&] { describe_file(path_); }, {"mesh.h5", "/mesh/areas[4]"});
  set_attribute("/", "format", "something-else");
  expect_invalid([&] { describe_file(path_); }, {"mesh.h5", "\"something-else\"", "not a fluxjac file"});
}

}  // namespace
}  // namespace fluxjac
