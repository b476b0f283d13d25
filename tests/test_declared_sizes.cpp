// ctest-label: cli
// Inputs that are not what they declare (docs/formats.md, "Edge mesh and state"): a dataset declaring two billion
// rows of which one chunk is stored, a node count that nothing in the file holds, a path that is a loop of symbolic
// links. Each is the user's input to fix: exit code 2 and one line naming the file, whatever memory the declared
// sizes would take on this machine. Nodes that no edge reaches stay valid where a per-node dataset holds them.
#include <filesystem>
#include <string>
#include <vector>

#include <hdf5.h>

#include <fmt/format.h>

#include "mesh/mesh_io.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;

/// \brief Expects exit code `code` and exactly one `fluxjac: error: ` line, containing every fragment.
void expect_error_line(const CommandResult& result, int code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(result.exit_code, code) << result.output;
  const std::size_t at = result.output.find("fluxjac: error: ");
  ASSERT_NE(at, std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("fluxjac: error", at + 1), std::string::npos) << "more than one: " << result.output;
  const std::string line = result.output.substr(at, result.output.find('\n', at) - at);
  for (const std::string& fragment : fragments)
    EXPECT_NE(line.find(fragment), std::string::npos) << "\"" << fragment << "\" missing in " << line;
}

/// A small generated mesh with its state, written to folder/name.
std::string write_small_mesh(const TempDir& folder, const std::string& name) {
  const GeneratedMesh generated = test::generate_mesh("tet", 3, "natural");
  const std::string path = folder.file(name);
  write_edge_mesh(path, generated.mesh, &generated.state);
  return path;
}

/// \brief Replaces a dataset by a chunked one of `rows` rows (rows_per_chunk per chunk) whose first chunk only is
/// written, from the first rows of the old values.
void replace_with_one_chunk(const h5::File& file, const std::string& path, hid_t type, std::int64_t rows,
                            hsize_t rows_per_chunk) {
  const h5::DatasetInfo old = h5::describe_dataset(file, path);
  const hsize_t width = old.shape.size() > 1 ? static_cast<hsize_t>(old.shape[1]) : 0;
  const std::vector<double> values = h5::read<double>(file, old);
  h5::remove(file, path);
  const int rank = width > 0 ? 2 : 1;
  const hsize_t shape[2] = {static_cast<hsize_t>(rows), width}, chunk[2] = {rows_per_chunk, width};
  const h5::Dataspace space(H5Screate_simple(rank, shape, nullptr));
  const h5::PropertyList creation(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(creation.id(), rank, chunk);
  const h5::Dataset dataset(
      H5Dcreate2(file.id(), path.c_str(), type, space.id(), H5P_DEFAULT, creation.id(), H5P_DEFAULT));
  ASSERT_TRUE(dataset.valid()) << path;
  const hsize_t start[2] = {0, 0};
  ASSERT_GE(H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start, nullptr, chunk, nullptr), 0);
  const hsize_t first_chunk = rows_per_chunk * (width > 0 ? width : 1);
  ASSERT_LE(first_chunk, values.size()) << "the old values fill the first chunk";
  const h5::Dataspace memory(H5Screate_simple(1, &first_chunk, nullptr));
  ASSERT_GE(H5Dwrite(dataset.id(), H5T_NATIVE_DOUBLE, memory.id(), space.id(), H5P_DEFAULT, values.data()), 0);
}

TEST(DeclaredSizes, EdgesDeclaringTwoBillionRowsWithOneChunkStoredAreDamagedInputNotAMemoryShortage) {
  const TempDir folder;
  const std::string mesh = write_small_mesh(folder, "m.h5");
  constexpr std::int64_t kRows = (std::int64_t{1} << 31) + 10;
  {
    h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
    replace_with_one_chunk(file, "/mesh/edges", H5T_STD_I32LE, kRows, 64);
    replace_with_one_chunk(file, "/mesh/normals", H5T_IEEE_F64LE, kRows, 64);
    replace_with_one_chunk(file, "/mesh/areas", H5T_IEEE_F64LE, kRows, 64);
    file.close();
  }
  ASSERT_LT(std::filesystem::file_size(mesh), 1u << 20) << "the premise: a small file";
  // Reading it would need about 100 GiB: the storage is checked first, so no machine reports a memory shortage.
  for (const std::string command : {"run -q --threads 1 --mesh", "info"})
    expect_error_line(run_fluxjac(fmt::format("{} '{}'", command, mesh)), 2,
                      {mesh, "/mesh/edges", fmt::format("[{}, 2]", kRows), "chunks are stored"});
}

TEST(DeclaredSizes, ANodeCountThatNothingInTheFileHoldsIsRefused) {
  const TempDir folder;
  GeneratedMesh generated = test::generate_mesh("tet", 3, "natural");
  generated.mesh.coords.clear();
  generated.mesh.volumes.clear();
  const std::string mesh = folder.file("nodes.h5");
  write_edge_mesh(mesh, generated.mesh, nullptr);
  {
    h5::File file = h5::File::open(mesh, h5::File::Mode::kReadWrite);
    h5::write_attribute(file, "/mesh", "n_nodes", std::int64_t{2147483647});
    file.close();
  }
  ASSERT_LT(std::filesystem::file_size(mesh), 100'000u) << "the premise: a small file";
  const std::vector<std::string> fragments = {mesh, "\"n_nodes\" is 2147483647",
                                              fmt::format("no edge reaches a node past {}", generated.mesh.n_nodes - 1),
                                              "stores nothing per node"};
  expect_error_line(run_fluxjac(fmt::format("info '{}'", mesh)), 2, fragments);
  expect_error_line(run_fluxjac(fmt::format("mesh partition '{}' --parts 1 -o '{}'", mesh, folder.file("one-part.h5"))),
                    2, fragments);
  EXPECT_FALSE(std::filesystem::exists(folder.file("one-part.h5")));
}

TEST(DeclaredSizes, InfoRefusesAStateThatDoesNotFitTheNodeCountAsRunDoesBeforeItsSummariesNeedMemory) {
  const TempDir folder;
  const GeneratedMesh generated = test::generate_mesh("tet", 3, "natural");
  EdgeMesh mesh = generated.mesh;
  mesh.coords.clear();
  mesh.volumes.clear();
  const std::string path = folder.file("nodes.h5");
  write_edge_mesh(path, mesh, &generated.state);  // the state of the 64 nodes
  constexpr std::int64_t kNodes = 2147483647;
  {
    // 2^31 - 1 nodes, held by boundary flags allocated in the file but never written (a sparse file of 2 GiB): the
    // node count is valid, and the state's 64 rows do not fit it.
    h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::write_attribute(file, "/mesh", "n_nodes", kNodes);
    const hsize_t shape[1] = {static_cast<hsize_t>(kNodes)};
    const h5::Dataspace space(H5Screate_simple(1, shape, nullptr));
    const h5::PropertyList creation(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_alloc_time(creation.id(), H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(creation.id(), H5D_FILL_TIME_NEVER);
    const h5::Dataset flags(H5Dcreate2(file.id(), "/mesh/boundary_nodes", H5T_STD_U8LE, space.id(), H5P_DEFAULT,
                                       creation.id(), H5P_DEFAULT));
    ASSERT_TRUE(flags.valid());
  }
  const std::vector<std::string> fragments = {path, "/state/Q", "[64, 5]", fmt::format("[{}, 5]", kNodes)};
  expect_error_line(run_fluxjac(fmt::format("run -q --threads 1 --mesh '{}'", path)), 2, fragments);
  // info read the flags and summarized the mesh first, per node, and ran out of memory (exit 4).
  expect_error_line(run_fluxjac(fmt::format("info '{}'", path)), 2, fragments);
}

TEST(DeclaredSizes, NodesThatNoEdgeReachesAreValidWhereAPerNodeDatasetHoldsThem) {
  const TempDir folder;
  for (const bool with_coords : {true, false}) {
    GeneratedMesh generated = test::generate_mesh("tet", 2, "natural");
    EdgeMesh& mesh = generated.mesh;
    mesh.n_nodes += 3;  // three nodes of no edge at the end
    for (int extra = 0; extra < 3; ++extra) {
      mesh.coords.insert(mesh.coords.end(), {5.0, 5.0, 5.0 + extra});
      mesh.volumes.push_back(0.0);
      generated.state.Q.insert(generated.state.Q.end(), generated.state.Q.begin(), generated.state.Q.begin() + kBlock);
    }
    if (!with_coords) {
      mesh.coords.clear();
      mesh.volumes.clear();
    }
    const std::string path = folder.file(with_coords ? "coords.h5" : "state.h5");
    // Held by the coordinates, or by the state in the same file.
    write_edge_mesh(path, mesh, with_coords ? nullptr : &generated.state);
    const CommandResult info = run_fluxjac(fmt::format("info '{}'", path));
    EXPECT_EQ(info.exit_code, 0) << info.output;
    EXPECT_NE(info.output.find(fmt::format("{}", mesh.n_nodes)), std::string::npos) << info.output;
    EXPECT_EQ(read_edge_mesh(path).n_nodes, mesh.n_nodes);
  }
}

TEST(InputPaths, ALoopOfSymbolicLinksIsInvalidInputNamingThePath) {
  const TempDir folder;
  const std::string mesh = write_small_mesh(folder, "m.h5");
  const std::string first = folder.file("loop-a.h5"), second = folder.file("loop-b.h5");
  std::filesystem::create_symlink(second, first);
  std::filesystem::create_symlink(first, second);
  const std::vector<std::string> fragments = {first, "symbolic links"};
  expect_error_line(run_fluxjac(fmt::format("run -q --threads 1 --mesh '{}'", first)), 2, fragments);
  expect_error_line(run_fluxjac(fmt::format("info '{}'", first)), 2, fragments);
  expect_error_line(run_fluxjac(fmt::format("run -q --threads 1 --mesh '{}' --state '{}'", mesh, first)), 2, fragments);
  expect_error_line(
      run_fluxjac(fmt::format("mesh partition '{}' --parts 1 -o '{}'", first, folder.file("one-part.h5"))), 2,
      fragments);
}

}  // namespace
}  // namespace fluxjac
