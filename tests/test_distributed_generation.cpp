// ctest-label: cli
// A partitioned file written by every rank from its own part (parallel/part_writer.hpp) and the box mesh generated
// in parts (docs/design.md, "Many GPUs" and "Meshes"): the writer's file is the mesh it was given, read back whole,
// by `fluxjac info` and by slices; the peak resident set is measured.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/partition_check.hpp"
#include "mesh/partition_io.hpp"
#include "parallel/part_writer.hpp"
#include "test_support.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;

std::size_t files_in(const TempDir& dir) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()));
}

TEST(PeakResident, GrowsWithWhatTheProcessTouchedAndNeverFalls) {
  const std::int64_t before = peak_resident_bytes();
  EXPECT_GT(before, 0);
  {
    std::vector<char> block(64u << 20);
    std::fill(block.begin(), block.end(), 1);
    EXPECT_GE(peak_resident_bytes(), before + (60 << 20));
  }
  EXPECT_GE(peak_resident_bytes(), before + (60 << 20)) << "the peak stays after the memory is freed";
}

/// One process's part of a generated mesh, as read_local_part lays it out.
LocalPart whole_part(const GeneratedMesh& generated) {
  LocalPart part;
  part.mesh = generated.mesh;
  part.state = generated.state;
  part.layout = RankLayout::whole_mesh(part.mesh.n_nodes, part.mesh.n_edges());
  return part;
}

TEST(PartWriter, OneRanksFileIsTheMeshItWasGivenWithOnePart) {
  const TempDir dir;
  const GeneratedMesh generated = test::generate_mesh("mixed", 3, "natural");
  LocalPart part = whole_part(generated);
  // The writer sorts the edges by (L, R): give them in reverse, it stores them in the generator's order.
  const edge_index n_edges = part.mesh.n_edges();
  for (edge_index e = 0; e < n_edges; ++e) {
    const edge_index from = n_edges - 1 - e;
    std::copy_n(&generated.mesh.edges[2 * from], 2, &part.mesh.edges[2 * e]);
    std::copy_n(&generated.mesh.normals[3 * from], 3, &part.mesh.normals[3 * e]);
    part.mesh.areas[e] = generated.mesh.areas[from];
  }
  std::vector<std::int64_t> original(static_cast<std::size_t>(part.mesh.n_nodes));
  std::iota(original.rbegin(), original.rend(), 0);  // any permutation
  EdgeMeshExtras extras;
  extras.boundary_nodes = generated.on_boundary;
  extras.cells = CellCounts{generated.n_tetrahedra, 0, generated.n_prisms, 0};
  extras.order = "natural";
  const std::string path = dir.file("one.h5");
  write_partitioned_file(Communicator::world(), part, original, path, "test method", extras);

  const EdgeMesh mesh = read_edge_mesh(path);
  EXPECT_EQ(mesh.edges, generated.mesh.edges);
  EXPECT_TRUE(test::bitwise_equal(mesh.normals, generated.mesh.normals));
  EXPECT_TRUE(test::bitwise_equal(mesh.areas, generated.mesh.areas));
  EXPECT_TRUE(test::bitwise_equal(mesh.coords, generated.mesh.coords));
  EXPECT_TRUE(test::bitwise_equal(mesh.volumes, generated.mesh.volumes));
  EXPECT_TRUE(test::bitwise_equal(read_flow_state(path, mesh.n_nodes).Q, generated.state.Q));
  const EdgeMeshExtras read_extras = read_edge_mesh_extras(path, mesh.n_nodes);
  EXPECT_EQ(read_extras.boundary_nodes, generated.on_boundary);
  ASSERT_TRUE(read_extras.cells.has_value());
  EXPECT_EQ(read_extras.cells->text(), extras.cells->text());
  EXPECT_EQ(read_extras.order, "natural");
  const PartitionLayout layout = read_partition(path);
  check_partition_against_mesh(path, mesh, layout);
  EXPECT_EQ(layout.parts, 1);
  EXPECT_EQ(layout.original_node, original);
  EXPECT_TRUE(layout.ghost_nodes.empty() && layout.halo_edges.empty());
  const CommandResult info = run_fluxjac(fmt::format("info '{}'", path));
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("test method"), std::string::npos) << info.output;
}

TEST(PartWriter, AnInconsistentPartOrAnUnwritableFolderLeavesNoFile) {
  const TempDir dir;
  const GeneratedMesh generated = test::generate_mesh("tet", 2, "natural");
  const LocalPart part = whole_part(generated);
  std::vector<std::int64_t> original(static_cast<std::size_t>(part.mesh.n_nodes));
  std::iota(original.begin(), original.end(), 0);
  const std::string path = dir.file("bad.h5");
  const std::vector<std::int64_t> short_ids(original.begin(), original.end() - 1);
  try {
    write_partitioned_file(Communicator::world(), part, short_ids, path, "m");
    ADD_FAILURE() << "no Error for too few original ids";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("original ids for"), std::string::npos) << error.what();
  }
  const std::string folder = dir.file("no-such-folder");
  try {
    write_partitioned_file(Communicator::world(), part, original, folder + "/m.h5", "m");
    ADD_FAILURE() << "no Error for a missing folder";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
  }
  EXPECT_EQ(files_in(dir), 0u) << "no file and no temporary";
}

}  // namespace
}  // namespace fluxjac
