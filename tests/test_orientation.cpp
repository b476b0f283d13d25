// ctest-label: unit
// The adjoint orientation (docs/design.md, "The adjoint orientation"): A^T assembled by every GPU variant's lanes run
// on the CPU with the kernels' rules (both strategies), and by the CPU reference, equals the transpose of the A they
// assemble, block for block; the rules themselves; and the Jacobian file's orientation.
#include <functional>
#include <string>
#include <vector>

#include "assembly/orientation.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "reference/emulated_assembly.hpp"
#include "reference/reference.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

TEST(OrientationRules, ComputedEntryMirrorsTheBlockInATransposeOnly) {
  for (int m = 0; m < kBlock; ++m)
    for (int k = 0; k < kBlock; ++k) {
      EXPECT_EQ(computed_entry(block_entry(m, k), false), block_entry(m, k));
      EXPECT_EQ(computed_entry(block_entry(m, k), true), block_entry(k, m));
      EXPECT_EQ(computed_entry(computed_entry(block_entry(m, k), true), true), block_entry(m, k));
    }
  // A: slot (L, R) holds JR, slot (R, L) holds JL; A^T: each slot its own side's block.
  EXPECT_EQ(off_diagonal_side(0, false), 1);
  EXPECT_EQ(off_diagonal_side(1, false), 0);
  EXPECT_EQ(off_diagonal_side(0, true), 0);
  EXPECT_EQ(off_diagonal_side(1, true), 1);
}

TEST(OrientationRules, NodeTargetsAreTheTransposedSlotsInAAndTheOwnSlotsInATranspose) {
  const GeneratedMesh generated = test::generate_mesh("prism", 3, "random");
  const JacobianPattern pattern = JacobianPattern::build(generated.mesh);
  const std::vector<block_offset> of_a = node_entry_targets(pattern, Orientation::kA);
  const std::vector<block_offset> of_transpose = node_entry_targets(pattern, Orientation::kTransposed);
  ASSERT_EQ(static_cast<block_offset>(of_a.size()), pattern.nnz());
  for (std::int64_t i = 0; i < pattern.n_nodes; ++i)
    for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1]; ++k) {
      EXPECT_EQ(of_transpose[k], k);
      // The slot of (j, i): in row j, column i.
      const node_index j = pattern.col_idx[k];
      const block_offset target = of_a[k];
      EXPECT_GE(target, pattern.row_ptr[j]);
      EXPECT_LT(target, pattern.row_ptr[j + 1]);
      EXPECT_EQ(pattern.col_idx[target], i);
    }
  EXPECT_EQ(std::string(to_string(Orientation::kTransposed)), "A^T");
  EXPECT_EQ(find_named<Orientation>("A^T"), Orientation::kTransposed);
  EXPECT_EQ(find_named<Orientation>("A"), Orientation::kA);
  EXPECT_FALSE(find_named<Orientation>("AT").has_value());
}

/// \brief The meshes of the orientation tests: two sizes, three orderings (random order makes the node kernel visit
/// rows in RCM order on the GPU; here it scatters the slots).
struct OrientationMesh {
  const char* kind;
  int n;
  const char* order;
};
const OrientationMesh kMeshes[] = {{"tet", 2, "natural"}, {"mixed", 4, "random"}, {"prism", 5, "rcm"}};

TEST(ReferenceOrientation, ATransposeIsTheTransposeOfA) {
  for (const OrientationMesh& m : kMeshes) {
    SCOPED_TRACE(fmt::format("{}:{}:{}", m.kind, m.n, m.order));
    const auto [generated, pattern, a] = test::assemble_generated(m.kind, m.n, m.order);
    Jacobian transpose;
    assemble_reference(generated.mesh, generated.state, pattern, transpose, Orientation::kTransposed);
    const Jacobian expected = test::transposed(pattern, a);
    EXPECT_TRUE(test::bitwise_equal(transpose.adiag, expected.adiag));
    EXPECT_TRUE(test::bitwise_equal(transpose.aoff, expected.aoff));
    // Not the identity: the test would not notice a transpose that changed nothing.
    EXPECT_FALSE(test::bitwise_equal(transpose.aoff, a.aoff));
    EXPECT_FALSE(test::bitwise_equal(transpose.adiag, a.adiag));
  }
}

/// \brief Every GPU variant and strategy, emulated on the CPU with the GPU kernels' rules (every build).
class EmulatedOrientation : public ::testing::TestWithParam<test::VariantStrategy> {};

TEST_P(EmulatedOrientation, ATransposeIsTheTransposeOfABlockForBlock) {
  const VariantInfo info = test::variant_info(GetParam().variant);
  for (const OrientationMesh& m : kMeshes) {
    SCOPED_TRACE(fmt::format("{}:{}:{}", m.kind, m.n, m.order));
    const auto [generated, pattern, reference] = test::assemble_generated(m.kind, m.n, m.order);
    Jacobian a, transpose;
    emulate_assembly(info, GetParam().strategy, generated.mesh, generated.state, pattern, Orientation::kA, a);
    emulate_assembly(info, GetParam().strategy, generated.mesh, generated.state, pattern, Orientation::kTransposed,
                     transpose);
    // The same values stored elsewhere, summed in the same order: bit for bit.
    const Jacobian expected = test::transposed(pattern, a);
    EXPECT_TRUE(test::bitwise_equal(transpose.adiag, expected.adiag)) << "Adiag";
    EXPECT_TRUE(test::bitwise_equal(transpose.aoff, expected.aoff)) << "Aoff";
    // And each orientation validates against the reference's own.
    Jacobian reference_transpose;
    assemble_reference(generated.mesh, generated.state, pattern, reference_transpose, Orientation::kTransposed);
    const Comparison of_a = compare_jacobians(pattern, a, pattern, reference);
    const Comparison of_transpose = compare_jacobians(pattern, transpose, pattern, reference_transpose);
    EXPECT_TRUE(of_a.passed) << "A: Adiag " << of_a.adiag_error << ", Aoff " << of_a.aoff_error;
    EXPECT_TRUE(of_transpose.passed) << "A^T: Adiag " << of_transpose.adiag_error << ", Aoff "
                                     << of_transpose.aoff_error;
    // A^T against A's reference fails: the comparison tells the orientations apart.
    EXPECT_FALSE(compare_jacobians(pattern, transpose, pattern, reference).passed);
  }
}

INSTANTIATE_TEST_SUITE_P(CpuEmulated, EmulatedOrientation, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);

// ---- the Jacobian file records its orientation --------------------------------------------------------------

class OrientationFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto assembled = test::assemble_generated("tet", 2);
    pattern_ = assembled.pattern;
    jacobian_ = assembled.reference;
  }
  test::TempDir dir_;
  JacobianPattern pattern_;
  Jacobian jacobian_;
};

TEST_F(OrientationFile, RoundTripOfBothOrientations) {
  for (Orientation orientation : {Orientation::kA, Orientation::kTransposed}) {
    const std::string path = dir_.file(std::string(to_string(orientation) == std::string("A") ? "a" : "at") + ".h5");
    JacobianFileInfo info{"hd", "box.h5", "box.h5", "test"};
    info.orientation = orientation;
    write_jacobian(path, pattern_, jacobian_, info);
    const StoredJacobian stored = read_jacobian(path);
    EXPECT_EQ(stored.info.orientation, orientation);
    EXPECT_EQ(stored.info.format_version, kJacobianFormatVersion);
    EXPECT_EQ(read_jacobian_info(path).orientation, orientation);
    const h5::File file = h5::File::open(path);
    EXPECT_EQ(h5::read_integer_attribute(file, "/", "version"), 3);
    EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "orientation"), std::string(to_string(orientation)));
  }
}

TEST_F(OrientationFile, AVersionOneFileWithoutTheAttributeHoldsA) {
  const std::string path = dir_.file("v1.h5");
  write_jacobian(path, pattern_, jacobian_, {"hd", "box.h5", "box.h5", "test"});
  {
    const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::remove_attribute(file, "/", "version");
    h5::write_attribute(file, "/", "version", std::int32_t{1});
    h5::remove_attribute(file, "/jacobian", "orientation");
  }
  const StoredJacobian stored = read_jacobian(path);
  EXPECT_EQ(stored.info.orientation, Orientation::kA);
  EXPECT_EQ(stored.info.format_version, 1);
  EXPECT_EQ(read_jacobian_info(path).orientation, Orientation::kA);
  EXPECT_TRUE(test::bitwise_equal(stored.jacobian.aoff, jacobian_.aoff));
}

TEST_F(OrientationFile, AMissingOrUnknownOrientationOrVersionIsRefused) {
  const std::string path = dir_.file("bad.h5");
  write_jacobian(path, pattern_, jacobian_, {"hd", "box.h5", "box.h5", "test"});
  {
    const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::remove_attribute(file, "/jacobian", "orientation");
  }
  test::expect_invalid([&] { read_jacobian(path); }, {"bad.h5", "orientation", "missing", "A^T"});
  test::expect_invalid([&] { read_jacobian_info(path); }, {"bad.h5", "orientation", "missing"});
  {
    const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::write_attribute(file, "/jacobian", "orientation", std::string("transposed"));
  }
  test::expect_invalid([&] { read_jacobian(path); }, {"bad.h5", "\"transposed\"", "\"A\" or \"A^T\""});
  {
    const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::write_attribute(file, "/jacobian", "orientation", std::string(300000, 'x'));
  }
  // A huge value is quoted by its start and its length, not echoed whole into the error line.
  for (const auto& read :
       std::vector<std::function<void()>>{[&] { read_jacobian(path); }, [&] { read_jacobian_info(path); }}) {
    test::expect_invalid(read, {"bad.h5", std::string(80, 'x') + "... (300000 bytes)\"", "\"A\" or \"A^T\""});
    try {
      read();
    } catch (const Error& error) {
      EXPECT_LT(std::string(error.what()).size(), 300u) << error.what();
    }
  }
  {
    const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
    h5::remove_attribute(file, "/", "version");
    h5::write_attribute(file, "/", "version", std::int32_t{4});
  }
  test::expect_invalid([&] { read_jacobian_info(path); }, {"bad.h5", "version", "4", "versions 1 to 3"});
}

}  // namespace
}  // namespace fluxjac
