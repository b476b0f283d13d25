// ctest-label: cli
// Many ranks on the CPU (docs/design.md 9): `mpirun -np 2` and `-np 3` runs of the CPU reference write the same
// Jacobian file as one process, bit for bit, whether the mesh is partitioned on the fly by METIS or read by slices
// from a partitioned file; meshes with disconnected pieces and with more ranks than parts can usefully hold; a stored
// reference read by rows; bench records with the parallel figures; bad input refused on every rank with nothing
// written. Every test skips with a message in a build without MPI.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/partition.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::run_fluxjac_mpi;
using test::TempDir;

#define SKIP_WITHOUT_MPI()                                     \
  do {                                                         \
    const std::string reason = test::mpi_unavailable_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;               \
  } while (0)
#define SKIP_WITHOUT_METIS() \
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS (install libmetis-dev and rebuild): skipped"

/// Lines of output that contain fragment.
std::size_t count_lines(const std::string& output, const std::string& fragment) {
  std::size_t count = 0;
  for (std::size_t at = output.find(fragment); at != std::string::npos; at = output.find(fragment, at + 1)) ++count;
  return count;
}

void expect_same_file(const std::string& serial_path, const std::string& many_path) {
  const StoredJacobian serial = read_jacobian(serial_path);
  const StoredJacobian many = read_jacobian(many_path);
  EXPECT_EQ(serial.pattern.row_ptr, many.pattern.row_ptr);
  EXPECT_EQ(serial.pattern.col_idx, many.pattern.col_idx);
  EXPECT_TRUE(test::bitwise_equal(serial.jacobian.adiag, many.jacobian.adiag)) << many_path << ": Adiag differs";
  EXPECT_TRUE(test::bitwise_equal(serial.jacobian.aoff, many.jacobian.aoff)) << many_path << ": Aoff differs";
}

/// Writes a generated mesh with its state.
std::string write_generated(const TempDir& dir, const std::string& kind, int n, const std::string& order) {
  const GeneratedMesh generated = test::generate_mesh(kind, n, order);
  const std::string path = dir.file(fmt::format("{}-{}-{}.h5", kind, n, order));
  write_edge_mesh(path, generated.mesh, &generated.state);
  return path;
}

/// Serial and many-rank runs of the reference on path, with --output, compared bit for bit.
void expect_many_ranks_equal_one(const TempDir& dir, const std::string& path, int ranks) {
  const std::string serial = dir.file("serial.h5"), many = dir.file(fmt::format("ranks{}.h5", ranks));
  std::filesystem::remove(serial);
  std::filesystem::remove(many);
  const CommandResult one = run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, serial));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const CommandResult result =
      run_fluxjac_mpi(ranks, fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, many));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;
  expect_same_file(serial, many);
}

TEST(MpiReference, EveryKindAndOrderOnTwoAndThreeRanksEqualsOneProcessBitForBit) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  for (const auto& [kind, order] :
       std::vector<std::pair<std::string, std::string>>{{"tet", "rcm"}, {"prism", "random"}, {"mixed", "natural"}}) {
    const std::string path = write_generated(dir, kind, 4, order);
    for (const int ranks : {2, 3}) {
      SCOPED_TRACE(fmt::format("{} {} on {} ranks", kind, order, ranks));
      expect_many_ranks_equal_one(dir, path, ranks);
    }
  }
}

TEST(MpiReference, APartitionedFileIsReadBySlicesAndGivesTheSameFile) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 4, "random");
  const std::string partitioned = dir.file("parts3.h5");
  const CommandResult partition = run_fluxjac(fmt::format("mesh partition '{}' --parts 3 -o '{}'", path, partitioned));
  ASSERT_EQ(partition.exit_code, 0) << partition.output;
  const CommandResult result = run_fluxjac_mpi(3, fmt::format("run --mesh '{}' --threads 1", partitioned));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("each of 3 ranks its own slices"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("edge cut"), std::string::npos) << result.output;
  expect_many_ranks_equal_one(dir, partitioned, 3);
}

TEST(MpiReference, DisconnectedPiecesAndMoreRanksThanUsefulPartsStillEqualOneProcess) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  // Two boxes with no edge between them.
  GeneratedMesh first = test::generate_mesh("tet", 1, "natural");
  const GeneratedMesh second = test::generate_mesh("prism", 1, "natural");
  const auto offset = static_cast<node_index>(first.mesh.n_nodes);
  for (const node_index node : second.mesh.edges) first.mesh.edges.push_back(node + offset);
  first.mesh.normals.insert(first.mesh.normals.end(), second.mesh.normals.begin(), second.mesh.normals.end());
  first.mesh.areas.insert(first.mesh.areas.end(), second.mesh.areas.begin(), second.mesh.areas.end());
  first.mesh.coords.insert(first.mesh.coords.end(), second.mesh.coords.begin(), second.mesh.coords.end());
  first.mesh.volumes.insert(first.mesh.volumes.end(), second.mesh.volumes.begin(), second.mesh.volumes.end());
  first.state.Q.insert(first.state.Q.end(), second.state.Q.begin(), second.state.Q.end());
  first.mesh.n_nodes += second.mesh.n_nodes;
  const std::string path = dir.file("pieces.h5");
  write_edge_mesh(path, first.mesh, &first.state);
  expect_many_ranks_equal_one(dir, path, 3);

  // A mesh of 8 nodes on 5 ranks: parts of a node or two, some ranks owning nothing at all may follow.
  const std::string tiny = write_generated(dir, "tet", 1, "natural");
  expect_many_ranks_equal_one(dir, tiny, 5);
}

TEST(MpiReference, AStoredReferenceIsReadByRowsAndValidates) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 3, "rcm");
  const std::string stored = dir.file("ref.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, stored)).exit_code, 0);
  const CommandResult result =
      run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --reference '{}' --threads 1", path, stored));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("each rank its own rows"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;

  // A Jacobian of another mesh: one clear error from every rank, exit code 2.
  const std::string other = write_generated(dir, "tet", 3, "rcm");
  const CommandResult wrong =
      run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --reference '{}' --threads 1", other, stored));
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_EQ(count_lines(wrong.output, "fluxjac: error (rank"), 2u) << wrong.output;
}

TEST(MpiBench, RecordsCarryTheRanksTheHaloAndThePartition) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 4, "rcm");
  const std::string json = dir.file("bench.json"), csv = dir.file("bench.csv");
  const CommandResult result = run_fluxjac_mpi(
      2, fmt::format("bench --mesh '{}' --variant reference --reps 3 --warmup 1 --threads 1 --json '{}' --csv '{}'",
                     path, json, csv));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("halo ms"), std::string::npos) << "the table shows the halo exchange: " << result.output;
  std::ifstream in(json);
  const nlohmann::json document = nlohmann::json::parse(in);
  const nlohmann::json& run = document.at("runs").at(0);
  EXPECT_EQ(run.at("ranks"), 2);
  const nlohmann::json& parallel = run.at("parallel");
  EXPECT_EQ(parallel.at("halo_transport"), "MPI");
  EXPECT_GT(parallel.at("halo_ms").at("median").get<double>(), 0.0);
  EXPECT_GT(parallel.at("partition").at("edge_cut").get<int>(), 0);
  EXPECT_LE(parallel.at("rank_assembly_ms").at("min").get<double>(),
            parallel.at("rank_assembly_ms").at("max").get<double>());
  EXPECT_TRUE(run.at("validation").at("passed").get<bool>());
  std::ifstream csv_in(csv);
  std::string header;
  std::getline(csv_in, header);
  EXPECT_NE(header.find("ranks,halo_median_ms"), std::string::npos) << header;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(MpiBench, StrongScalingRunsEveryRankCountOnTheSameMeshWithItsEfficiency) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 4, "rcm"), json = dir.file("strong.json");
  const CommandResult result = run_fluxjac_mpi(
      2, fmt::format("bench --mesh '{}' --variant reference --reps 2 --warmup 0 --threads 1 --ranks 1,2 --scaling "
                     "strong --json '{}'",
                     path, json));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json runs = read_json(json).at("runs");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].at("ranks"), 1);
  EXPECT_EQ(runs[1].at("ranks"), 2);
  EXPECT_EQ(runs[0].at("n_edges"), runs[1].at("n_edges"));
  EXPECT_DOUBLE_EQ(runs[0].at("parallel").at("efficiency").get<double>(), 1.0);
  const double t1 = runs[0].at("assembly_ms").at("median"), t2 = runs[1].at("assembly_ms").at("median");
  EXPECT_DOUBLE_EQ(runs[1].at("parallel").at("efficiency").get<double>(), t1 / (2 * t2));
  const double halo = runs[1].at("parallel").at("halo_ms").at("median");
  EXPECT_NEAR(runs[1].at("parallel").at("efficiency_with_halo").get<double>(), t1 / (2 * (t2 + halo)), 1e-12);
  EXPECT_EQ(runs[1].at("parallel").at("scaling"), "strong");
}

TEST(MpiBench, WeakScalingGrowsTheGeneratedMeshWithTheRanks) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string json = dir.file("weak.json");
  const CommandResult result = run_fluxjac_mpi(
      2, fmt::format("bench --mesh tet:3:rcm --cache '{}' --variant reference --reps 2 --warmup 0 --threads 1 --ranks "
                     "1,2 --scaling weak --json '{}'",
                     dir.file("cache"), json));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json runs = read_json(json).at("runs");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].at("mesh"), "tet:3:rcm");
  EXPECT_EQ(runs[1].at("mesh"), "tet:4:rcm") << "3 times the cube root of 2, rounded";
  const double per_gpu_1 = runs[0].at("parallel").at("ns_per_edge_per_gpu");
  const double per_gpu_2 = runs[1].at("parallel").at("ns_per_edge_per_gpu");
  EXPECT_NEAR(runs[1].at("parallel").at("efficiency").get<double>(), per_gpu_1 / per_gpu_2, 1e-12);
}

TEST(MpiBench, RankCountsBeyondTheJobAndScalingWithoutOneRankAreUsageErrors) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  const CommandResult beyond = run_fluxjac_mpi(2, fmt::format("bench --mesh '{}' --variant reference --ranks 4", path));
  EXPECT_EQ(beyond.exit_code, 3) << beyond.output;
  EXPECT_NE(beyond.output.find("mpirun -np 4"), std::string::npos) << beyond.output;
  const CommandResult no_one =
      run_fluxjac_mpi(2, fmt::format("bench --mesh '{}' --variant reference --ranks 2 --scaling strong", path));
  EXPECT_EQ(no_one.exit_code, 3) << no_one.output;
  EXPECT_NE(no_one.output.find("include 1"), std::string::npos) << no_one.output;
}

TEST(MpiBadInput, AFilePartitionedForAnotherRankCountFailsOnEveryRankAndWritesNothing) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm");
  const std::string partitioned = dir.file("parts3.h5"), output = dir.file("J.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("mesh partition '{}' --parts 3 -o '{}'", path, partitioned)).exit_code, 0);
  const CommandResult result = run_fluxjac_mpi(2, fmt::format("run --mesh '{}' -o '{}'", partitioned, output));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), 2u) << result.output;
  EXPECT_NE(result.output.find("partitioned into 3 parts"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(MpiBadInput, MoreRanksThanNodesFailsOnEveryRankAndWritesNothing) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  // Three nodes, two edges.
  EdgeMesh mesh;
  mesh.n_nodes = 3;
  mesh.edges = {0, 1, 1, 2};
  mesh.normals = {1, 0, 0, 0, 1, 0};
  mesh.areas = {0.5, 0.25};
  FlowState state;
  for (int node = 0; node < 3; ++node) state.Q.insert(state.Q.end(), {1.0, 0.1, 0.0, 0.0, 2.5});
  const std::string path = dir.file("three.h5"), output = dir.file("J.h5");
  write_edge_mesh(path, mesh, &state);
  const CommandResult result = run_fluxjac_mpi(4, fmt::format("run --mesh '{}' --threads 1 -o '{}'", path, output));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), 4u) << result.output;
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(MpiBadInput, AnOutputOverAnInputIsRefusedOnEveryRankAndTheInputKept) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  const auto before = std::filesystem::file_size(path);
  const CommandResult result = run_fluxjac_mpi(2, fmt::format("run --mesh '{}' -o '{}'", path, path));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), 2u) << result.output;
  EXPECT_EQ(std::filesystem::file_size(path), before);
  EXPECT_NO_THROW(read_edge_mesh(path));
}

TEST(MpiBadInput, AnErrorOnlyOneRankSeesEndsTheJobInsteadOfHangingIt) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  // Two programs in one job (MPMD): rank 1 refuses its options alone while rank 0 goes on to read the mesh with it.
  const std::string executable = std::string("'") + FLUXJAC_EXECUTABLE + "'";
  const CommandResult result = test::run_command(fmt::format(
      "FLUXJAC_EXIT_PATIENCE_SECONDS=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 timeout 120 '{}' -np 1 {} "
      "run --mesh '{}' --threads 1 -q : -np 1 {} run --mesh '{}' --reps 0 -q",
      test::mpiexec_path(), executable, path, executable, path));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("--reps 0"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("did not finish within 2 s"), std::string::npos) << result.output;
}

TEST(MpiBadInput, CommandsOtherThanRunAndBenchSayToRunWithoutMpirun) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const CommandResult result = run_fluxjac_mpi(2, fmt::format("mesh gen --kind tet --n 2 -o '{}'", dir.file("m.h5")));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("without mpirun"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.h5")));
}

}  // namespace
}  // namespace fluxjac
