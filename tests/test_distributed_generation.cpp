// ctest-label: cli
// A partitioned file written by every rank from its own part (part/part_writer.hpp) and the box mesh generated
// in parts (docs/design.md, "Many GPUs" and "Meshes"): the writer's file is the mesh it was given, read back whole,
// by `fluxjac info` and by slices; the peak resident set is measured.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jacobian/jacobian_io.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "part/part_writer.hpp"
#include "partition/partition_check.hpp"
#include "partition/partition_io.hpp"
#include "test_support.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::count_lines;
using test::run_fluxjac;
using test::run_fluxjac_mpi;
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

TEST(PeakResident, RestartsFromTheCurrentSetSoThatAStepsPeakIsItsOwn) {
  {
    std::vector<char> block(128u << 20);  // large enough to be returned to the system when freed
    std::fill(block.begin(), block.end(), 1);
  }
  const std::int64_t with_block = peak_resident_bytes();
  if (!restart_peak_resident()) GTEST_SKIP() << "this system does not let a process restart its peak: skipped";
  EXPECT_LT(peak_resident_bytes(), with_block - (100 << 20)) << "the freed block no longer counts";
  EXPECT_GT(peak_resident_bytes(), 0);
}

/// One process's part of a generated mesh, as make_part lays it out.
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

// ---- the box generated in parts (mpirun) --------------------------------------------------------------------------

/// Expects the partitioned file at path to be the serial generator's mesh of the same spec (natural order) as a set:
/// every edge by the original (natural) ids of its ends, its normal (negated where the edge is turned), area,
/// volumes, coordinates, state and boundary flags, all bit for bit: each rank computes them with the serial code
/// on the same cells in the same order.
void expect_serial_mesh(const std::string& path, const GeneratedMesh& serial) {
  const EdgeMesh mesh = read_edge_mesh(path);
  const PartitionLayout layout = read_partition(path);
  check_partition_against_mesh(path, mesh, layout);
  ASSERT_EQ(mesh.n_nodes, serial.mesh.n_nodes);
  ASSERT_EQ(mesh.n_edges(), serial.mesh.n_edges());
  std::map<std::pair<std::int64_t, std::int64_t>, edge_index> serial_edges;
  for (edge_index e = 0; e < serial.mesh.n_edges(); ++e) serial_edges[{serial.mesh.left(e), serial.mesh.right(e)}] = e;
  std::int64_t turned = 0, mismatches = 0;
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const std::int64_t a = layout.original_node[mesh.left(e)], b = layout.original_node[mesh.right(e)];
    const auto found = serial_edges.find({std::min(a, b), std::max(a, b)});
    ASSERT_NE(found, serial_edges.end()) << "edge " << e << " (" << a << ", " << b << ") is not in the serial mesh";
    const edge_index s = found->second;
    serial_edges.erase(found);
    const double sign = a < b ? 1.0 : -1.0;
    turned += a > b;
    for (int d = 0; d < 3; ++d) mismatches += mesh.normals[3 * e + d] != sign * serial.mesh.normals[3 * s + d];
    mismatches += mesh.areas[e] != serial.mesh.areas[s];
  }
  EXPECT_EQ(mismatches, 0) << "normals and areas differ";
  const FlowState state = read_flow_state(path, mesh.n_nodes);
  const EdgeMeshExtras extras = read_edge_mesh_extras(path, mesh.n_nodes);
  std::int64_t node_mismatches = 0;
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i) {
    const std::int64_t o = layout.original_node[i];
    node_mismatches += mesh.volumes[i] != serial.mesh.volumes[o];
    node_mismatches += extras.boundary_nodes[i] != serial.on_boundary[o];
    for (int d = 0; d < 3; ++d) node_mismatches += mesh.coords[3 * i + d] != serial.mesh.coords[3 * o + d];
    for (int c = 0; c < kBlock; ++c) node_mismatches += state.Q[kBlock * i + c] != serial.state.Q[kBlock * o + c];
  }
  EXPECT_EQ(node_mismatches, 0) << "volumes, coordinates, states or boundary flags differ";
  ASSERT_TRUE(extras.cells.has_value());
  EXPECT_EQ(extras.cells->tetrahedra, serial.n_tetrahedra);
  EXPECT_EQ(extras.cells->prisms, serial.n_prisms);
}

TEST(MpiGeneration, TheRanksPartsAreTheSerialMeshForEveryKindOrderAndRankCount) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  struct Case {
    const char* kind;
    const char* order;
    int ranks;
    double jitter;
  };
  // A jitter of 0.44 makes cells invalid, so the jitter rounds (shared between the ranks) halve it on some nodes.
  for (const Case& c : {Case{"tet", "natural", 2, 0.2}, Case{"prism", "rcm", 3, 0.2}, Case{"mixed", "random", 4, 0.2},
                        Case{"mixed", "rcm", 3, 0.44}, Case{"tet", "random", 4, 0.44}}) {
    SCOPED_TRACE(fmt::format("{} {} {} ranks jitter {}", c.kind, c.order, c.ranks, c.jitter));
    const std::string path = dir.file(fmt::format("{}-{}-{}.h5", c.kind, c.order, c.ranks));
    const CommandResult made = run_fluxjac_mpi(
        c.ranks,
        fmt::format("mesh gen --kind {} --n 6 --order {} --jitter {} -o '{}'", c.kind, c.order, c.jitter, path));
    ASSERT_EQ(made.exit_code, 0) << made.output;
    for (const char* step : {"nodes and cells", "dual metrics", "ordering", "state", "part", "write"})
      EXPECT_EQ(count_lines(made.output, fmt::format("generate: {}: ", step)), 1u) << step << ": " << made.output;
    EXPECT_NE(made.output.find("peak host memory per rank"), std::string::npos) << made.output;
    BoxMeshSpec spec;
    spec.kind = parse_mesh_kind(c.kind);
    spec.n = 6;
    spec.jitter = c.jitter;
    std::int64_t reduced = 0;
    const GeneratedMesh serial = generate_box_mesh(spec);
    if (c.jitter > 0.4) {
      build_box_elements(spec, nullptr, &reduced);
      EXPECT_GT(reduced, 0) << "the jitter rounds must run";
    }
    expect_serial_mesh(path, serial);
    EXPECT_EQ(read_partition(path).parts, c.ranks);
    const CommandResult info = run_fluxjac(fmt::format("info '{}'", path));
    EXPECT_EQ(info.exit_code, 0) << info.output;
  }
}

TEST(MpiGeneration, ASpecRunOnTheRanksPartsGivesTheSerialJacobianAfterRenumbering) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  const GeneratedMesh serial = test::generate_mesh("mixed", 5, "natural");
  const std::string serial_mesh = dir.file("serial.h5"), serial_j = dir.file("Js.h5");
  write_edge_mesh(serial_mesh, serial.mesh, &serial.state);
  const CommandResult one = run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", serial_mesh, serial_j));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  // The spec generated in parts and kept in memory, and the file of the same parts.
  const std::string spec_j = dir.file("Jspec.h5"), parts = dir.file("parts.h5"), file_j = dir.file("Jfile.h5");
  const CommandResult in_memory = run_fluxjac_mpi(
      3, fmt::format("run --mesh mixed:5:rcm --threads 1 -o '{}' --json '{}'", spec_j, dir.file("r.json")));
  ASSERT_EQ(in_memory.exit_code, 0) << in_memory.output;
  EXPECT_NE(in_memory.output.find("PASS"), std::string::npos) << in_memory.output;
  EXPECT_EQ(in_memory.output.find("generating"), std::string::npos) << "no mesh file: " << in_memory.output;
  EXPECT_NE(in_memory.output.find("generate: dual metrics"), std::string::npos) << in_memory.output;
  {
    std::ifstream json_file(dir.file("r.json"));
    const nlohmann::json record = nlohmann::json::parse(json_file)["runs"][0];
    const nlohmann::json& steps = record["parallel"]["partition"]["steps"];
    ASSERT_TRUE(steps.is_array()) << record.dump();
    EXPECT_EQ(steps.size(), 5u);
    EXPECT_EQ(steps[0]["step"], "nodes and cells");
    EXPECT_GT(steps[4]["peak_bytes"]["min"].get<double>(), 0.0);
    EXPECT_EQ(record["mesh_file"], "");
  }
  const CommandResult made =
      run_fluxjac_mpi(3, fmt::format("mesh gen --kind mixed --n 5 --order rcm -q -o '{}'", parts));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const CommandResult from_file =
      run_fluxjac_mpi(3, fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", parts, file_j));
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;

  const StoredJacobian a = read_jacobian(spec_j), b = read_jacobian(file_j), s = read_jacobian(serial_j);
  // In memory or from the file: the same parts, the same Jacobian bit for bit.
  EXPECT_EQ(a.pattern.row_ptr, b.pattern.row_ptr);
  EXPECT_EQ(a.pattern.col_idx, b.pattern.col_idx);
  EXPECT_TRUE(test::bitwise_equal(a.jacobian.adiag, b.jacobian.adiag));
  EXPECT_TRUE(test::bitwise_equal(a.jacobian.aoff, b.jacobian.aoff));
  // The serial Jacobian after renumbering: a turned edge (L and R swapped, normal negated) and another order of the
  // edges around a node change the last bits of Adiag's sums (float64: 1e-12 of the largest entry) and at most the
  // rounding of Aoff to float32 (1e-6).
  const std::vector<std::int64_t> original = read_partition(parts).original_node;
  ASSERT_EQ(a.pattern.n_nodes, s.pattern.n_nodes);
  double adiag_scale = 0, aoff_scale = 0, adiag_error = 0, aoff_error = 0;
  for (const double v : s.jacobian.adiag) adiag_scale = std::max(adiag_scale, std::abs(v));
  for (const float v : s.jacobian.aoff) aoff_scale = std::max(aoff_scale, std::abs(double(v)));
  for (std::int64_t i = 0; i < a.pattern.n_nodes; ++i) {
    const std::int64_t o = original[i];
    for (int k = 0; k < kBlockEntries; ++k)
      adiag_error = std::max(
          adiag_error, std::abs(a.jacobian.adiag[kBlockEntries * i + k] - s.jacobian.adiag[kBlockEntries * o + k]));
    ASSERT_EQ(a.pattern.row_ptr[i + 1] - a.pattern.row_ptr[i], s.pattern.row_ptr[o + 1] - s.pattern.row_ptr[o]);
    for (auto b_at = a.pattern.row_ptr[i]; b_at < a.pattern.row_ptr[i + 1]; ++b_at) {
      const std::int64_t column = original[a.pattern.col_idx[b_at]];
      const auto begin = s.pattern.col_idx.begin() + s.pattern.row_ptr[o],
                 end = s.pattern.col_idx.begin() + s.pattern.row_ptr[o + 1];
      const auto at = std::find(begin, end, column);
      ASSERT_NE(at, end) << "row " << o << " has no column " << column;
      const auto s_at = at - s.pattern.col_idx.begin();
      for (int k = 0; k < kBlockEntries; ++k)
        aoff_error = std::max(aoff_error, std::abs(double(a.jacobian.aoff[kBlockEntries * b_at + k]) -
                                                   double(s.jacobian.aoff[kBlockEntries * s_at + k])));
    }
  }
  EXPECT_LE(adiag_error, 1e-12 * adiag_scale);
  EXPECT_LE(aoff_error, 1e-6 * aoff_scale);
}

/// Ranks started with their own shell setup (one with a file-size limit), as in tests/test_mpi.cpp.
CommandResult run_two_ranks(const std::string& args, const std::string& setup_rank1) {
  const std::string executable = std::string("'") + FLUXJAC_EXECUTABLE + "'";
  return test::run_command(test::mpirun_environment_prefix() + "timeout 120 '" + test::mpiexec_path() + "' -np 1 " +
                           executable + " " + args + " : -np 1 bash -c \"" + setup_rank1 + "; exec " + executable +
                           " " + args + "\"");
}

TEST(MpiGeneration, AFailureOnOneRankLeavesNoFileAndEndsTheJobWithOneLinePerRank) {
  SKIP_WITHOUT_MPI();
  const TempDir dir;
  // Rank 0 creates the file; rank 1 writes its rows into it past its own file-size limit of 1 KiB.
  const std::string args = fmt::format("mesh gen --kind tet --n 8 -q -o '{}'", dir.file("m.h5"));
  const auto start = std::chrono::steady_clock::now();
  const CommandResult limited = run_two_ranks(args, "ulimit -f 1");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
  EXPECT_EQ(limited.exit_code, 4) << limited.output;
  EXPECT_EQ(count_lines(limited.output, "fluxjac: error (rank"), 2u) << limited.output;
  EXPECT_EQ(count_lines(limited.output, "writing rows failed: File too large"), 2u) << limited.output;
  EXPECT_EQ(files_in(dir), 0u) << "no file, no temporary";
  // An output folder that does not exist: refused on every rank before any work.
  const CommandResult missing =
      run_fluxjac_mpi(3, fmt::format("mesh gen --kind tet --n 4 -o '{}'", dir.file("none/m.h5")));
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_EQ(count_lines(missing.output, "fluxjac: error (rank"), 3u) << missing.output;
  EXPECT_EQ(files_in(dir), 0u);
  // More ranks than node planes: a usage error on every rank.
  const CommandResult thin = run_fluxjac_mpi(3, fmt::format("mesh gen --kind tet --n 1 -o '{}'", dir.file("t.h5")));
  EXPECT_EQ(thin.exit_code, 3) << thin.output;
  EXPECT_NE(thin.output.find("node planes"), std::string::npos) << thin.output;
  EXPECT_EQ(files_in(dir), 0u);
}

}  // namespace
}  // namespace fluxjac
