// ctest-label: unit
// Every registered GPU variant's lane mapping and seeding, run lane by lane on the CPU, against the
// reference local Jacobian; the registry itself and the tuning table; and CPU assembly: signs, slots and J v.
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "gpu/row_blocks.hpp"
#include "jacobian/compare.hpp"
#include "mesh/generator.hpp"
#include "reference/reference.hpp"
#include "registry/registry.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "variants/tunings.hpp"

namespace fluxjac {
namespace {

const std::vector<std::string> kPaperVariants = {"dn_10", "dn_5", "dn_2", "dn5_2", "edn_5", "edn5_2", "hd"};

EdgeInput edge_from_case(const test::FluxCase& c, double area) {
  EdgeInput edge;
  for (int k = 0; k < kBlock; ++k) edge.left[k] = c.left[k], edge.right[k] = c.right[k];
  edge.normal = {c.normal[0], c.normal[1], c.normal[2]};
  edge.area = area;
  return edge;
}

double max_abs(const double* values, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::abs(values[i]));
  return m;
}

TEST(Registry, HasTheReferenceAndTheSevenPaperVariants) {
  const auto infos = Registry::instance().list();
  std::set<std::string> names;
  for (const auto& info : infos) names.insert(info.name);
  EXPECT_TRUE(names.count("reference"));
  for (const auto& name : kPaperVariants) EXPECT_TRUE(names.count(name)) << name;
  EXPECT_EQ(infos.front().name, "reference");
}

TEST(Registry, UnknownVariantNamesTheRegisteredOnes) {
  try {
    Registry::instance().create("dn_11");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("dn5_2"), std::string::npos) << e.what();
  }
}

TEST(Registry, ResolveExpandsAllAndLists) {
  const auto all = Registry::instance().resolve({"all"});
  EXPECT_EQ(all.front(), "reference");
  const auto two = Registry::instance().resolve({"reference,reference"});
  EXPECT_EQ(two.size(), 1u);
  EXPECT_THROW(Registry::instance().resolve({""}), Error);
}

/// Both lane mappings (edge- and node-based assembly) of every GPU variant.
std::vector<std::pair<std::string, LaneEmulator>> lane_mappings() {
  std::vector<std::pair<std::string, LaneEmulator>> mappings;
  for (const auto& info : Registry::instance().list()) {
    if (info.emulate_edge_lanes) mappings.emplace_back(info.name + " (edge lanes)", info.emulate_edge_lanes);
    if (info.emulate_node_lanes) mappings.emplace_back(info.name + " (node lanes)", info.emulate_node_lanes);
  }
  return mappings;
}

TEST(Registry, EveryGpuVariantHasBothLaneMappings) { EXPECT_EQ(lane_mappings().size(), 2 * kPaperVariants.size()); }

/// \brief One GPU variant's lanes for one strategy, run on the CPU (every build): the edge- or node-based
/// mapping from the registry, one test per (variant, strategy), e.g. CpuEmulated/VariantLanes.*/hd_node.
class VariantLanes : public ::testing::TestWithParam<test::VariantStrategy> {
 protected:
  void SetUp() override {
    const VariantInfo info = test::variant_info(GetParam().variant);
    emulate_ = GetParam().strategy == AssemblyStrategy::kEdge ? info.emulate_edge_lanes : info.emulate_node_lanes;
    ASSERT_TRUE(emulate_) << GetParam().variant << " registers no " << to_string(GetParam().strategy)
                          << " lane mapping";
  }
  LaneEmulator emulate_;
};

/// The Fortran vectors: the full local Jacobian, every entry written.
TEST_P(VariantLanes, MatchTheReferenceOnTheFortranVectors) {
  const auto cases = test::load_flux_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EdgeInput edge = edge_from_case(cases[i], 0.75);
    double expected[kLocalJacobianEntries], local[kLocalJacobianEntries], expected_flux[kBlock], flux[kBlock];
    reference_local_jacobian(edge, expected, expected_flux);
    std::fill(local, local + kLocalJacobianEntries, std::nan(""));  // poison: every entry must be written
    std::fill(flux, flux + kBlock, std::nan(""));
    emulate_(edge, local, flux);
    const double scale = max_abs(expected, kLocalJacobianEntries);
    for (int j = 0; j < kLocalJacobianEntries; ++j)
      ASSERT_LE(std::abs(local[j] - expected[j]), 1e-13 * scale)
          << "case " << i << " side " << j / kBlockEntries << " entry " << j % kBlockEntries;
    const double flux_scale = max_abs(expected_flux, kBlock);
    for (int m = 0; m < kBlock; ++m)
      ASSERT_LE(std::abs(flux[m] - expected_flux[m]), 1e-14 * flux_scale) << "case " << i << " flux " << m;
  }
}

/// The states of a generated mesh (all entropy-fix branches occur there).
TEST_P(VariantLanes, MatchTheReferenceOnAGeneratedMesh) {
  const GeneratedMesh generated = test::generate_mesh("mixed", 5);
  double worst = 0.0, worst_flux = 0.0;
  for (edge_index e = 0; e < generated.mesh.n_edges(); ++e) {
    const EdgeInput edge = gather_edge(generated.mesh, generated.state, e);
    double expected[kLocalJacobianEntries], local[kLocalJacobianEntries], expected_flux[kBlock], flux[kBlock];
    reference_local_jacobian(edge, expected, expected_flux);
    emulate_(edge, local, flux);
    const double scale = max_abs(expected, kLocalJacobianEntries);
    for (int j = 0; j < kLocalJacobianEntries; ++j) worst = std::max(worst, std::abs(local[j] - expected[j]) / scale);
    const double flux_scale = max_abs(expected_flux, kBlock);
    for (int m = 0; m < kBlock; ++m)
      worst_flux = std::max(worst_flux, std::abs(flux[m] - expected_flux[m]) / flux_scale);
  }
  EXPECT_LE(worst, 1e-13);
  EXPECT_LE(worst_flux, 1e-14);
}

INSTANTIATE_TEST_SUITE_P(CpuEmulated, VariantLanes, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);

/// Two edges by hand: 0-1 and 1-2, checked block by block against docs/design.md, "Residual, sign convention and the
/// four blocks".
TEST(Assembly, SignsAndSlotsOnAHandMadeMesh) {
  EdgeMesh mesh;
  mesh.n_nodes = 3;
  mesh.edges = {0, 1, 2, 1};  // the second edge runs from node 2 to node 1
  mesh.normals = {1, 0, 0, 0, 0.6, 0.8};
  mesh.areas = {0.5, 2.0};
  FlowState state;
  state.Q = {1.0, 0.3, 0.1, 0.0, 2.5, 1.2, -0.2, 0.3, 0.1, 2.8, 0.9, 0.4, 0.0, -0.2, 2.2};
  const JacobianPattern pattern = JacobianPattern::build(mesh);
  EXPECT_EQ(pattern.row_ptr, (std::vector<block_offset>{0, 1, 3, 4}));
  EXPECT_EQ(pattern.col_idx, (std::vector<node_index>{1, 0, 2, 1}));
  EXPECT_EQ(pattern.slot_lr, (std::vector<block_offset>{0, 3}));  // Aoff[0,1], Aoff[2,1]
  EXPECT_EQ(pattern.slot_rl, (std::vector<block_offset>{1, 2}));  // Aoff[1,0], Aoff[1,2]

  Jacobian jacobian;
  assemble_reference(mesh, state, pattern, jacobian);
  double local0[kLocalJacobianEntries], local1[kLocalJacobianEntries], flux0[kBlock], flux1[kBlock];
  reference_local_jacobian(gather_edge(mesh, state, 0), local0, flux0);
  reference_local_jacobian(gather_edge(mesh, state, 1), local1, flux1);
  for (int m = 0; m < kBlock; ++m) {  // R_0 = +A F of edge 0; R_1 = -A F of edge 0, -A F of edge 1 (it is R there)
    EXPECT_EQ(jacobian.residual[0 * kBlock + m], flux0[m]);
    EXPECT_EQ(jacobian.residual[1 * kBlock + m], -flux0[m] - flux1[m]);
    EXPECT_EQ(jacobian.residual[2 * kBlock + m], flux1[m]);
  }
  for (int i = 0; i < kBlockEntries; ++i) {
    const double jl0 = local0[i], jr0 = local0[kBlockEntries + i];
    const double jl1 = local1[i], jr1 = local1[kBlockEntries + i];
    EXPECT_EQ(jacobian.adiag[0 * kBlockEntries + i], jl0);
    EXPECT_EQ(jacobian.adiag[1 * kBlockEntries + i], -jr0 - jr1);
    EXPECT_EQ(jacobian.adiag[2 * kBlockEntries + i], jl1);
    EXPECT_EQ(jacobian.aoff[0 * kBlockEntries + i], static_cast<float>(jr0));   // Aoff[0,1] = JR
    EXPECT_EQ(jacobian.aoff[1 * kBlockEntries + i], static_cast<float>(-jl0));  // Aoff[1,0] = -JL
    EXPECT_EQ(jacobian.aoff[2 * kBlockEntries + i], static_cast<float>(-jl1));  // Aoff[1,2] = -JL of edge 2->1
    EXPECT_EQ(jacobian.aoff[3 * kBlockEntries + i], static_cast<float>(jr1));   // Aoff[2,1] = JR of edge 2->1
  }
}

/// End to end: J v equals the central difference of the residual (docs/design.md, "Validation").
TEST(Assembly, JacobianTimesVectorMatchesCentralDifferenceOfTheResidual) {
  const auto [generated, pattern, jacobian] = test::assemble_generated("tet", 4);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> direction(generated.state.Q.size());
  for (std::size_t i = 0; i < direction.size(); ++i) direction[i] = uniform(random) * generated.state.Q[i];
  const double h = 1e-6;
  std::vector<double> plus = generated.state.Q, minus = generated.state.Q;
  for (std::size_t i = 0; i < plus.size(); ++i) plus[i] += h * direction[i], minus[i] -= h * direction[i];
  const auto r_plus = residual(generated.mesh, plus), r_minus = residual(generated.mesh, minus);
  const auto product = block_csr_multiply(pattern, jacobian, direction);
  double max_difference = 0.0, max_value = 0.0;
  for (std::size_t i = 0; i < product.size(); ++i) {
    const double central = (r_plus[i] - r_minus[i]) / (2 * h);
    max_difference = std::max(max_difference, std::abs(product[i] - central));
    max_value = std::max(max_value, std::abs(central));
  }
  // Aoff's float storage bounds the agreement at about 1e-7 relative.
  EXPECT_LE(max_difference / max_value, 1e-6);
  EXPECT_GT(max_value, 0.0);
}

TEST(Validation, IdenticalPasses_PerturbedFails_PatternMismatchFails) {
  const auto [generated, pattern, reference] = test::assemble_generated("prism", 3);

  Comparison same = compare_jacobians(pattern, reference, pattern, reference);
  EXPECT_TRUE(same.passed);
  EXPECT_EQ(same.adiag_error, 0.0);

  Jacobian perturbed = reference;
  perturbed.adiag[17] *= 1.0 + 1e-9;
  EXPECT_FALSE(compare_jacobians(pattern, perturbed, pattern, reference).passed);
  perturbed = reference;
  perturbed.aoff[5] = perturbed.aoff[5] * 1.001f + 1e-3f;
  EXPECT_FALSE(compare_jacobians(pattern, perturbed, pattern, reference).passed);
  perturbed = reference;
  perturbed.adiag[3] = std::nan("");
  EXPECT_FALSE(compare_jacobians(pattern, perturbed, pattern, reference).passed);

  JacobianPattern other = pattern;
  std::swap(other.col_idx[0], other.col_idx[1]);
  const Comparison mismatch = compare_jacobians(other, reference, pattern, reference);
  EXPECT_FALSE(mismatch.passed);
  EXPECT_FALSE(mismatch.same_pattern);
  EXPECT_NE(mismatch.pattern_message.find("col_idx[0]"), std::string::npos);
}

TEST(Validation, AResultThatDoesNotCoverTheReferenceFails) {
  const auto [generated, pattern, reference] = test::assemble_generated("tet", 2);
  // Nothing assembled (e.g. a timing loop that ran no repetition): the error loops see no values at all.
  const Comparison empty = compare_jacobians(pattern, Jacobian{}, pattern, reference);
  EXPECT_FALSE(empty.passed);
  EXPECT_NE(empty.pattern_message.find("the result has 0 Adiag values"), std::string::npos) << empty.pattern_message;

  Jacobian short_adiag = reference;
  short_adiag.adiag.resize(short_adiag.adiag.size() / 2);
  EXPECT_FALSE(compare_jacobians(pattern, short_adiag, pattern, reference).passed);
  Jacobian short_aoff = reference;
  short_aoff.aoff.pop_back();
  EXPECT_FALSE(compare_jacobians(pattern, short_aoff, pattern, reference).passed);
  // A short reference does not cover the result either.
  EXPECT_FALSE(compare_jacobians(pattern, reference, pattern, short_aoff).passed);
  EXPECT_TRUE(compare_jacobians(pattern, reference, pattern, reference).passed);
}

TEST(Assembly, ReferenceIsIndependentOfThreadCountAndDeterministic) {
  const auto [generated, pattern, first] = test::assemble_generated("mixed", 4);
  Jacobian second;
  assemble_reference(generated.mesh, generated.state, pattern, second);
  EXPECT_EQ(first.adiag, second.adiag);
  EXPECT_EQ(first.aoff, second.aoff);
}

}  // namespace
}  // namespace fluxjac

namespace fluxjac {
namespace {

// ---- node assembly: rows packed into thread blocks ----------------------------------------------------

/// Checks every property pack_rows promises for one pattern and capacity.
void expect_valid_packing(const std::vector<std::int32_t>& row_ptr, int capacity) {
  const RowBlocks packed = pack_rows(row_ptr, capacity);
  const std::int64_t n_rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  ASSERT_GE(packed.blocks(), 1);
  EXPECT_EQ(packed.first_row.front(), 0);
  EXPECT_EQ(packed.first_row.back(), n_rows);
  int max_entries = 0, max_rows = 0;
  for (std::int64_t b = 0; b < packed.blocks(); ++b) {
    const int first = packed.first_row[b], last = packed.first_row[b + 1];
    ASSERT_LT(first, last) << "block " << b << " is empty";
    const int entries = row_ptr[last] - row_ptr[first], rows = last - first;
    // Within capacity, or a single row that alone exceeds it.
    EXPECT_TRUE((entries <= capacity && rows <= capacity) || rows == 1)
        << "capacity " << capacity << ", block " << b << ": " << rows << " rows, " << entries << " entries";
    // Greedy: the next row would not have fitted.
    if (last < n_rows) {
      EXPECT_TRUE(row_ptr[last + 1] - row_ptr[first] > capacity || rows + 1 > capacity)
          << "capacity " << capacity << ", block " << b << " could have taken row " << last;
    }
    max_entries = std::max(max_entries, entries);
    max_rows = std::max(max_rows, rows);
  }
  EXPECT_EQ(packed.max_entries, max_entries);
  EXPECT_EQ(packed.max_rows, max_rows);
  // The tiles the kernel reads (and trusts for its shared-memory bounds): one per block, in order, covering every
  // row and entry exactly once, each within the packing's maxima, each entry range that of its rows.
  const std::vector<NodeTile> tiles = node_tiles(packed, row_ptr);
  ASSERT_EQ(static_cast<std::int64_t>(tiles.size()), packed.blocks());
  std::int64_t next_row = 0, next_entry = 0;
  for (std::size_t b = 0; b < tiles.size(); ++b) {
    const NodeTile& tile = tiles[b];
    EXPECT_EQ(tile.first_row, next_row) << "tile " << b;
    EXPECT_EQ(tile.first_entry, next_entry) << "tile " << b;
    EXPECT_GE(tile.rows, 1) << "tile " << b;
    EXPECT_LE(tile.rows, packed.max_rows) << "tile " << b;
    EXPECT_LE(tile.entries, packed.max_entries) << "tile " << b;
    EXPECT_EQ(tile.first_entry, row_ptr[tile.first_row]) << "tile " << b;
    EXPECT_EQ(tile.entries, row_ptr[tile.first_row + tile.rows] - row_ptr[tile.first_row]) << "tile " << b;
    next_row = tile.first_row + tile.rows;
    next_entry = tile.first_entry + tile.entries;
  }
  EXPECT_EQ(next_row, n_rows);
  EXPECT_EQ(next_entry, row_ptr.back());
}

TEST(NodeRowBlocks, PackWholeRowsGreedilyWithinCapacity) {
  const GeneratedMesh generated = test::generate_mesh("mixed", 5, "random");
  const JacobianPattern pattern = JacobianPattern::build(generated.mesh);
  const std::vector<std::int32_t> row_ptr(pattern.row_ptr.begin(), pattern.row_ptr.end());
  for (int capacity : {1, 7, 32, 128, 1 << 20}) expect_valid_packing(row_ptr, capacity);
  EXPECT_EQ(pack_rows(row_ptr, 1 << 20).blocks(), 1);
  EXPECT_EQ(pack_rows(row_ptr, 1).blocks(), pattern.n_nodes);  // every row is longer than 1
}

TEST(NodeRowBlocks, RowsWithoutEntriesStillCountAgainstTheCapacity) {
  // Isolated nodes have empty rows: without the row limit one block could hold arbitrarily many.
  const std::vector<std::int32_t> row_ptr = {0, 0, 0, 0, 0, 3, 3, 10, 10};
  expect_valid_packing(row_ptr, 2);
  expect_valid_packing(row_ptr, 4);
  EXPECT_EQ(pack_rows(row_ptr, 2).first_row, (std::vector<std::int32_t>{0, 2, 4, 5, 6, 7, 8}));
}

// ---- assembly strategy: `auto` is each variant's preferred one -----------------------------------------

TEST(AssemblyStrategies, AutoResolvesToEachGpuVariantsPreferredStrategy) {
  EXPECT_EQ(parse_assembly_strategy("auto"), AssemblyStrategy::kAuto);
  EXPECT_EQ(parse_assembly_strategy("node"), AssemblyStrategy::kNode);
  EXPECT_EQ(std::string(to_string(AssemblyStrategy::kAuto)), "auto");
  EXPECT_THROW(parse_assembly_strategy("nodes"), Error);
  for (const VariantInfo& info : Registry::instance().list()) {
    if (info.backend != Backend::kCuda) continue;
    EXPECT_NE(info.preferred_assembly, AssemblyStrategy::kAuto) << info.name;
    EXPECT_EQ(resolve_strategy(AssemblyStrategy::kAuto, info), info.preferred_assembly) << info.name;
    EXPECT_EQ(resolve_strategy(AssemblyStrategy::kEdge, info), AssemblyStrategy::kEdge) << info.name;
    EXPECT_EQ(resolve_strategy(AssemblyStrategy::kNode, info), AssemblyStrategy::kNode) << info.name;
  }
}

// ---- tunings: one table, a row for every GPU variant ---------------------------------------------------

auto tuning_fields(const GpuTuning& t) {
  return std::make_tuple(std::string(t.variant), t.architecture, t.max_registers, t.edges_per_block,
                         t.node_tile_entries, t.node_block_threads, t.node_batch, t.assembly);
}

TEST(Tunings, EveryRegisteredGpuVariantRunsItsOwnRowOfTheTable) {
  std::set<std::string> gpu_variants;
  for (const VariantInfo& info : Registry::instance().list()) {
    SCOPED_TRACE(info.name);
    if (info.backend != Backend::kCuda) {
      EXPECT_FALSE(info.tuning.has_value());  // the CPU reference is never tuned
      continue;
    }
    gpu_variants.insert(info.name);
    ASSERT_TRUE(info.tuning.has_value());
    EXPECT_EQ(tuning_fields(*info.tuning), tuning_fields(tuning_of(info.name)));
    EXPECT_EQ(info.preferred_assembly, info.tuning->assembly);
  }
  EXPECT_EQ(gpu_variants.size(), kPaperVariants.size());
  // No row for a variant that is not registered, and one row per variant and architecture.
  std::set<std::pair<std::string, int>> keys;
  for (const GpuTuning& row : kGpuTunings) {
    EXPECT_TRUE(gpu_variants.count(std::string(row.variant))) << row.variant << " has a row but is not registered";
    EXPECT_TRUE(keys.insert({std::string(row.variant), row.architecture}).second)
        << row.variant << " has two rows for sm_" << row.architecture;
  }
}

TEST(Tunings, EveryRowIsALaunchableTuningMeasuredOnSm90) {
  for (const GpuTuning& row : kGpuTunings) {
    SCOPED_TRACE(std::string(row.variant));
    EXPECT_EQ(row.architecture, kSm90);
    EXPECT_GT(row.max_registers, 0);
    EXPECT_LE(row.max_registers, 255);
    EXPECT_GT(row.edges_per_block, 0);
    EXPECT_GT(row.node_tile_entries, 0);
    EXPECT_GT(row.node_block_threads, 0);
    EXPECT_EQ(row.node_block_threads % 32, 0) << "whole warps";
    EXPECT_GT(row.node_batch, 0);
    EXPECT_NE(row.assembly, AssemblyStrategy::kAuto);
  }
  EXPECT_THROW(tuning_of("dn_3"), std::invalid_argument);
  EXPECT_THROW(tuning_of("hd", 80), std::invalid_argument);
}

}  // namespace
}  // namespace fluxjac
