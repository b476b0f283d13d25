// ctest-label: cli
// Partitioned meshes (docs/design.md, "Many GPUs", docs/formats.md "Partitioned edge mesh"): the invariants of a
// partition and its renumbering on every kind of generated mesh (every node owned once, contiguous covering ranges, a
// stable permutation, edges grouped by owner and unchanged but for their ids, ghosts and halo edges exactly the
// off-part neighbours), the same reference Jacobian in either numbering, disconnected meshes, more parts than useful,
// the file layout read back and checked, and bad input through the library and the `fluxjac mesh partition` command.
// Tests that need METIS skip with a message in a build without it; the renumbering and the file layout are tested
// on geometric slab partitions in every build.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "jacobian/jacobian.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "partition/partition.hpp"
#include "partition/partition_io.hpp"
#include "reference/reference.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::bitwise_equal;
using test::CommandResult;
using test::count_lines;
using test::expect_invalid;
using test::run_fluxjac;
using test::TempDir;

constexpr const char* kNoMetis = "this build has no METIS (install libmetis-dev and rebuild): skipped";
const char* const kKinds[] = {"tet", "prism", "mixed"};
const int kPartCounts[] = {1, 2, 3, 7};

/// \brief Parts by slabs of x (the box is the unit cube): a partition any build can make, with empty parts when
/// there are more slabs than node planes.
NodePartition slab_partition(const EdgeMesh& mesh, int parts) {
  NodePartition partition;
  partition.parts = parts;
  partition.part_of_node.resize(static_cast<std::size_t>(mesh.n_nodes));
  for (std::int64_t i = 0; i < mesh.n_nodes; ++i) {
    const int part = static_cast<int>(std::floor(mesh.coords[3 * i] * parts));
    partition.part_of_node[i] = std::clamp(part, 0, parts - 1);
  }
  return partition;
}

/// \brief Two generated meshes side by side with no edge between them, and three nodes of no edge at all.
GeneratedMesh two_pieces() {
  GeneratedMesh first = test::generate_mesh("tet", 2, "rcm");
  const GeneratedMesh second = test::generate_mesh("prism", 3, "natural");
  EdgeMesh& mesh = first.mesh;
  const node_index shift = static_cast<node_index>(mesh.n_nodes);
  for (const node_index node : second.mesh.edges) mesh.edges.push_back(node + shift);
  mesh.normals.insert(mesh.normals.end(), second.mesh.normals.begin(), second.mesh.normals.end());
  mesh.areas.insert(mesh.areas.end(), second.mesh.areas.begin(), second.mesh.areas.end());
  for (std::size_t k = 0; k < second.mesh.coords.size(); ++k)
    mesh.coords.push_back(second.mesh.coords[k] + (k % 3 == 0 ? 2.0 : 0.0));
  mesh.volumes.insert(mesh.volumes.end(), second.mesh.volumes.begin(), second.mesh.volumes.end());
  first.state.Q.insert(first.state.Q.end(), second.state.Q.begin(), second.state.Q.end());
  for (int isolated = 0; isolated < 3; ++isolated) {
    for (int k = 0; k < 3; ++k) mesh.coords.push_back(5.0 + isolated);
    mesh.volumes.push_back(0.0);
    first.state.Q.insert(first.state.Q.end(), first.state.Q.begin(), first.state.Q.begin() + kBlock);
  }
  mesh.n_nodes += second.mesh.n_nodes + 3;
  return first;
}

/// \brief The node pair of an edge as a key.
std::pair<std::int64_t, std::int64_t> key(std::int64_t left, std::int64_t right) { return {left, right}; }

/// \brief Every invariant of a partitioned mesh, against the mesh and the part assignment it was made from.
void expect_partition_invariants(const EdgeMesh& original, const NodePartition& partition,
                                 const PartitionedMesh& result) {
  const EdgeMesh& mesh = result.mesh;
  const PartitionLayout& layout = result.layout;
  const std::int64_t n_nodes = original.n_nodes, parts = partition.parts;
  SCOPED_TRACE(fmt::format("{} nodes, {} parts", n_nodes, parts));
  ASSERT_EQ(mesh.n_nodes, n_nodes);
  ASSERT_EQ(layout.parts, parts);

  // ---- node ranges: from 0, contiguous, covering, each as large as its part ----------------------------
  ASSERT_EQ(layout.node_offsets.size(), static_cast<std::size_t>(parts) + 1);
  EXPECT_EQ(layout.node_offsets.front(), 0);
  EXPECT_EQ(layout.node_offsets.back(), n_nodes);
  for (std::int64_t p = 0; p < parts; ++p) {
    const auto owned = std::count(partition.part_of_node.begin(), partition.part_of_node.end(), p);
    EXPECT_EQ(layout.node_offsets[p + 1] - layout.node_offsets[p], owned) << "part " << p;
  }

  // ---- the renumbering: a permutation, each node in its part's range, order kept inside a part ----------
  ASSERT_EQ(result.new_id_of_old.size(), static_cast<std::size_t>(n_nodes));
  ASSERT_EQ(layout.original_node.size(), static_cast<std::size_t>(n_nodes));
  std::vector<int> owners(static_cast<std::size_t>(n_nodes), 0);
  std::vector<node_index> last_in_part(static_cast<std::size_t>(parts), -1);
  for (std::int64_t old = 0; old < n_nodes; ++old) {
    const node_index id = result.new_id_of_old[old];
    ASSERT_GE(id, 0);
    ASSERT_LT(id, n_nodes);
    ++owners[id];
    EXPECT_EQ(layout.original_node[id], old);
    const std::int32_t part = partition.part_of_node[old];
    EXPECT_GE(id, layout.node_offsets[part]) << "node " << old;
    EXPECT_LT(id, layout.node_offsets[part + 1]) << "node " << old;
    EXPECT_GT(id, last_in_part[part]) << "node " << old << ": the order inside part " << part << " changed";
    last_in_part[part] = id;
    EXPECT_EQ(layout.part_of(id), part);
  }
  EXPECT_EQ(std::count(owners.begin(), owners.end(), 1), n_nodes) << "not every node owned exactly once";

  // ---- node data moved with the nodes -------------------------------------------------------------------
  for (std::int64_t old = 0; old < n_nodes; ++old) {
    const node_index id = result.new_id_of_old[old];
    for (int k = 0; k < 3; ++k) EXPECT_EQ(mesh.coords[3 * id + k], original.coords[3 * old + k]);
    EXPECT_EQ(mesh.volumes[id], original.volumes[old]);
  }

  // ---- edges: the same edges (orientation, normal, area), sorted by (L, R), grouped by the part of L -----
  ASSERT_EQ(mesh.n_edges(), original.n_edges());
  std::map<std::pair<std::int64_t, std::int64_t>, edge_index> original_edge;
  for (edge_index e = 0; e < original.n_edges(); ++e) original_edge[key(original.left(e), original.right(e))] = e;
  for (edge_index e = 0; e < mesh.n_edges(); ++e) {
    const auto found = original_edge.find(key(layout.original_node[mesh.left(e)], layout.original_node[mesh.right(e)]));
    ASSERT_NE(found, original_edge.end()) << "edge " << e << " is not an input edge in its orientation";
    const edge_index old = found->second;
    EXPECT_EQ(std::memcmp(&mesh.normals[3 * e], &original.normals[3 * old], 3 * sizeof(double)), 0) << "edge " << e;
    EXPECT_EQ(mesh.areas[e], original.areas[old]) << "edge " << e;
    original_edge.erase(found);
    if (e > 0) {
      EXPECT_LT(key(mesh.left(e - 1), mesh.right(e - 1)), key(mesh.left(e), mesh.right(e))) << "edge " << e;
    }
  }
  ASSERT_EQ(layout.edge_offsets.size(), static_cast<std::size_t>(parts) + 1);
  EXPECT_EQ(layout.edge_offsets.front(), 0);
  EXPECT_EQ(layout.edge_offsets.back(), mesh.n_edges());
  for (std::int64_t p = 0; p < parts; ++p)
    for (edge_index e = layout.edge_offsets[p]; e < layout.edge_offsets[p + 1]; ++e)
      ASSERT_EQ(layout.part_of(mesh.left(e)), p) << "edge " << e << " lies in the range of part " << p;

  // ---- ghosts and halo edges: exactly the off-part neighbours, from the input mesh ----------------------
  std::vector<std::set<std::int64_t>> ghosts(static_cast<std::size_t>(parts));
  std::vector<std::set<std::int64_t>> halo(static_cast<std::size_t>(parts));
  std::int64_t edge_cut = 0;
  for (edge_index e = 0; e < original.n_edges(); ++e) {
    const node_index a = original.left(e), b = original.right(e);
    const std::int32_t part_a = partition.part_of_node[a], part_b = partition.part_of_node[b];
    if (part_a == part_b) continue;
    ++edge_cut;
    ghosts[part_a].insert(result.new_id_of_old[b]);
    ghosts[part_b].insert(result.new_id_of_old[a]);
  }
  for (edge_index e = 0; e < mesh.n_edges(); ++e)
    if (layout.part_of(mesh.left(e)) != layout.part_of(mesh.right(e))) halo[layout.part_of(mesh.right(e))].insert(e);
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::vector<std::int64_t> stored_ghosts(layout.ghost_nodes.begin() + layout.ghost_offsets[p],
                                                  layout.ghost_nodes.begin() + layout.ghost_offsets[p + 1]);
    EXPECT_EQ(stored_ghosts, std::vector<std::int64_t>(ghosts[p].begin(), ghosts[p].end())) << "ghosts of part " << p;
    const std::vector<std::int64_t> stored_halo(layout.halo_edges.begin() + layout.halo_edge_offsets[p],
                                                layout.halo_edges.begin() + layout.halo_edge_offsets[p + 1]);
    EXPECT_EQ(stored_halo, std::vector<std::int64_t>(halo[p].begin(), halo[p].end())) << "halo edges of part " << p;
  }

  // ---- statistics agree with the lists ------------------------------------------------------------------
  const PartitionStatistics statistics = partition_statistics(mesh, layout);
  EXPECT_EQ(statistics.edge_cut, edge_cut);
  std::int64_t nodes = 0, incident = 0, cut_ends = 0, empty = 0, max_nodes = 0, max_incident = 0;
  for (std::int64_t p = 0; p < parts; ++p) {
    const PartStatistics& part = statistics.parts[p];
    EXPECT_EQ(part.ghosts, static_cast<std::int64_t>(ghosts[p].size()));
    EXPECT_EQ(part.halo_edges, static_cast<std::int64_t>(halo[p].size()));
    nodes += part.owned_nodes;
    incident += part.incident_edges();
    cut_ends += part.cut_edges;
    empty += part.owned_nodes == 0;
    max_nodes = std::max(max_nodes, part.owned_nodes);
    max_incident = std::max(max_incident, part.incident_edges());
  }
  EXPECT_EQ(nodes, n_nodes);
  EXPECT_EQ(incident, mesh.n_edges() + edge_cut) << "a cut edge is computed by both its parts, others by one";
  EXPECT_EQ(cut_ends, 2 * edge_cut);
  EXPECT_EQ(statistics.empty_parts, empty);
  EXPECT_DOUBLE_EQ(statistics.node_imbalance, double(max_nodes) * double(parts) / double(n_nodes));
  EXPECT_DOUBLE_EQ(statistics.edge_imbalance, double(max_incident) * double(parts) / double(incident));
  if (parts == 1) {
    EXPECT_EQ(edge_cut, 0);
  }
}

/// \brief The reference Jacobian of the partitioned mesh is that of the input, read through original_node: each
/// edge's local Jacobian and every Aoff block bit for bit, Adiag to rounding (its sums run in another edge order).
void expect_same_reference_jacobian(const GeneratedMesh& input, const PartitionedMesh& result) {
  const PartitionLayout& layout = result.layout;
  FlowState state = input.state;
  state.Q = permute_node_rows(input.state.Q, kBlock, result.new_id_of_old);
  std::map<std::pair<std::int64_t, std::int64_t>, edge_index> original_edge;
  for (edge_index e = 0; e < input.mesh.n_edges(); ++e) original_edge[key(input.mesh.left(e), input.mesh.right(e))] = e;
  for (edge_index e = 0; e < result.mesh.n_edges(); ++e) {
    const edge_index old =
        original_edge.at(key(layout.original_node[result.mesh.left(e)], layout.original_node[result.mesh.right(e)]));
    double local[kLocalJacobianEntries], original_local[kLocalJacobianEntries], flux[kBlock];
    reference_local_jacobian(gather_edge(result.mesh, state, e), local, flux);
    reference_local_jacobian(gather_edge(input.mesh, input.state, old), original_local, flux);
    ASSERT_EQ(std::memcmp(local, original_local, sizeof local), 0) << "local Jacobian of edge " << e;
  }

  const JacobianPattern original_pattern = JacobianPattern::build(input.mesh);
  const JacobianPattern pattern = JacobianPattern::build(result.mesh);
  Jacobian original, renumbered;
  assemble_reference(input.mesh, input.state, original_pattern, original);
  assemble_reference(result.mesh, state, pattern, renumbered);
  ASSERT_EQ(pattern.nnz(), original_pattern.nnz());
  double scale = 0.0;
  for (const double value : original.adiag) scale = std::max(scale, std::abs(value));
  double worst = 0.0;
  for (std::int64_t row = 0; row < result.mesh.n_nodes; ++row) {
    const std::int64_t original_row = layout.original_node[row];
    for (int k = 0; k < kBlockEntries; ++k)
      worst = std::max(worst, std::abs(renumbered.adiag[row * kBlockEntries + k] -
                                       original.adiag[original_row * kBlockEntries + k]));
    ASSERT_EQ(pattern.row_ptr[row + 1] - pattern.row_ptr[row],
              original_pattern.row_ptr[original_row + 1] - original_pattern.row_ptr[original_row]);
    for (block_offset slot = pattern.row_ptr[row]; slot < pattern.row_ptr[row + 1]; ++slot) {
      const std::int64_t original_column = layout.original_node[pattern.col_idx[slot]];
      const auto first = original_pattern.col_idx.begin() + original_pattern.row_ptr[original_row];
      const auto last = original_pattern.col_idx.begin() + original_pattern.row_ptr[original_row + 1];
      const auto found = std::lower_bound(first, last, original_column);
      ASSERT_TRUE(found != last && *found == original_column)
          << "block (" << row << ", " << pattern.col_idx[slot] << ") has no twin in the input's pattern";
      const block_offset original_slot = found - original_pattern.col_idx.begin();
      EXPECT_EQ(std::memcmp(&renumbered.aoff[slot * kBlockEntries], &original.aoff[original_slot * kBlockEntries],
                            kBlockEntries * sizeof(float)),
                0)
          << "Aoff block (" << row << ", " << pattern.col_idx[slot] << ")";
    }
  }
  EXPECT_LE(worst, 1e-13 * scale) << "Adiag differs by more than rounding: " << worst << " of " << scale;
}

// ---- the renumbering, on slab partitions (every build) -----------------------------------------------------

TEST(PartitionRenumbering, SlabPartitionsOfEveryKindKeepTheInvariants) {
  for (const char* kind : kKinds) {
    const GeneratedMesh generated = test::generate_mesh(kind, 4, "rcm");
    for (const int parts : kPartCounts) {
      SCOPED_TRACE(fmt::format("{} mesh, {} slabs", kind, parts));
      const NodePartition partition = slab_partition(generated.mesh, parts);
      expect_partition_invariants(generated.mesh, partition, renumber_by_part(generated.mesh, partition));
    }
  }
}

TEST(PartitionRenumbering, ReferenceJacobianIsTheSameInTheOriginalNumbering) {
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const GeneratedMesh generated = test::generate_mesh(kind, 4, "random");
    expect_same_reference_jacobian(generated, renumber_by_part(generated.mesh, slab_partition(generated.mesh, 3)));
  }
}

TEST(PartitionRenumbering, OriginalIdsComposeWhenAPartitionedMeshIsPartitionedAgain) {
  const GeneratedMesh generated = test::generate_mesh("mixed", 3, "natural");
  const PartitionedMesh first = renumber_by_part(generated.mesh, slab_partition(generated.mesh, 3));
  // A second split by y of the renumbered mesh: original_node must still name the generated mesh's ids.
  NodePartition by_y;
  by_y.parts = 2;
  for (std::int64_t i = 0; i < first.mesh.n_nodes; ++i) by_y.part_of_node.push_back(first.mesh.coords[3 * i + 1] > 0.5);
  const PartitionedMesh second = renumber_by_part(first.mesh, by_y, first.layout.original_node);
  for (std::int64_t node = 0; node < second.mesh.n_nodes; ++node)
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(second.mesh.coords[3 * node + k], generated.mesh.coords[3 * second.layout.original_node[node] + k])
          << "node " << node;
}

TEST(PartitionRenumbering, PartAssignmentsThatDoNotFitAreRuntimeErrors) {
  const GeneratedMesh generated = test::generate_mesh("tet", 1, "natural");
  NodePartition partition = slab_partition(generated.mesh, 2);
  partition.part_of_node[3] = 2;
  EXPECT_THROW(renumber_by_part(generated.mesh, partition), Error);
  partition.part_of_node.pop_back();
  EXPECT_THROW(renumber_by_part(generated.mesh, partition), Error);
}

// ---- METIS --------------------------------------------------------------------------------------------------

TEST(PartitionMetis, EveryKindAndPartCountKeepsTheInvariants) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  for (const char* kind : kKinds) {
    const GeneratedMesh generated = test::generate_mesh(kind, 6, "rcm");
    for (const int parts : kPartCounts) {
      SCOPED_TRACE(fmt::format("{} mesh, {} parts", kind, parts));
      const NodePartition partition = partition_nodes(generated.mesh, parts);
      ASSERT_EQ(partition.parts, parts);
      const PartitionedMesh result = renumber_by_part(generated.mesh, partition);
      expect_partition_invariants(generated.mesh, partition, result);
      const PartitionStatistics statistics = partition_statistics(result.mesh, result.layout);
      // A box of 343 nodes splits into 7 parts of real work, well balanced, cutting few edges.
      EXPECT_EQ(statistics.empty_parts, 0);
      EXPECT_LT(statistics.edge_imbalance, 1.1);
      if (parts > 1) {
        EXPECT_LT(statistics.edge_cut, result.mesh.n_edges() / 3);
      }
    }
  }
}

TEST(PartitionMetis, CutsFarFewerEdgesThanARandomSplit) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const GeneratedMesh generated = test::generate_mesh("mixed", 10, "random");
  const int parts = 4;
  NodePartition random_split;
  random_split.parts = parts;
  for (std::int64_t i = 0; i < generated.mesh.n_nodes; ++i)
    random_split.part_of_node.push_back(static_cast<std::int32_t>((i * 7919) % parts));
  const auto cut_of = [&](const NodePartition& partition) {
    const PartitionedMesh result = renumber_by_part(generated.mesh, partition);
    return partition_statistics(result.mesh, result.layout).edge_cut;
  };
  const std::int64_t metis_cut = cut_of(partition_nodes(generated.mesh, parts));
  const std::int64_t random_cut = cut_of(random_split);
  EXPECT_LT(metis_cut * 5, random_cut) << "METIS " << metis_cut << ", random " << random_cut;
}

TEST(PartitionMetis, TheSameMeshGivesTheSameParts) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const GeneratedMesh generated = test::generate_mesh("mixed", 5, "natural");
  EXPECT_EQ(partition_nodes(generated.mesh, 5).part_of_node, partition_nodes(generated.mesh, 5).part_of_node);
}

TEST(PartitionMetis, ReferenceJacobianIsTheSameInTheOriginalNumbering) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const GeneratedMesh generated = test::generate_mesh(kind, 5, "rcm");
    expect_same_reference_jacobian(generated, renumber_by_part(generated.mesh, partition_nodes(generated.mesh, 7)));
  }
}

TEST(PartitionMetis, DisconnectedPiecesAndIsolatedNodes) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const GeneratedMesh generated = two_pieces();
  for (const int parts : kPartCounts) {
    const NodePartition partition = partition_nodes(generated.mesh, parts);
    const PartitionedMesh result = renumber_by_part(generated.mesh, partition);
    expect_partition_invariants(generated.mesh, partition, result);
    if (parts == 2) {
      // Two pieces of 27 + 3 and 64 nodes into two parts: a balanced split would have to cut the larger piece; the
      // invariants hold whatever METIS chose, and the ids of both pieces stay in range.
      EXPECT_EQ(result.layout.node_offsets.back(), generated.mesh.n_nodes);
    }
  }
  expect_same_reference_jacobian(generated, renumber_by_part(generated.mesh, partition_nodes(generated.mesh, 3)));
}

TEST(PartitionMetis, MorePartsThanUsefulAreKeptAndReported) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const GeneratedMesh generated = test::generate_mesh("tet", 3, "natural");  // 64 nodes
  for (const int parts : {50, 64}) {
    SCOPED_TRACE(fmt::format("{} parts of {} nodes", parts, generated.mesh.n_nodes));
    const NodePartition partition = partition_nodes(generated.mesh, parts);
    const PartitionedMesh result = renumber_by_part(generated.mesh, partition);
    expect_partition_invariants(generated.mesh, partition, result);
    const PartitionStatistics statistics = partition_statistics(result.mesh, result.layout);
    ASSERT_EQ(statistics.parts.size(), static_cast<std::size_t>(parts));
    std::int64_t empty = 0;
    for (std::int64_t p = 0; p < parts; ++p)
      empty += result.layout.node_offsets[p + 1] == result.layout.node_offsets[p];
    EXPECT_EQ(statistics.empty_parts, empty);
  }
}

TEST(PartitionNodes, BadPartCountsAreUsageErrors) {
  const GeneratedMesh generated = test::generate_mesh("tet", 1, "natural");  // 8 nodes
  for (const int parts : {0, -3, 9, 1000}) {
    try {
      partition_nodes(generated.mesh, parts);
      ADD_FAILURE() << parts << " parts accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
      EXPECT_NE(std::string(error.what()).find(std::to_string(parts) + " parts"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(partition_nodes(generated.mesh, 1).part_of_node, std::vector<std::int32_t>(8, 0));
}

TEST(PartitionNodes, WithoutMetisMorePartsThanOneSayWhatToInstall) {
  if (metis_available()) GTEST_SKIP() << "this build has METIS: the message of a build without it is not reachable";
  const GeneratedMesh generated = test::generate_mesh("tet", 2, "natural");
  try {
    partition_nodes(generated.mesh, 2);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("install libmetis-dev and rebuild"), std::string::npos) << error.what();
  }
}

// ---- the file layout ----------------------------------------------------------------------------------------

/// A generated mesh partitioned into slabs and written with its state, extras and /partition.
struct PartitionedFile {
  GeneratedMesh generated;
  PartitionedMesh partitioned;
  std::string path;
};

PartitionedFile write_slab_partitioned(const TempDir& folder, const std::string& name, int parts) {
  PartitionedFile file{test::generate_mesh("mixed", 3, "rcm"), {}, folder.file(name)};
  file.partitioned = renumber_by_part(file.generated.mesh, slab_partition(file.generated.mesh, parts));
  FlowState state = file.generated.state;
  state.Q = permute_node_rows(state.Q, kBlock, file.partitioned.new_id_of_old);
  write_edge_mesh_with_extras(file.path, file.partitioned.mesh, &state, {}, [&](const h5::File& out) {
    write_partition(out, file.partitioned.layout, "slabs of x (test)");
  });
  return file;
}

bool same_layout(const PartitionLayout& a, const PartitionLayout& b) {
  return a.parts == b.parts && a.node_offsets == b.node_offsets && a.edge_offsets == b.edge_offsets &&
         a.original_node == b.original_node && a.ghost_offsets == b.ghost_offsets && a.ghost_nodes == b.ghost_nodes &&
         a.halo_edge_offsets == b.halo_edge_offsets && a.halo_edges == b.halo_edges;
}

TEST(PartitionFile, ReadsBackAsAValidMeshAndTheSameLayout) {
  const TempDir folder;
  for (const int parts : kPartCounts) {
    const PartitionedFile file = write_slab_partitioned(folder, fmt::format("slabs-{}.h5", parts), parts);
    const EdgeMesh mesh = read_edge_mesh(file.path);
    EXPECT_TRUE(bitwise_equal(mesh.edges, file.partitioned.mesh.edges));
    EXPECT_TRUE(bitwise_equal(mesh.normals, file.partitioned.mesh.normals));
    read_flow_state(file.path, mesh.n_nodes);
    ASSERT_TRUE(has_partition(file.path));
    const PartitionLayout layout = read_partition(file.path);
    EXPECT_TRUE(same_layout(layout, file.partitioned.layout)) << parts << " parts";
    check_partition_against_mesh(file.path, mesh, layout);
  }
}

TEST(PartitionFile, AnUnpartitionedFileSaysHowToPartitionIt) {
  const TempDir folder;
  const std::string path = folder.file("plain.h5");
  const GeneratedMesh generated = test::generate_mesh("tet", 2, "natural");
  write_edge_mesh(path, generated.mesh, &generated.state);
  EXPECT_FALSE(has_partition(path));
  expect_invalid([&] { read_partition(path); }, {path, "/partition", "not partitioned", "fluxjac mesh partition"});
}

TEST(PartitionFile, AnotherPartCountIsAUsageError) {
  EXPECT_NO_THROW(require_parts("box-4.h5", 4, 4));
  try {
    require_parts("box-4.h5", 4, 3);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    for (const char* fragment : {"box-4.h5", "4 parts", "3 ranks", "--parts 3"})
      EXPECT_NE(message.find(fragment), std::string::npos) << fragment << " missing in: " << message;
  }
}

/// \brief Rewrites one /partition dataset of a copy of path and expects read_partition to name it.
void expect_damage_found(const std::string& path, const std::string& dataset,
                         const std::function<void(std::vector<std::int64_t>&)>& damage,
                         const std::vector<std::string>& fragments) {
  const std::string copy = path + ".damaged.h5";
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  {
    h5::File file = h5::File::open(copy, h5::File::Mode::kReadWrite);
    std::vector<std::int64_t> values = h5::read<std::int64_t>(file, h5::describe_dataset(file, dataset));
    damage(values);
    h5::replace(file, dataset, values, {static_cast<std::int64_t>(values.size())});
    file.close();
  }
  SCOPED_TRACE(dataset);
  expect_invalid([&] { read_partition(copy); }, fragments);
}

TEST(PartitionFile, DamagedLayoutsAreRejectedNamingTheDatasetAndIndex) {
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 3);
  const std::string& path = file.path;
  const PartitionLayout& layout = file.partitioned.layout;
  for (std::int64_t p = 0; p < 3; ++p)
    ASSERT_GT(layout.node_offsets[p + 1], layout.node_offsets[p]) << "the test wants three non-empty slabs";
  expect_damage_found(path, "/partition/node_offsets", [](auto& v) { std::swap(v[1], v[2]); },
                      {"/partition/node_offsets[2]", "never decrease"});
  expect_damage_found(path, "/partition/node_offsets", [](auto& v) { v.back() -= 1; },
                      {"/partition/node_offsets[3]", "n_nodes"});
  expect_damage_found(path, "/partition/edge_offsets", [](auto& v) { v.pop_back(); },
                      {"/partition/edge_offsets", "[parts + 1]"});
  expect_damage_found(path, "/partition/original_node", [](auto& v) { v[5] = v[4]; },
                      {"/partition/original_node[5]", "twice"});
  expect_damage_found(path, "/partition/ghost_nodes", [&](auto& v) { v[0] = layout.node_offsets[0]; },
                      {"/partition/ghost_nodes[0]", "own range"});
  std::int64_t first_halo = -1;  // the first halo edge of a part with two or more
  for (std::int64_t p = 0; p < 3 && first_halo < 0; ++p)
    if (layout.halo_edge_offsets[p + 1] - layout.halo_edge_offsets[p] >= 2) first_halo = layout.halo_edge_offsets[p];
  ASSERT_GE(first_halo, 0);
  expect_damage_found(path, "/partition/halo_edges", [&](auto& v) { std::swap(v[first_halo], v[first_halo + 1]); },
                      {fmt::format("/partition/halo_edges[{}]", first_halo + 1), "ascending"});
  expect_damage_found(path, "/partition/halo_edges", [&](auto& v) { v[0] = file.partitioned.mesh.n_edges(); },
                      {"/partition/halo_edges[0]", "out of range"});
}

TEST(PartitionFile, LayoutsThatDoNotFitTheEdgesAreRejected) {
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 3);
  const EdgeMesh mesh = read_edge_mesh(file.path);
  const PartitionLayout& layout = file.partitioned.layout;
  EXPECT_NO_THROW(check_partition_against_mesh(file.path, mesh, layout));

  PartitionLayout shifted = layout;  // part 1's first edge counted in part 0's range
  shifted.edge_offsets[1] += 1;
  expect_invalid(
      [&] { check_partition_against_mesh(file.path, mesh, shifted); },
      {file.path, fmt::format("/mesh/edges[{}]", layout.edge_offsets[1]), "belongs to part 1", "part 0's range"});

  // Part 1 swaps its first ghost for a node of another part that is no neighbour: still ascending and off-part
  // (read_partition would accept it), but not what the edges give.
  PartitionLayout wrong_ghost = layout;
  const auto first = wrong_ghost.ghost_nodes.begin() + layout.ghost_offsets[1];
  const auto last = wrong_ghost.ghost_nodes.begin() + layout.ghost_offsets[2];
  std::set<std::int64_t> ghosts(first + 1, last);
  for (std::int64_t node = 0;; ++node)
    if (layout.part_of(node) != 1 && !std::binary_search(first, last, node)) {
      ghosts.insert(node);
      break;
    }
  std::copy(ghosts.begin(), ghosts.end(), first);
  expect_invalid([&] { check_partition_against_mesh(file.path, mesh, wrong_ghost); },
                 {"/partition/ghost_nodes", "part 1", "the edges give"});

  PartitionLayout no_halo = layout;
  no_halo.halo_edges.clear();
  std::fill(no_halo.halo_edge_offsets.begin(), no_halo.halo_edge_offsets.end(), 0);
  expect_invalid([&] { check_partition_against_mesh(file.path, mesh, no_halo); },
                 {"/partition/halo_edges", "halo edges", "the edges give"});
}

// ---- the command ---------------------------------------------------------------------------------------------

std::string shell_quoted(const std::string& path) { return "'" + path + "'"; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// \brief Nothing named name or name.tmp-* in the folder.
void expect_no_output(const TempDir& folder, const std::string& name) {
  for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
    EXPECT_NE(entry.path().filename().string().rfind(name, 0), 0u) << "left behind: " << entry.path();
}

/// \brief Expects exit code `code`, one `fluxjac: error:` line containing every fragment.
void expect_error(const CommandResult& result, int code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(result.exit_code, code) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  EXPECT_EQ(result.output.rfind("fluxjac: error: ", 0), 0u) << result.output;
  for (const std::string& fragment : fragments)
    EXPECT_NE(result.output.find(fragment), std::string::npos) << "\"" << fragment << "\" missing in " << result.output;
}

class PartitionCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    mesh_ = folder_.file("box.h5");
    const CommandResult made = run_fluxjac("mesh gen -q --kind mixed --n 3 --order rcm -o " + shell_quoted(mesh_));
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  TempDir folder_;
  std::string mesh_;
};

TEST_F(PartitionCommand, PrintsTheTableAndWritesAFileEveryCommandReads) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const std::string out = folder_.file("box-3.h5");
  const CommandResult result =
      run_fluxjac(fmt::format("mesh partition {} --parts 3 -o {}", shell_quoted(mesh_), shell_quoted(out)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* fragment : {"64 nodes", "in 3 parts", "METIS", "halo edges", "ghosts", "cut edges", "edge cut",
                               "imbalance", "0 empty parts", "renumbered with the nodes"})
    EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment << " missing in:\n" << result.output;

  const EdgeMesh mesh = read_edge_mesh(out);
  const PartitionLayout layout = read_partition(out);
  check_partition_against_mesh(out, mesh, layout);
  EXPECT_EQ(layout.parts, 3);
  const PartitionStatistics statistics = partition_statistics(mesh, layout);
  EXPECT_NE(result.output.find(fmt::format("edge cut {} (", statistics.edge_cut)), std::string::npos) << result.output;
  // The state and the optional additions came along, renumbered with their nodes.
  const FlowState state_before = read_flow_state(mesh_, 64), state_after = read_flow_state(out, 64);
  for (std::int64_t node = 0; node < 64; ++node)
    ASSERT_EQ(std::memcmp(&state_after.Q[kBlock * node], &state_before.Q[kBlock * layout.original_node[node]],
                          kBlock * sizeof(double)),
              0)
        << "state of node " << node;
  const EdgeMeshExtras before = read_edge_mesh_extras(mesh_, 64), after = read_edge_mesh_extras(out, 64);
  ASSERT_EQ(after.boundary_nodes.size(), 64u);
  for (std::int64_t node = 0; node < 64; ++node)
    EXPECT_EQ(after.boundary_nodes[node], before.boundary_nodes[layout.original_node[node]]) << node;
  EXPECT_EQ(after.order, before.order);

  const CommandResult info = run_fluxjac("info " + shell_quoted(out));
  EXPECT_EQ(info.exit_code, 0) << info.output;
  for (const char* fragment : {"partition", "3 parts (METIS", "edge cut", "imbalance"})
    EXPECT_NE(info.output.find(fragment), std::string::npos) << fragment << " missing in:\n" << info.output;
  const CommandResult run = run_fluxjac("run -q --warmup 0 --reps 1 --variant reference --mesh " + shell_quoted(out));
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST_F(PartitionCommand, OnePartNeedsNoMetisAndAStateFileComesAlong) {
  const std::string state = folder_.file("state.h5");
  write_flow_state(state, read_flow_state(mesh_, 64));
  const std::string plain = folder_.file("plain.h5");
  write_edge_mesh(plain, read_edge_mesh(mesh_), nullptr);
  const std::string out = folder_.file("one.h5");
  const CommandResult result = run_fluxjac(fmt::format("mesh partition {} --parts 1 --state {} -o {}",
                                                       shell_quoted(plain), shell_quoted(state), shell_quoted(out)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("one part (no partitioning)"), std::string::npos) << result.output;
  EXPECT_TRUE(bitwise_equal(read_flow_state(out, 64).Q, read_flow_state(mesh_, 64).Q));
  EXPECT_EQ(read_partition(out).ghost_nodes.size(), 0u);
}

TEST_F(PartitionCommand, MorePartsThanUsefulWarnAboutEmptyParts) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const std::string out = folder_.file("box-50.h5");
  const CommandResult result =
      run_fluxjac(fmt::format("mesh partition {} --parts 50 -o {}", shell_quoted(mesh_), shell_quoted(out)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const PartitionStatistics statistics = partition_statistics(read_edge_mesh(out), read_partition(out));
  EXPECT_NE(result.output.find(fmt::format("{} empty parts", statistics.empty_parts)), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("own no node") != std::string::npos, statistics.empty_parts > 0) << result.output;
}

TEST_F(PartitionCommand, BadPartCountsGiveOneLineAndNoOutput) {
  for (const auto& [parts, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"0", "into 0 parts"}, {"=-2", "-2 parts"}, {"65", "64 nodes into 65 parts"}}) {
    const CommandResult result =
        run_fluxjac(fmt::format("mesh partition {} --parts{}{} -o {}", shell_quoted(mesh_), parts[0] == '=' ? "" : " ",
                                parts, shell_quoted(folder_.file("p.h5"))));
    expect_error(result, 3, {fragment});
    expect_no_output(folder_, "p.h5");
  }
}

TEST_F(PartitionCommand, AnOutputThatIsTheInputIsRefusedAndTheInputKept) {
  const std::string before = read_bytes(mesh_);
  const std::string spelled_otherwise = folder_.file("sub/../box.h5");
  std::filesystem::create_directories(folder_.file("sub"));
  for (const std::string& output : {mesh_, spelled_otherwise}) {
    const CommandResult result =
        run_fluxjac(fmt::format("mesh partition {} --parts 1 -o {}", shell_quoted(mesh_), shell_quoted(output)));
    expect_error(result, 3, {"--output", "the input"});
    EXPECT_EQ(read_bytes(mesh_), before) << "the input changed";
  }
}

TEST_F(PartitionCommand, AFailureLeavesAnExistingOutputUntouched) {
  const std::string out = folder_.file("out.h5");
  { std::ofstream(out) << "keep me"; }
  const std::string bad_state = folder_.file("bad-state.h5");
  const GeneratedMesh other = test::generate_mesh("tet", 1, "natural");
  write_flow_state(bad_state, other.state);  // 8 nodes, the mesh has 64
  const CommandResult result =
      run_fluxjac(fmt::format("mesh partition {} --parts 1 --state {} --force -o {}", shell_quoted(mesh_),
                              shell_quoted(bad_state), shell_quoted(out)));
  expect_error(result, 2, {"bad-state.h5", "/state/Q"});
  EXPECT_EQ(read_bytes(out), "keep me");
}

TEST_F(PartitionCommand, WithoutMetisTheCommandSaysWhatToInstall) {
  if (metis_available()) GTEST_SKIP() << "this build has METIS: the message of a build without it is not reachable";
  const CommandResult result = run_fluxjac(
      fmt::format("mesh partition {} --parts 2 -o {}", shell_quoted(mesh_), shell_quoted(folder_.file("p.h5"))));
  expect_error(result, 3, {"this build has no METIS", "install libmetis-dev and rebuild"});
  expect_no_output(folder_, "p.h5");
}

TEST_F(PartitionCommand, PartitioningAPartitionedFileKeepsTheOriginalIds) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const std::string first = folder_.file("box-2.h5"), second = folder_.file("box-2-5.h5");
  ASSERT_EQ(
      run_fluxjac(fmt::format("mesh partition {} --parts 2 -o {}", shell_quoted(mesh_), shell_quoted(first))).exit_code,
      0);
  const CommandResult result =
      run_fluxjac(fmt::format("mesh partition {} --parts 5 -o {}", shell_quoted(first), shell_quoted(second)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("partitioned into 2 parts"), std::string::npos) << result.output;
  const EdgeMesh original = read_edge_mesh(mesh_), twice = read_edge_mesh(second);
  const PartitionLayout layout = read_partition(second);
  for (std::int64_t node = 0; node < twice.n_nodes; ++node)
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(twice.coords[3 * node + k], original.coords[3 * layout.original_node[node] + k]) << node;
}

TEST_F(PartitionCommand, ABadBalanceGivesOneLineAndNoOutput) {
  const CommandResult result = run_fluxjac(fmt::format("mesh partition {} --parts 2 --balance nodes -o {}",
                                                       shell_quoted(mesh_), shell_quoted(folder_.file("p.h5"))));
  expect_error(result, 3, {"unknown --balance 'nodes': use assembly or solve"});
  expect_no_output(folder_, "p.h5");
}

/// The /partition attribute `method` of a partitioned file.
std::string recorded_method(const std::string& path) {
  const h5::File file = h5::File::open(path);
  return h5::read_string_attribute(file, kPartitionGroup, "method").value_or("method not recorded");
}

TEST(PartitionBalance, TheSolvesWeightsGivePartsOfNearerNodeCountsThanAssemblyWork) {
  if (!metis_available()) GTEST_SKIP() << kNoMetis;
  const TempDir folder;
  // The mixed box: prism layers below with fewer edges per node than the tetrahedra above.
  const std::string mesh = folder.file("mixed.h5");
  const CommandResult made = run_fluxjac("mesh gen -q --kind mixed --n 12 -o " + shell_quoted(mesh));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  std::map<std::string, PartitionStatistics> statistics;
  for (const auto& [name, balance] : std::vector<std::pair<std::string, std::optional<PartBalance>>>{
           {"default", std::nullopt}, {"assembly", PartBalance::kAssembly}, {"solve", PartBalance::kSolve}}) {
    SCOPED_TRACE(name);
    const std::string out = folder.file(name + ".h5");
    const CommandResult result = run_fluxjac(
        fmt::format("mesh partition {} --parts 2{} -o {}", shell_quoted(mesh),
                    balance ? fmt::format(" --balance {}", to_string(*balance)) : std::string(), shell_quoted(out)));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    // The method says what the parts balance, in the table's header and in the file.
    const std::string phrase = balance_phrase(balance.value_or(PartBalance::kAssembly));
    EXPECT_NE(result.output.find(phrase), std::string::npos) << result.output;
    EXPECT_NE(recorded_method(out).find(phrase), std::string::npos) << recorded_method(out);
    const EdgeMesh partitioned = read_edge_mesh(out);
    const PartitionLayout layout = read_partition(out);
    check_partition_against_mesh(out, partitioned, layout);
    statistics[name] = partition_statistics(partitioned, layout);
  }
  // METIS balances the vertex weights within its 3% (ufactor 30): node-assembly work (1 + degree) balances the
  // incident edges, and on this mesh leaves the node counts far apart; the solve's weights (24 + degree) count each
  // row as much as 24 edges, so its parts' node counts are nearer and their edges further apart.
  EXPECT_LE(statistics["assembly"].edge_imbalance, 1.05);
  EXPECT_LT(statistics["solve"].node_imbalance, statistics["assembly"].node_imbalance);
  EXPECT_GT(statistics["solve"].edge_imbalance, statistics["assembly"].edge_imbalance);
  EXPECT_GT(statistics["assembly"].node_imbalance, 1.05) << "the balances do not differ on this mesh";
  EXPECT_EQ(statistics["default"].node_imbalance, statistics["assembly"].node_imbalance);
  EXPECT_EQ(statistics["default"].edge_cut, statistics["assembly"].edge_cut);
}

// ---- one home for the checks: the whole file and each rank's part ----------------------------------------------

#define SKIP_WITHOUT_MPI()                                     \
  do {                                                         \
    const std::string reason = test::mpi_unavailable_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;               \
  } while (0)

/// The (L, R) pairs of edges [first, end) of a mesh.
std::vector<node_index> range_ends(const EdgeMesh& mesh, std::int64_t first, std::int64_t end) {
  return {mesh.edges.begin() + 2 * first, mesh.edges.begin() + 2 * end};
}

TEST(PartitionChecks, TheEdgeRangesOfThePartsGiveEveryHaloListAsTheWholeMeshDoes) {
  const TempDir folder;
  for (const int parts : {2, 3, 7}) {
    const PartitionedFile file = write_slab_partitioned(folder, fmt::format("slabs-{}.h5", parts), parts);
    const EdgeMesh& mesh = file.partitioned.mesh;
    const PartitionLayout& layout = file.partitioned.layout;
    // What each rank sends the others, gathered by destination in rank order: what the halo exchange of the slice
    // reader compares every part's list with.
    std::vector<std::vector<std::int64_t>> received(static_cast<std::size_t>(parts));
    for (std::int64_t q = 0; q < parts; ++q) {
      const auto sent = halo_edges_by_part(layout.node_offsets, layout.edge_offsets[q],
                                           range_ends(mesh, layout.edge_offsets[q], layout.edge_offsets[q + 1]));
      ASSERT_EQ(sent.size(), static_cast<std::size_t>(parts));
      EXPECT_TRUE(sent[q].empty()) << "part " << q << " owes itself nothing";
      for (std::int64_t p = 0; p < parts; ++p) received[p].insert(received[p].end(), sent[p].begin(), sent[p].end());
    }
    for (std::int64_t p = 0; p < parts; ++p)
      EXPECT_EQ(received[p], std::vector<std::int64_t>(layout.halo_edges.begin() + layout.halo_edge_offsets[p],
                                                       layout.halo_edges.begin() + layout.halo_edge_offsets[p + 1]))
          << parts << " parts, part " << p;
  }
}

TEST(PartitionChecks, EveryEdgeMustLieInThePartsOfBothItsEnds) {
  EXPECT_NO_THROW(check_edge_coverage("m.h5", 2 * 945, 945));
  expect_invalid([] { check_edge_coverage("m.h5", 2 * 945 - 1, 945); },
                 {"m.h5", "1889 edge ends", "945 edges", "1890", "missing from the part"});
}

TEST(PartitionChecks, AHaloEdgeThatIsNotThePartsOwnIsNamedByItsIndex) {
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 3);
  const EdgeMesh& mesh = file.partitioned.mesh;
  const PartitionLayout& layout = file.partitioned.layout;
  // One of part 1's halo edges replaced by an edge of its own range inside part 1, which starts at a node part 1
  // owns; or by an edge of part 0's range inside part 0, which ends at a node of another part.
  const std::int64_t at = layout.halo_edge_offsets[1];
  ASSERT_LT(at, layout.halo_edge_offsets[2]);
  const auto first_edge_inside = [&](std::int64_t part) {
    std::int64_t e = layout.edge_offsets[part];
    while (layout.part_of(mesh.right(e)) != part) ++e;
    return e;
  };
  for (const auto& [replacement, fragment] : std::vector<std::pair<std::int64_t, std::string>>{
           {first_edge_inside(1), "is part 1's own"}, {first_edge_inside(0), "belongs to part 0"}}) {
    ListPiece halo{1, at, {layout.halo_edges.begin() + at, layout.halo_edges.begin() + layout.halo_edge_offsets[2]}};
    halo.values[0] = replacement;
    std::sort(halo.values.begin(), halo.values.end());
    const std::int64_t index =
        at + (std::find(halo.values.begin(), halo.values.end(), replacement) - halo.values.begin());
    EdgeEnds held;
    held.range_ends = range_ends(mesh, layout.edge_offsets[1], layout.edge_offsets[2]);
    for (const std::int64_t e : halo.values) held.halo_ends.insert(held.halo_ends.end(), {mesh.left(e), mesh.right(e)});
    expect_invalid([&] { check_held_edges(file.path, layout.node_offsets, layout.edge_offsets, halo, held); },
                   {file.path, fmt::format("/partition/halo_edges[{}]: edge {}", index, replacement),
                    "halo edge of part 1", fragment});
  }
}

/// \brief A copy of path whose part `part` lists its halo edges without entry `entry` (its offsets adjusted):
/// well-formed in every respect a list can be checked alone, but one edge short.
std::string drop_halo_edge(const std::string& path, std::int64_t part, std::int64_t entry, const std::string& copy) {
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  h5::File file = h5::File::open(copy, h5::File::Mode::kReadWrite);
  std::vector<std::int64_t> halo = h5::read<std::int64_t>(file, h5::describe_dataset(file, "/partition/halo_edges"));
  std::vector<std::int64_t> offsets =
      h5::read<std::int64_t>(file, h5::describe_dataset(file, "/partition/halo_edge_offsets"));
  halo.erase(halo.begin() + offsets[part] + entry);
  for (std::size_t p = static_cast<std::size_t>(part) + 1; p < offsets.size(); ++p) --offsets[p];
  h5::replace(file, "/partition/halo_edges", halo, {static_cast<std::int64_t>(halo.size())});
  h5::replace(file, "/partition/halo_edge_offsets", offsets, {static_cast<std::int64_t>(offsets.size())});
  file.close();
  return copy;
}

/// The message of a one-process error line ("fluxjac: error: MESSAGE").
std::string error_message(const CommandResult& result) {
  const std::string prefix = "fluxjac: error: ";
  const std::size_t at = result.output.find(prefix);
  if (at == std::string::npos) return {};
  const std::size_t end = result.output.find('\n', at);
  return result.output.substr(at + prefix.size(), end == std::string::npos ? end : end - at - prefix.size());
}

/// \brief Expects every rank of a job of `ranks` ranks to have printed its error line whole, once: "fluxjac: error
/// (rank R of P): MESSAGE", followed by " (on rank K)" on the ranks that did not fail themselves. A line with
/// characters of another rank's line inside it matches neither form, and leaves "fluxjac: error" counted once more
/// than the lines that match.
void expect_whole_error_lines(const std::string& output, int ranks, const std::string& message) {
  std::vector<int> lines_of_rank(static_cast<std::size_t>(ranks), 0);
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    for (int rank = 0; rank < ranks; ++rank) {
      const std::string prefix = fmt::format("fluxjac: error (rank {} of {}): ", rank, ranks);
      if (line.rfind(prefix, 0) != 0) continue;
      const std::string rest = line.substr(prefix.size());
      const bool own = rest == message;
      const bool relayed = rest.rfind(message + " (on rank ", 0) == 0 && rest.back() == ')' &&
                           rest.size() <= message.size() + std::string(" (on rank 9999)").size();
      EXPECT_TRUE(own || relayed) << "a line of rank " << rank << " that is not its whole error line: " << line;
      ++lines_of_rank[static_cast<std::size_t>(rank)];
    }
  }
  for (int rank = 0; rank < ranks; ++rank)
    EXPECT_EQ(lines_of_rank[static_cast<std::size_t>(rank)], 1) << "rank " << rank << "'s error line in " << output;
  EXPECT_EQ(count_lines(output, "fluxjac: error"), static_cast<std::size_t>(ranks)) << "pieces of lines in " << output;
}

/// \brief Expects `mpirun -np RANKS fluxjac ARGS` to end with exit_code (2: invalid input) and one whole error line per
/// rank, each with message, no output file, and the job ended by the ranks' agreement within seconds: not by the exit
/// patience (60 s), whose end prints "ending every rank".
void expect_refused_on_every_rank(int ranks, const std::string& args, const std::string& message,
                                  const std::string& output, int exit_code = 2) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = test::run_fluxjac_mpi(ranks, args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, exit_code) << result.output;
  ASSERT_FALSE(message.empty());
  expect_whole_error_lines(result.output, ranks, message);
  EXPECT_EQ(result.output.find("ending every rank"), std::string::npos) << result.output;
  EXPECT_LT(seconds, 20.0) << "the job ended after " << seconds << " s: " << result.output;
  if (!output.empty()) {
    EXPECT_FALSE(std::filesystem::exists(output)) << output;
  }
}

TEST(PartitionFileRun, AHaloListMissingOneEdgeIsRefusedByInfoAndOnEveryRankWithNothingWritten) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 2);
  const std::string output = folder.file("J.h5");
  // The untouched file runs on two ranks (so what follows is refused for its halo list alone).
  const CommandResult intact =
      test::run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", file.path, output));
  ASSERT_EQ(intact.exit_code, 0) << intact.output;
  std::filesystem::remove(output);
  const PartitionLayout& layout = file.partitioned.layout;
  for (std::int64_t part = 0; part < 2; ++part) {
    const std::int64_t count = layout.halo_edge_offsets[part + 1] - layout.halo_edge_offsets[part];
    ASSERT_GE(count, 2) << "part " << part << " needs halo edges";
    for (const std::int64_t entry : {std::int64_t{0}, count - 1}) {
      SCOPED_TRACE(fmt::format("part {} without halo entry {}", part, entry));
      const std::string tampered = drop_halo_edge(file.path, part, entry, folder.file("tampered.h5"));
      const CommandResult info = run_fluxjac(fmt::format("info '{}'", tampered));
      expect_error(info, 2,
                   {tampered, fmt::format("/partition/halo_edges[{}]", layout.halo_edge_offsets[part] + entry),
                    fmt::format("part {} lists {} halo edges, the edges give {}", part, count - 1, count)});
      expect_refused_on_every_rank(2, fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", tampered, output),
                                   error_message(info), output);
      expect_no_output(folder, "J.h5");
    }
  }
}

TEST(PartitionFileRun, FourRanksFailingAtOnceEachPrintTheirLineWhole) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  // A long name makes long lines: every rank refuses the 2-part file on 4 ranks in the same agreed step, and all four
  // print at once.
  const PartitionedFile file = write_slab_partitioned(folder, std::string(180, 'p') + ".h5", 2);
  const std::string args = fmt::format("run --mesh '{}' --threads 1 -q", file.path);
  const CommandResult first = test::run_fluxjac_mpi(4, args);
  const std::string message = [&] {  // rank 0's own line, or any rank's without "(on rank K)"
    const std::string prefix = "fluxjac: error (rank ";
    const std::size_t at = first.output.find(prefix);
    if (at == std::string::npos) return std::string();
    const std::size_t begin = first.output.find("): ", at) + 3, end = first.output.find('\n', at);
    std::string text = first.output.substr(begin, end - begin);
    const std::size_t relayed = text.rfind(" (on rank ");
    return relayed == std::string::npos ? text : text.substr(0, relayed);
  }();
  ASSERT_NE(message.find("partitioned into 2 parts"), std::string::npos) << first.output;
  for (int job = 0; job < 3; ++job) {
    SCOPED_TRACE(fmt::format("job {}", job));
    expect_refused_on_every_rank(4, args, message, "", 3);  // a usage error: run it with 2 ranks
  }
}

/// \brief A copy of path with one value of a dataset changed (index: the flat position of the value).
std::string with_value(const std::string& path, const std::string& dataset, std::int64_t index, double value,
                       const std::string& copy) {
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  h5::File file = h5::File::open(copy, h5::File::Mode::kReadWrite);
  const h5::DatasetInfo info = h5::describe_dataset(file, dataset);
  std::vector<double> values = h5::read<double>(file, info);
  values[static_cast<std::size_t>(index)] = value;
  h5::replace(file, dataset, values, info.shape);
  file.close();
  return copy;
}

TEST(PartitionFileRun, ARanksErrorNamesTheIndexInTheFileAsOneProcessDoes) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 2);
  const PartitionLayout& layout = file.partitioned.layout;
  const std::string stored = folder.file("ref.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}'", file.path, stored)).exit_code, 0);
  const std::int64_t edge = layout.edge_offsets[1] + 3, node = layout.node_offsets[1] + 2;
  const std::int64_t block = [&] {  // the second Aoff block of part 1's rows
    const h5::File jacobian = h5::File::open(stored);
    return h5::read<std::int64_t>(jacobian, h5::describe_dataset(jacobian, "/jacobian/row_ptr"))[node] + 1;
  }();
  struct Damage {
    std::string mesh, reference, index;
  };
  const std::vector<Damage> damages = {
      {with_value(file.path, "/mesh/areas", edge, -1.0, folder.file("area.h5")), "",
       fmt::format("/mesh/areas[{}]", edge)},
      {with_value(file.path, "/state/Q", node * kBlock, -1.0, folder.file("density.h5")), "",
       fmt::format("/state/Q[{}]", node)},
      {file.path, with_value(stored, "/jacobian/adiag", node * kBlockEntries, NAN, folder.file("adiag.h5")),
       fmt::format("/jacobian/adiag[{}]", node)},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.index);
    const std::string args = fmt::format("run --mesh '{}' --threads 1 -q{}", damage.mesh,
                                         damage.reference.empty() ? "" : " --reference '" + damage.reference + "'");
    const CommandResult one = run_fluxjac(args);
    expect_error(one, 2, {damage.index});
    expect_refused_on_every_rank(2, args, error_message(one), "");
  }
  // An Aoff block: float32, written through the Jacobian file's own layout.
  const std::string aoff = folder.file("aoff.h5");
  std::filesystem::copy_file(stored, aoff);
  {
    h5::File jacobian = h5::File::open(aoff, h5::File::Mode::kReadWrite);
    const h5::DatasetInfo info = h5::describe_dataset(jacobian, "/jacobian/aoff");
    std::vector<float> values = h5::read<float>(jacobian, info);
    ASSERT_LT(block, info.shape[0]);
    values[static_cast<std::size_t>(block) * kBlockEntries + 7] = INFINITY;
    h5::replace(jacobian, "/jacobian/aoff", values, info.shape);
    jacobian.close();
  }
  const std::string args = fmt::format("run --mesh '{}' --threads 1 -q --reference '{}'", file.path, aoff);
  const CommandResult one = run_fluxjac(args);
  expect_error(one, 2, {fmt::format("/jacobian/aoff[{}]: entry (1, 2)", block)});
  expect_refused_on_every_rank(2, args, error_message(one), "");
}

TEST(PartitionFileRun, APartCountPastTheNodeCountIsInvalidInputForInfoAndRunAlike) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 2);
  {
    h5::File changed = h5::File::open(file.path, h5::File::Mode::kReadWrite);
    h5::write_attribute(changed, "/partition", "parts", std::int64_t{1} << 62);
    changed.close();
  }
  const CommandResult info = run_fluxjac(fmt::format("info '{}'", file.path));
  expect_error(info, 2, {"/partition: attribute \"parts\" is 4611686018427387904, expected 1 to n_nodes"});
  expect_refused_on_every_rank(2, fmt::format("run --mesh '{}' --threads 1 -q", file.path), error_message(info), "");
  expect_invalid([&] { partition_parts(file.path); }, {error_message(info)});
}

TEST(PartitionFileRun, AnUnsignedPartCountPastInt64IsNamedAsStored) {
  SKIP_WITHOUT_MPI();
  const TempDir folder;
  const PartitionedFile file = write_slab_partitioned(folder, "slabs.h5", 2);
  {
    h5::File changed = h5::File::open(file.path, h5::File::Mode::kReadWrite);
    const std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    h5::write_attribute_raw(changed, "/partition", "parts", H5T_STD_U64LE, H5T_NATIVE_UINT64, &most);
    changed.close();
  }
  // Not int64's largest, 9223372036854775807, where HDF5's conversion clips it.
  const CommandResult info = run_fluxjac(fmt::format("info '{}'", file.path));
  expect_error(info, 2, {"/partition: attribute \"parts\" is 18446744073709551615, too large"});
  expect_refused_on_every_rank(2, fmt::format("run --mesh '{}' --threads 1 -q", file.path), error_message(info), "");
  expect_invalid([&] { partition_parts(file.path); }, {error_message(info)});
}

}  // namespace
}  // namespace fluxjac
