// ctest-label: cli
// Many ranks on the CPU (docs/design.md, "Many GPUs"): `mpirun -np 2` and `-np 3` runs of the CPU reference write
// the same Jacobian file as one process, bit for bit, whether the mesh is partitioned on the fly by METIS or read by
// slices from a partitioned file; meshes with disconnected pieces and with more ranks than parts can usefully hold; a
// stored reference read by rows; bench records with the parallel figures; bad input refused on every rank with
// nothing written; ranks started with different commands or files (two-program jobs, `mpirun A : B`) refused before
// any work, an input replaced while the ranks start giving one version's Jacobian or a refusal, never a mix, and a
// failure on one rank (a report it cannot write, a file-size limit) ending the job at once. Every such test skips
// with a message in a build without MPI. One process is the one-rank case of the same layout
// (RankLayout::whole_mesh): tested in process, in every build, against the whole-matrix functions.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "bench/run_case.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/ordering.hpp"
#include "part/owned_rows.hpp"
#include "partition/partition.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::count_lines;
using test::expect_same_file;
using test::run_fluxjac;
using test::run_fluxjac_mpi;
using test::TempDir;

#define SKIP_WITHOUT_METIS() \
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS (install libmetis-dev and rebuild): skipped"

/// Writes a generated mesh with its state.
std::string write_generated(const TempDir& dir, const std::string& kind, int n, const std::string& order) {
  const GeneratedMesh generated = test::generate_mesh(kind, n, order);
  const std::string path = dir.file(fmt::format("{}-{}-{}.h5", kind, n, order));
  write_edge_mesh(path, generated.mesh, &generated.state);
  return path;
}

/// Serial and many-rank runs of the reference on path, with --output and `options`, compared bit for bit.
void expect_many_ranks_equal_one(const TempDir& dir, const std::string& path, int ranks,
                                 const std::string& options = "") {
  const std::string serial = dir.file("serial.h5"), many = dir.file(fmt::format("ranks{}.h5", ranks));
  std::filesystem::remove(serial);
  std::filesystem::remove(many);
  const CommandResult one =
      run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}' {}", path, serial, options));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const CommandResult result =
      run_fluxjac_mpi(ranks, fmt::format("run --mesh '{}' --threads 1 -q -o '{}' {}", path, many, options));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;
  expect_same_file(serial, many);
}

// ---- one process: the whole mesh's layout, through the same functions as many ranks -----------------------------

TEST(WholeMeshLayout, OwnsEveryNodeUnderItsFileIdAndStoresNothingPerNode) {
  const RankLayout layout = RankLayout::whole_mesh(7, 12);
  EXPECT_TRUE(layout.is_whole_mesh());
  EXPECT_EQ(layout.global_nodes, 7);
  EXPECT_EQ(layout.global_edges, 12);
  EXPECT_EQ(layout.owned_count(), 7);
  EXPECT_EQ(layout.local_count(), 7);
  for (node_index node = 0; node < 7; ++node) {
    EXPECT_EQ(layout.owned_node(node), node);
    EXPECT_EQ(layout.global_id(node), node);
  }
  EXPECT_TRUE(layout.global_node.empty() && layout.owned_nodes.empty() && layout.owned_row_start.empty());
  EXPECT_TRUE(layout.halo.peers.empty() && layout.halo.send_nodes.empty() && layout.halo.receive_nodes.empty());
  EXPECT_EQ(layout.owned_mask(), std::vector<std::uint8_t>(7, 1));
  EXPECT_EQ(layout.owned_runs(), (std::vector<std::pair<node_index, node_index>>{{0, 7}}));
  // One rank, nothing cut, no ghosts, balanced: what a single process has always reported.
  const PartitionRecord record = record_partition(Communicator::world(), layout);
  const PartitionStatistics& summary = record.statistics;
  EXPECT_EQ(std::make_tuple(record.ranks(), summary.edge_cut, summary.ghosts_min(), summary.ghosts_max(),
                            summary.total_ghosts, summary.edge_imbalance, summary.node_imbalance),
            std::make_tuple(1, std::int64_t{0}, std::int64_t{0}, std::int64_t{0}, std::int64_t{0}, 1.0, 1.0));
}

TEST(WholeMeshLayout, APartLayoutOwnsItsListedNodesInRunsOfConsecutiveIds) {
  RankLayout layout;
  layout.global_nodes = 40;
  layout.global_node = {3, 4, 9, 10, 11, 20, 21};  // local ids 0..6
  layout.owned_nodes = {0, 1, 3, 5, 6};            // 2 and 4 are ghosts
  EXPECT_FALSE(layout.is_whole_mesh());
  EXPECT_EQ(layout.owned_count(), 5);
  EXPECT_EQ(layout.local_count(), 7);
  EXPECT_EQ(layout.owned_node(2), 3);
  EXPECT_EQ(layout.global_id(3), 10);
  EXPECT_EQ(layout.owned_mask(), (std::vector<std::uint8_t>{1, 1, 0, 1, 0, 1, 1}));
  EXPECT_EQ(layout.owned_runs(), (std::vector<std::pair<node_index, node_index>>{{0, 2}, {3, 4}, {5, 7}}));
}

TEST(WholeMeshLayout, OneProcessPreparesTheWholeMeshWithTheSummaryOfTheWholeMeshFunctions) {
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 3, "random");
  std::vector<std::string> lines;
  const PreparedMesh prepared = prepare_mesh("box", PartSource{path, "", std::nullopt, false}, "",
                                             [&lines](const std::string& line) { lines.push_back(line); });
  EXPECT_TRUE(prepared.layout.is_whole_mesh());
  EXPECT_EQ(prepared.comm, &Communicator::world());
  const EdgeMesh whole = read_edge_mesh(path);
  EXPECT_EQ(prepared.mesh.edges, whole.edges);
  EXPECT_EQ(prepared.summary.n_nodes, whole.n_nodes);
  EXPECT_EQ(prepared.summary.n_edges, whole.n_edges());
  EXPECT_EQ(prepared.summary.n_offdiag_blocks, prepared.pattern.nnz());
  EXPECT_EQ(prepared.summary.ordering_bandwidth, ordering_bandwidth(whole));
  EXPECT_EQ(prepared.summary.mean_edge_span, mean_edge_span(whole));  // the same sum in the same order
  EXPECT_EQ(prepared.partition.ranks(), 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(fmt::format("{} nodes, {} edges", whole.n_nodes, whole.n_edges())), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("block-CSR pattern"), std::string::npos) << lines[1];
}

TEST(OwnedRows, OnTheWholeMeshTheComparisonIsThatOfTheWholeMatrices) {
  const test::AssembledMesh assembled = test::assemble_generated("prism", 2, "rcm");
  const JacobianPattern& pattern = assembled.pattern;
  const RankLayout layout = RankLayout::whole_mesh(pattern.n_nodes, assembled.generated.mesh.n_edges());
  const Communicator& one = Communicator::world();
  const auto expect_same = [&](const Jacobian& result, const Jacobian& reference) {
    const Comparison whole = compare_jacobians(pattern, result, pattern, reference);
    const Comparison owned = compare_owned_rows(one, layout, pattern, result, reference, Tolerances{});
    EXPECT_EQ(owned.same_pattern, whole.same_pattern);
    EXPECT_EQ(owned.pattern_message, whole.pattern_message);
    EXPECT_EQ(owned.adiag_error, whole.adiag_error);
    EXPECT_EQ(owned.aoff_error, whole.aoff_error);
    EXPECT_EQ(owned.passed, whole.passed);
  };
  const Jacobian& reference = assembled.reference;
  expect_same(reference, reference);
  Jacobian perturbed = reference;
  perturbed.adiag[17] *= 1.0 + 1e-9;
  perturbed.aoff.back() *= 1.01f;
  expect_same(perturbed, reference);
  perturbed.aoff[3] = std::numeric_limits<float>::quiet_NaN();
  expect_same(perturbed, reference);
  expect_same(Jacobian{}, reference);  // nothing assembled: the size message, no value errors
  expect_same(reference, Jacobian{});
}

TEST(OwnedRows, APartLayoutComparesAndWritesOnlyItsOwnedRowsInFileNumbering) {
  const test::AssembledMesh assembled = test::assemble_generated("tet", 1);
  const JacobianPattern& pattern = assembled.pattern;
  RankLayout layout;  // local ids = file ids, nodes 0 to 3 owned, the others ghosts
  layout.global_nodes = pattern.n_nodes;
  for (node_index node = 0; node < pattern.n_nodes; ++node) layout.global_node.push_back(node);
  layout.owned_nodes = {0, 1, 2, 3};
  for (const node_index node : layout.owned_nodes) layout.owned_row_start.push_back(pattern.row_ptr[node]);
  const Jacobian& reference = assembled.reference;

  Jacobian ghost_changed = reference;
  ghost_changed.adiag.back() += 1.0;  // the last node's row is a ghost's
  ghost_changed.aoff.back() += 1.0f;
  const Communicator& one = Communicator::world();
  const Comparison ghosts = compare_owned_rows(one, layout, pattern, ghost_changed, reference, Tolerances{});
  EXPECT_TRUE(ghosts.passed);
  EXPECT_EQ(ghosts.adiag_error, 0.0);
  EXPECT_EQ(ghosts.aoff_error, 0.0);
  Jacobian owned_changed = reference;
  owned_changed.adiag[3 * kBlockEntries] += 1.0;  // node 3 is owned
  EXPECT_FALSE(compare_owned_rows(one, layout, pattern, owned_changed, reference, Tolerances{}).passed);

  const JacobianRows rows = owned_rows(layout, pattern, reference);
  EXPECT_EQ(rows.rows, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(rows.block_start, layout.owned_row_start);
  ASSERT_EQ(rows.local_ptr.back(), pattern.row_ptr[4]);
  EXPECT_TRUE(std::equal(rows.columns.begin(), rows.columns.end(), pattern.col_idx.begin()));
  EXPECT_TRUE(std::equal(rows.aoff.begin(), rows.aoff.end(), reference.aoff.begin()));
}

TEST(OwnedRows, OneProcessWritesTheFileOfWriteJacobianAndReadsItBackWhole) {
  const TempDir dir;
  const test::AssembledMesh assembled = test::assemble_generated("mixed", 2, "rcm");
  const JacobianPattern& pattern = assembled.pattern;
  const RankLayout layout = RankLayout::whole_mesh(pattern.n_nodes, assembled.generated.mesh.n_edges());
  const Communicator& one = Communicator::world();
  const JacobianFileInfo info{"reference", "m.h5", "m.h5", "test"};
  const std::string owned = dir.file("owned.h5"), whole = dir.file("whole.h5");
  write_owned_rows(one, owned, layout, pattern, assembled.reference, info);
  write_jacobian(whole, pattern, assembled.reference, info);
  expect_same_file(whole, owned);

  std::vector<std::string> lines;
  const StoredRows stored =
      read_owned_rows(one, owned, layout, pattern, [&lines](const std::string& line) { lines.push_back(line); });
  EXPECT_TRUE(stored.pattern_difference.empty()) << stored.pattern_difference;
  EXPECT_TRUE(test::bitwise_equal(stored.jacobian.adiag, assembled.reference.adiag));
  EXPECT_TRUE(test::bitwise_equal(stored.jacobian.aoff, assembled.reference.aoff));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("reference: " + owned), std::string::npos) << lines[0];

  // Another mesh's Jacobian: the first difference of the patterns, and no values.
  const test::AssembledMesh other = test::assemble_generated("tet", 3);
  const StoredRows wrong = read_owned_rows(
      one, owned, RankLayout::whole_mesh(other.pattern.n_nodes, other.generated.mesh.n_edges()), other.pattern, {});
  EXPECT_NE(wrong.pattern_difference.find("node counts differ"), std::string::npos) << wrong.pattern_difference;
  EXPECT_TRUE(wrong.jacobian.adiag.empty());
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

/// The adjoint orientation: each rank writes the rows of A^T it owns (they hold only its own edges' blocks).
TEST(MpiReference, TheAdjointOrientationOnTwoAndThreeRanksEqualsOneProcessBitForBit) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  for (const auto& [kind, order] :
       std::vector<std::pair<std::string, std::string>>{{"mixed", "random"}, {"tet", "rcm"}}) {
    const std::string path = write_generated(dir, kind, 4, order);
    for (const int ranks : {2, 3}) {
      SCOPED_TRACE(fmt::format("{} {} on {} ranks, A^T", kind, order, ranks));
      expect_many_ranks_equal_one(dir, path, ranks, "--transpose");
      EXPECT_EQ(read_jacobian(dir.file(fmt::format("ranks{}.h5", ranks))).info.orientation, Orientation::kTransposed);
    }
  }
}

TEST(MpiReference, AStoredReferenceOfTheOtherOrientationIsRefusedOnEveryRank) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "mixed", 3, "rcm");
  const std::string of_a = dir.file("a.h5"), of_transpose = dir.file("at.h5"), output = dir.file("out.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, of_a)).exit_code, 0);
  ASSERT_EQ(
      run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q --transpose -o '{}'", path, of_transpose)).exit_code, 0);
  const CommandResult same =
      run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --transpose --reference '{}' --threads 1", path, of_transpose));
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("PASS"), std::string::npos) << same.output;
  const CommandResult wrong = run_fluxjac_mpi(
      2, fmt::format("run --mesh '{}' --transpose --reference '{}' --threads 1 -o '{}'", path, of_a, output));
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_EQ(count_lines(wrong.output, "holds the Jacobian in orientation A, and this run assembles A^T"), 2u)
      << wrong.output;
  EXPECT_FALSE(std::filesystem::exists(output));
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
  test::append_piece(first, second);
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
  // Under mpirun every rank count's mesh is generated in parts, the one-rank case's too: no file in the cache, and
  // each case records its generation steps with every rank's time and peak memory.
  EXPECT_FALSE(std::filesystem::exists(dir.file("cache"))) << "a one-rank case under mpirun wrote a mesh file";
  EXPECT_EQ(runs[0].at("parallel").at("partition").at("source"), "box generated whole by one rank, rcm order");
  EXPECT_NE(runs[1].at("parallel").at("partition").at("source").get<std::string>().find("2 parts"), std::string::npos);
  for (const auto& run : runs) {
    const nlohmann::json& steps = run.at("parallel").at("partition").at("steps");
    ASSERT_EQ(steps.size(), 5u) << run.dump();
    EXPECT_EQ(steps[0].at("step"), "nodes and cells");
    EXPECT_GT(steps.back().at("peak_bytes").at("max").get<double>(), 0.0);
  }
}

TEST(MpiBench, AOneRankCaseUnderMpirunRecordsItsGenerationSteps) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string json = dir.file("one.json");
  const CommandResult result = run_fluxjac_mpi(
      2,
      fmt::format("bench --mesh mixed:4:rcm --cache '{}' --variant reference --reps 1 --warmup 0 --threads 1 --ranks "
                  "1 --no-validate --json '{}'",
                  dir.file("cache"), json));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json run = read_json(json).at("runs").at(0);
  EXPECT_EQ(run.at("ranks"), 1);
  ASSERT_TRUE(run.at("parallel").is_object()) << run.dump();
  EXPECT_EQ(run.at("parallel").at("partition").at("source"), "box generated whole by one rank, rcm order");
  EXPECT_EQ(run.at("parallel").at("partition").at("steps").size(), 5u);
  EXPECT_FALSE(std::filesystem::exists(dir.file("cache")));
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

TEST(MpiBadInput, AJacobianThatCannotBeWrittenIsNamedInTheFilesNumberingAsOneProcessNamesIt) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  GeneratedMesh generated = test::generate_mesh("tet", 4, "rcm");
  // One edge late in the file whose area takes its Aoff blocks past float32 (Adiag, float64, still holds them): a
  // rank's own index of the first such block differs from the file's.
  generated.mesh.areas[generated.mesh.areas.size() * 2 / 3] *= 1e45;
  const std::string path = dir.file("m.h5"), output = dir.file("J.h5");
  write_edge_mesh(path, generated.mesh, &generated.state);
  const CommandResult one = run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, output));
  ASSERT_EQ(one.exit_code, 2) << one.output;
  const std::size_t at = one.output.find("/jacobian/aoff[");
  ASSERT_NE(at, std::string::npos) << one.output;
  const std::string named = one.output.substr(at, one.output.find(']', at) + 1 - at);
  ASSERT_NE(named, "/jacobian/aoff[0]") << one.output;
  for (const int ranks : {2, 3}) {
    const CommandResult result =
        run_fluxjac_mpi(ranks, fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, output));
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), static_cast<std::size_t>(ranks)) << result.output;
    EXPECT_EQ(count_lines(result.output, named + ": entry"), static_cast<std::size_t>(ranks))
        << "one process names " << named << "\n"
        << result.output;
    EXPECT_FALSE(std::filesystem::exists(output));
  }
}

// ---- ranks agree before they work; a failure on one rank ends the job at once ------------------------------------

/// One rank of a two-program job: its fluxjac arguments, and optionally a working directory and shell commands run
/// before it (e.g. a ulimit of that rank alone).
struct RankProgram {
  RankProgram(std::string args_, std::string directory_ = {}, std::string setup_ = {})
      : args(std::move(args_)), directory(std::move(directory_)), setup(std::move(setup_)) {}
  std::string args;
  std::string directory;
  std::string setup;
};

/// What a job of several programs gave, and how long it took.
struct JobResult {
  CommandResult result;
  double seconds = 0;
};

/// Runs `mpirun -np 1 A : -np 1 B ...` (MPMD), one rank per program, with the exit patience left at its default
/// (60 s): a rank left waiting shows as a job that takes that long.
JobResult run_programs(const std::vector<RankProgram>& programs) {
  const std::string executable = std::string("'") + FLUXJAC_EXECUTABLE + "'";
  std::string command = test::mpirun_environment_prefix() + "timeout 120 '" + test::mpiexec_path() + "'";
  for (std::size_t k = 0; k < programs.size(); ++k) {
    const RankProgram& program = programs[k];
    command += (k == 0 ? " -np 1" : " : -np 1");
    if (!program.directory.empty()) command += " --wdir '" + program.directory + "'";
    command += program.setup.empty()
                   ? " " + executable + " " + program.args
                   : " bash -c \"" + program.setup + "; exec " + executable + " " + program.args + "\"";
  }
  const auto start = std::chrono::steady_clock::now();
  JobResult job;
  job.result = test::run_command(command);
  job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return job;
}

/// A refused job: the exit code, one `fluxjac: error` line per rank with the fragment, well within the exit
/// patience, and no file written in dir.
void expect_refused(const JobResult& job, int exit_code, const std::string& fragment, const TempDir& dir,
                    std::size_t ranks = 2) {
  const CommandResult& result = job.result;
  EXPECT_EQ(result.exit_code, exit_code) << result.output;
  EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), ranks) << result.output;
  EXPECT_EQ(count_lines(result.output, fragment), ranks) << "every rank names it: " << result.output;
  EXPECT_LT(job.seconds, 30.0) << "the job ended only after " << job.seconds << " s: " << result.output;
  for (const std::string name : {"J.h5", "r.json", "r.csv"})
    EXPECT_FALSE(std::filesystem::exists(dir.file(name))) << name << " written: " << result.output;
}

std::size_t files_in(const TempDir& dir) {
  const std::filesystem::directory_iterator entries(dir.path());
  return static_cast<std::size_t>(std::distance(begin(entries), end(entries)));
}

TEST(MpiAgreement, DifferentRepsOrWarmupAreRefusedOnEveryRankBeforeAnyWork) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm"), output = dir.file("J.h5");
  const JobResult reps = run_programs({{fmt::format("run --mesh '{}' --reps 5 -q -o '{}'", path, output)},
                                       {fmt::format("run --mesh '{}' --reps 3 -q -o '{}'", path, output)}});
  expect_refused(reps, 3, "ranks disagree on --reps: rank 0 has 5, rank 1 has 3", dir);
  const JobResult warmup =
      run_programs({{fmt::format("run --mesh '{}' --warmup 0 -q", path)}, {fmt::format("run --mesh '{}' -q", path)}});
  expect_refused(warmup, 3, "ranks disagree on --warmup: rank 0 has 0, rank 1 has 2", dir);
  // An option only one rank refuses (--reps 0) is a disagreement too, found before either rank reads the mesh.
  const JobResult invalid =
      run_programs({{fmt::format("run --mesh '{}' -q", path)}, {fmt::format("run --mesh '{}' --reps 0 -q", path)}});
  expect_refused(invalid, 3, "rank 1 has 0", dir);
  EXPECT_EQ(invalid.result.output.find("read "), std::string::npos) << invalid.result.output;
}

TEST(MpiAgreement, TransposeOnOneRankOnlyIsRefused) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm"), output = dir.file("J.h5");
  const JobResult job = run_programs({{fmt::format("run --mesh '{}' -q --transpose -o '{}'", path, output)},
                                      {fmt::format("run --mesh '{}' -q -o '{}'", path, output)}});
  expect_refused(job, 3, "ranks disagree on --transpose: rank 0 has true, rank 1 has", dir);
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(MpiAgreement, RunOnOneRankAndBenchOnTheOtherIsRefused) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  const JobResult job = run_programs({{fmt::format("run --mesh '{}' -q", path)},
                                      {fmt::format("bench --mesh '{}' --json '{}'", path, dir.file("r.json"))}});
  expect_refused(job, 3, "ranks disagree on the command: rank 0 has fluxjac run, rank 1 has fluxjac bench", dir);
}

TEST(MpiAgreement, OutputOrNoValidateOnOneRankOnlyIsRefused) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  const JobResult output = run_programs(
      {{fmt::format("run --mesh '{}' -q -o '{}'", path, dir.file("J.h5"))}, {fmt::format("run --mesh '{}' -q", path)}});
  expect_refused(output, 3, "ranks disagree on --output:", dir);
  EXPECT_NE(output.result.output.find("rank 1 has not given"), std::string::npos) << output.result.output;
  const JobResult validation = run_programs(
      {{fmt::format("run --mesh '{}' -q", path)}, {fmt::format("run --mesh '{}' -q --no-validate", path)}});
  expect_refused(validation, 3, "ranks disagree on --validate/--no-validate", dir);
  // The JSON and CSV reports, which only rank 0 writes, and an option of the second rank alone.
  const JobResult json = run_programs({{fmt::format("bench --mesh '{}' --json '{}'", path, dir.file("r.json"))},
                                       {fmt::format("bench --mesh '{}' --csv '{}'", path, dir.file("r.csv"))}});
  expect_refused(json, 3, "ranks disagree on --csv", dir);
}

TEST(MpiAgreement, DifferentMeshOrStateFilesAreRefusedAndNoMixedJacobianIsWritten) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  // The same mesh with another state, as its own file and as a --state file.
  const GeneratedMesh generated = test::generate_mesh("tet", 3, "rcm");
  FlowState other = generated.state;
  for (double& q : other.Q) q *= 1.01;
  const std::string mesh = dir.file("m.h5"), other_mesh = dir.file("m-other-state.h5"), state = dir.file("s.h5");
  write_edge_mesh(mesh, generated.mesh, &generated.state);
  write_edge_mesh(other_mesh, generated.mesh, &other);
  write_flow_state(state, other);
  const std::string output = dir.file("J.h5");
  const JobResult meshes = run_programs({{fmt::format("run --mesh '{}' -q -o '{}'", mesh, output)},
                                         {fmt::format("run --mesh '{}' -q -o '{}'", other_mesh, output)}});
  expect_refused(meshes, 3, "ranks disagree on --mesh", dir);
  const JobResult states =
      run_programs({{fmt::format("run --mesh '{}' -q -o '{}'", mesh, output)},
                    {fmt::format("run --mesh '{}' --state '{}' -q -o '{}'", mesh, state, output)}});
  expect_refused(states, 3, "ranks disagree on --state", dir);
}

TEST(MpiAgreement, TheSameNameInOtherFoldersIsAnotherFile) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  // Each rank in its own working directory, each with its m.h5 of the same mesh but another state.
  const GeneratedMesh generated = test::generate_mesh("tet", 2, "rcm");
  FlowState other = generated.state;
  for (double& q : other.Q) q *= 1.01;
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  write_edge_mesh(dir.file("a/m.h5"), generated.mesh, &generated.state);
  write_edge_mesh(dir.file("b/m.h5"), generated.mesh, &other);
  const JobResult job = run_programs({{"run --mesh m.h5 -q", dir.file("a")}, {"run --mesh m.h5 -q", dir.file("b")}});
  expect_refused(job, 2, "ranks disagree on the file of --mesh m.h5: rank 0 sees ", dir);
  // The same names, relative to other folders, for the output: the ranks would write different files.
  const std::string mesh = dir.file("a/m.h5");
  const JobResult output = run_programs({{fmt::format("run --mesh '{}' -q -o J.h5", mesh), dir.file("a")},
                                         {fmt::format("run --mesh '{}' -q -o J.h5", mesh), dir.file("b")}});
  expect_refused(output, 3, "ranks disagree on where --output J.h5 is written", dir);
  EXPECT_FALSE(std::filesystem::exists(dir.file("a/J.h5")) || std::filesystem::exists(dir.file("b/J.h5")));
}

TEST(MpiAgreement, FilesPartitionedForDifferentCountsAreRefusedWithoutACrash) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm");
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  for (const auto& [parts, file] : {std::pair{2, dir.file("p2.h5")}, std::pair{3, dir.file("p3.h5")},
                                    std::pair{2, dir.file("a/p.h5")}, std::pair{3, dir.file("b/p.h5")}})
    ASSERT_EQ(run_fluxjac(fmt::format("mesh partition '{}' --parts {} -o '{}'", path, parts, file)).exit_code, 0);
  const std::string output = dir.file("J.h5");
  const JobResult named = run_programs({{fmt::format("run --mesh '{}' -q -o '{}'", dir.file("p2.h5"), output)},
                                        {fmt::format("run --mesh '{}' -q -o '{}'", dir.file("p3.h5"), output)}});
  expect_refused(named, 3, "ranks disagree on --mesh", dir);
  EXPECT_EQ(named.result.output.find("Segmentation"), std::string::npos) << named.result.output;
  const JobResult same_name = run_programs({{fmt::format("run --mesh p.h5 -q -o '{}'", output), dir.file("a")},
                                            {fmt::format("run --mesh p.h5 -q -o '{}'", output), dir.file("b")}});
  expect_refused(same_name, 2, "ranks disagree on the file of --mesh p.h5", dir);
}

// ---- an input replaced while the ranks start: one version's Jacobian or a refusal, never a mix -------------------

/// Multiplies a mesh file's /state/Q by factor where it is stored: the file keeps its layout and its size.
void scale_state_in_place(const std::string& path, double factor) {
  h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
  const h5::DatasetInfo info = h5::describe_dataset(file, "/state/Q");
  std::vector<double> values = h5::read<double>(file, info);
  for (double& value : values) value *= factor;
  h5::write_rows(file, "/state/Q", {{0, info.shape.front()}}, values);
  file.close();
}

/// Whether two Jacobian files hold the same pattern and the same Adiag and Aoff bytes.
bool same_jacobian(const std::string& a, const std::string& b) {
  const StoredJacobian first = read_jacobian(a), second = read_jacobian(b);
  return first.pattern.row_ptr == second.pattern.row_ptr && first.pattern.col_idx == second.pattern.col_idx &&
         test::bitwise_equal(first.jacobian.adiag, second.jacobian.adiag) &&
         test::bitwise_equal(first.jacobian.aoff, second.jacobian.aoff);
}

/// Renames fresh copies of two versions of a file, in turn, over target until destroyed, each copy a whole new file
/// given the first version's modification time: path, size and time then agree, and only the inode tells the
/// versions apart. Without a pause the file changes many times while a rank opens it; a pause of some milliseconds
/// lets most runs see one version throughout.
class Replacer {
 public:
  Replacer(std::string first, std::string second, std::string target, std::chrono::microseconds pause)
      : thread_([this, first, second, target, pause] { replace(first, second, target, pause); }) {}
  ~Replacer() {
    stop_ = true;
    thread_.join();
  }
  Replacer(const Replacer&) = delete;
  Replacer& operator=(const Replacer&) = delete;

 private:
  void replace(const std::string& first, const std::string& second, const std::string& target,
               std::chrono::microseconds pause) {
    struct stat status {};
    if (::stat(first.c_str(), &status) != 0) return;
    const struct timespec times[2] = {status.st_atim, status.st_mtim};
    const std::string staging = target + ".staging";
    for (std::size_t count = 0; !stop_; ++count) {
      std::error_code ignored;
      std::filesystem::copy_file(count % 2 == 0 ? second : first, staging,
                                 std::filesystem::copy_options::overwrite_existing, ignored);
      ::utimensat(AT_FDCWD, staging.c_str(), times, 0);
      std::filesystem::rename(staging, target, ignored);
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
  }
  std::atomic<bool> stop_{false};
  std::thread thread_;  // declared last: it starts once stop_ is set up
};

/// Runs `mpirun -np 2 fluxjac run` on race.h5, started as a copy of `first`, while a Replacer renames copies of
/// `first` and `second` over it (every other try with pauses), and expects each try to be refused (exit 2, one line
/// per rank saying why, no output) or to write the Jacobian of one version, bit for bit as one process gives it.
void expect_one_version_or_refusal(const TempDir& dir, const std::string& first, const std::string& second) {
  constexpr int kTries = 8;
  const std::string first_jacobian = dir.file("J-first.h5"), second_jacobian = dir.file("J-second.h5");
  for (const auto& [mesh, jacobian] : {std::pair{first, first_jacobian}, std::pair{second, second_jacobian}}) {
    const CommandResult one = run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", mesh, jacobian));
    ASSERT_EQ(one.exit_code, 0) << one.output;
  }
  ASSERT_FALSE(same_jacobian(first_jacobian, second_jacobian)) << "the versions must give different Jacobians";
  const std::string race = dir.file("race.h5"), output = dir.file("J.h5");
  std::filesystem::copy_file(first, race);
  int refused = 0, of_first = 0, of_second = 0, mixed = 0;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    SCOPED_TRACE(fmt::format("try {} of {}", attempt + 1, kTries));
    std::filesystem::remove(output);
    CommandResult result;
    {
      const Replacer replacer(first, second, race, std::chrono::microseconds(attempt % 2 == 0 ? 0 : 20000));
      result = run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --threads 1 -q -o '{}' --force", race, output));
    }
    if (result.exit_code == 0) {
      const bool is_first = same_jacobian(output, first_jacobian), is_second = same_jacobian(output, second_jacobian);
      of_first += is_first;
      of_second += is_second;
      mixed += !is_first && !is_second;
      EXPECT_TRUE(is_first || is_second) << "a Jacobian of both versions: " << result.output;
      continue;
    }
    ++refused;
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_EQ(count_lines(result.output, "fluxjac: error (rank"), 2u) << result.output;
    EXPECT_EQ(count_lines(result.output, "the file changed while the ranks started") +
                  count_lines(result.output, "ranks disagree on the inode of --mesh"),
              2u)
        << result.output;
    EXPECT_FALSE(std::filesystem::exists(output)) << result.output;
  }
  std::printf("%d tries: %d refused, %d of the first version, %d of the second, %d mixed\n", kTries, refused, of_first,
              of_second, mixed);
}

TEST(MpiAgreement, APartitionedFileReplacedWhileTheRanksStartGivesOneVersionOrARefusal) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string plain = dir.file("plain.h5"), first = dir.file("a.h5"), second = dir.file("b.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("mesh gen --kind tet --n 4 --order rcm -q -o '{}'", plain)).exit_code, 0);
  ASSERT_EQ(run_fluxjac(fmt::format("mesh partition '{}' --parts 2 -o '{}'", plain, first)).exit_code, 0);
  std::filesystem::copy_file(first, second);
  scale_state_in_place(second, 1.01);
  expect_one_version_or_refusal(dir, first, second);
}

TEST(MpiAgreement, AMeshFileReplacedWhileTheRanksPartitionItGivesOneVersionOrARefusal) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string first = dir.file("a.h5"), second = dir.file("b.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("mesh gen --kind tet --n 4 --order rcm -q -o '{}'", first)).exit_code, 0);
  std::filesystem::copy_file(first, second);
  scale_state_in_place(second, 1.01);
  expect_one_version_or_refusal(dir, first, second);
}

TEST(MpiAgreement, AParseErrorOrHelpOnOneRankIsRefusedOnBoth) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 2, "rcm");
  const JobResult typo =
      run_programs({{fmt::format("run --mesh '{}' -q", path)}, {fmt::format("run --mesh '{}' -q --rep 3", path)}});
  expect_refused(typo, 3, "unknown option '--rep'; did you mean '--reps'?", dir);
  EXPECT_EQ(count_lines(typo.result.output, "(on rank 1)"), 1u) << typo.result.output;
  const JobResult help =
      run_programs({{fmt::format("run --mesh '{}' --help", path)}, {fmt::format("run --mesh '{}' -q", path)}});
  expect_refused(help, 3, "rank 0 has fluxjac run --help, rank 1 has fluxjac run", dir);
  EXPECT_EQ(help.result.output.find("Options:"), std::string::npos) << "no help printed: " << help.result.output;
}

TEST(MpiFailure, AReportOneRankCannotWriteEndsTheJobAtOnce) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();  // the meshes are not partitioned: the ranks partition them
  const TempDir dir;
  const std::string first = write_generated(dir, "tet", 2, "rcm"), second = write_generated(dir, "prism", 2, "rcm");
  // Rank 0 writes the reports; a file-size limit of 1 KiB on it alone makes its JSON write fail (EFBIG) after the
  // first case, while rank 1 would go on to the next mesh; and `run`'s, after its only case.
  const std::string options =
      fmt::format("--variant reference --reps 2 --warmup 0 --threads 1 --json '{}'", dir.file("r.json"));
  for (const std::string& args : {fmt::format("bench --mesh '{}','{}' {}", first, second, options),
                                  fmt::format("run --mesh '{}' {}", first, options)}) {
    SCOPED_TRACE(args);
    const JobResult job = run_programs({{args, "", "ulimit -f 1"}, {args}});
    expect_refused(job, 4, "r.json: writing the file failed", dir);
    EXPECT_EQ(count_lines(job.result.output, "(on rank 0)"), 1u) << job.result.output;
    EXPECT_EQ(files_in(dir), 2u) << "only the meshes: no temporary left behind";
  }
}

TEST(MpiFailure, AFailureInsideOneRanksTimedLoopFailsTheCaseOnEveryRankWithoutAHang) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm"), output = dir.file("J.h5"), json = dir.file("r.json");
  // Rank 1's loop fails as an allocation would, right after its second ghost exchange (FLUXJAC_TEST_LOOP_FAILURE,
  // src/bench/timed_loop.cpp), while rank 0 goes on to the third: it used to end the job through MPI_Abort.
  const std::string args =
      fmt::format("run --mesh '{}' --variant reference --warmup 1 --reps 3 --threads 1 -q --force -o '{}' --json '{}'",
                  path, output, json);
  const JobResult job = run_programs({{args}, {args, "", "export FLUXJAC_TEST_LOOP_FAILURE=1:2"}});
  const std::string& text = job.result.output;
  EXPECT_EQ(job.result.exit_code, 4) << text;
  EXPECT_LT(job.seconds, 20.0) << "the job ended after " << job.seconds << " s: " << text;
  EXPECT_EQ(text.find("MPI_ABORT"), std::string::npos) << text;
  EXPECT_EQ(text.find("ending every rank"), std::string::npos) << text;
  EXPECT_EQ(count_lines(text, "fluxjac: at least one case failed with a run-time error"), 1u) << text;
  EXPECT_FALSE(std::filesystem::exists(output)) << "no Jacobian of a failed case: " << text;
  // The case is recorded as failed, for the rank it failed on, as one process records its own failure.
  std::ifstream in(json);
  const nlohmann::json run = nlohmann::json::parse(in).at("runs").at(0);
  EXPECT_EQ(run.at("status"), "failed") << run.dump();
  const std::string reason = run.at("reason").get<std::string>();
  EXPECT_NE(reason.find("out of memory"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(on rank 1)"), std::string::npos) << reason;
  const CommandResult one =
      test::run_command(fmt::format("FLUXJAC_TEST_LOOP_FAILURE=0:2 '{}' {}", FLUXJAC_EXECUTABLE, args));
  EXPECT_EQ(one.exit_code, 4) << one.output;
  EXPECT_EQ(count_lines(one.output, "fluxjac: at least one case failed with a run-time error"), 1u) << one.output;
}

TEST(MpiFailure, ARankOutOfMemoryInAnAllToAllEndsTheJobAtOnceWithOneLinePerRank) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();  // the mesh is not partitioned: the ranks partition it, sending each other its graph
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm");
  // Rank 1 fails as an allocation fails under ulimit -v, between the sizes and the lists of an all-to-all
  // (FLUXJAC_TEST_ALL_TO_ALL_FAILURE, src/ranks/communicator.cpp): of the graph, of the nodes' redistribution, of the
  // halo check. Rank 0 has the sizes by then and goes on to the lists: it used to wait in MPI_Waitall for rank 1's,
  // and rank 1 for rank 0 at its guard, until mpirun was killed.
  const std::string args = fmt::format(
      "run --mesh '{}' --variant reference --warmup 0 --reps 1 --threads 1 -q --json '{}'", path, dir.file("r.json"));
  for (const int call : {1, 4, 6}) {
    SCOPED_TRACE(fmt::format("rank 1 fails in its all-to-all {}", call));
    const JobResult job =
        run_programs({{args}, {args, "", fmt::format("export FLUXJAC_TEST_ALL_TO_ALL_FAILURE=1:{}", call)}});
    expect_refused(job, 4, "out of memory: an allocation failed", dir);
    EXPECT_EQ(count_lines(job.result.output, "(on rank 1)"), 1u) << job.result.output;
    EXPECT_LT(job.seconds, 10.0) << "the job ended only after " << job.seconds << " s: " << job.result.output;
    EXPECT_EQ(job.result.output.find("ending every rank"), std::string::npos)
        << "the exit patience ended the job: " << job.result.output;
  }
}

TEST(MpiFailure, AStartUpThatNeverFinishesOnOneRankEndsTheJobAfterThePatienceWithItsLine) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm");
  // Rank 1's MPI start-up never finishes (FLUXJAC_TEST_MPI_START_HANG, src/ranks/communicator.cpp), as Open MPI's
  // does when its shared memory cannot be mapped under `ulimit -v`: rank 0 waits in the first collective. The job
  // used to wait for ever; past the exit patience rank 1 ends with its line, and mpirun ends rank 0.
  const std::string args = fmt::format("run --mesh '{}' --variant reference --warmup 0 --reps 1 --threads 1 -q", path);
  const std::string patience = "export FLUXJAC_EXIT_PATIENCE_SECONDS=3";
  const JobResult job = run_programs({{args, "", patience}, {args, "", patience + " FLUXJAC_TEST_MPI_START_HANG=1"}});
  EXPECT_NE(job.result.exit_code, 0) << job.result.output;
  EXPECT_EQ(count_lines(job.result.output,
                        "fluxjac: error (rank 1 of 2): MPI's start-up did not finish within 3 s on this process"),
            1u)
      << job.result.output;
  EXPECT_LT(job.seconds, 30.0) << "the job ended only after " << job.seconds << " s: " << job.result.output;
}

TEST(MpiFailure, AFileSizeLimitOnARankWithoutATemporaryIsAnErrorNotASignal) {
  SKIP_WITHOUT_MPI();
  SKIP_WITHOUT_METIS();
  const TempDir dir;
  const std::string path = write_generated(dir, "tet", 3, "rcm"), output = dir.file("J.h5");
  // Rank 0 creates the Jacobian file; rank 1 writes its rows into it past its own limit of 1 KiB.
  const std::string args = fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", path, output);
  const JobResult job = run_programs({{args}, {args, "", "ulimit -f 1"}});
  expect_refused(job, 4, "writing rows failed: File too large", dir);
  EXPECT_NE(job.result.output.find("(on rank 1)"), std::string::npos) << job.result.output;
  EXPECT_EQ(files_in(dir), 1u) << "only the mesh: no temporary left behind";
}

TEST(MpiBadInput, CommandsOtherThanRunBenchAndMeshGenSayToRunWithoutMpirun) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const CommandResult result =
      run_fluxjac_mpi(2, fmt::format("mesh dual '{}' -o '{}'", dir.file("e.h5"), dir.file("m.h5")));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("without mpirun"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.h5")));
}

}  // namespace
}  // namespace fluxjac
