// ctest-label: unit
// Jacobian files (docs/design.md, "Jacobian output"): a bitwise round trip, the documented layout, one test per kind of
// invalid file (one-line messages naming the file, dataset and first offending index), atomic writes, `fluxjac info`.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "cli/file_info.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::bitwise_equal;
using test::expect_invalid;

/// The pattern of a 4-cycle 0-1-2-3-0: every row has two neighbours.
JacobianPattern cycle_pattern() {
  JacobianPattern pattern;
  pattern.n_nodes = 4;
  pattern.row_ptr = {0, 2, 4, 6, 8};
  pattern.col_idx = {1, 3, 0, 2, 1, 3, 0, 2};
  return pattern;
}

/// Values that a lossy path would change: negative zero, subnormals, extremes, non-terminating fractions.
Jacobian cycle_values() {
  Jacobian jacobian;
  jacobian.resize(cycle_pattern(), true);
  for (std::size_t i = 0; i < jacobian.adiag.size(); ++i)
    jacobian.adiag[i] = std::sin(static_cast<double>(i)) / 3.0 * std::pow(10.0, static_cast<double>(i % 7) - 3);
  for (std::size_t i = 0; i < jacobian.aoff.size(); ++i)
    jacobian.aoff[i] = static_cast<float>(std::cos(static_cast<double>(i)) / 7.0);
  jacobian.adiag[1] = -0.0;
  jacobian.adiag[2] = std::numeric_limits<double>::denorm_min();
  jacobian.adiag[3] = std::numeric_limits<double>::max();
  jacobian.aoff[1] = -0.0f;
  jacobian.aoff[2] = std::numeric_limits<float>::denorm_min();
  return jacobian;
}

const JacobianFileInfo kInfo{"dn5_2", "meshes/wing.h5", "states/wing-m085.h5", "0.1.0 (abc1234)"};

/// A valid Jacobian file, rewritten before each test, and the means to spoil it.
class JacobianIO : public ::testing::Test {
 protected:
  void SetUp() override { write_good(); }
  void write_good() { write_jacobian(path_, cycle_pattern(), cycle_values(), kInfo); }

  template <class T>
  void replace(const std::string& dataset, const std::vector<T>& values, const std::vector<std::int64_t>& shape) {
    h5::File file = h5::File::open(path_, h5::File::Mode::kReadWrite);
    h5::replace(file, dataset, values, shape);
    file.close();
  }
  void replace_row_ptr(const std::vector<std::int64_t>& row_ptr) { replace("/jacobian/row_ptr", row_ptr, {5}); }
  void replace_col_idx(const std::vector<std::int32_t>& col_idx) { replace("/jacobian/col_idx", col_idx, {8}); }

  void expect_rejected(const std::vector<std::string>& fragments) {
    std::vector<std::string> all = fragments;
    all.push_back("jac.h5");
    expect_invalid([&] { read_jacobian(path_); }, all);
  }

  test::TempDir dir_;
  std::string path_ = dir_.file("jac.h5");
};

TEST_F(JacobianIO, RoundTripIsBitwiseExact) {
  const StoredJacobian stored = read_jacobian(path_);
  const JacobianPattern expected = cycle_pattern();
  EXPECT_EQ(stored.pattern.n_nodes, 4);
  EXPECT_EQ(stored.pattern.row_ptr, expected.row_ptr);
  EXPECT_EQ(stored.pattern.col_idx, expected.col_idx);
  EXPECT_TRUE(stored.pattern.slot_lr.empty());
  EXPECT_TRUE(bitwise_equal(stored.jacobian.adiag, cycle_values().adiag));
  EXPECT_TRUE(bitwise_equal(stored.jacobian.aoff, cycle_values().aoff));
  EXPECT_EQ(stored.info.variant, kInfo.variant);
  EXPECT_EQ(stored.info.mesh_file, kInfo.mesh_file);
  EXPECT_EQ(stored.info.state_file, kInfo.state_file);
  EXPECT_EQ(stored.info.version, kInfo.version);
}

TEST_F(JacobianIO, FileLayoutIsTheDocumentedOne) {
  const h5::File file = h5::File::open(path_);
  EXPECT_EQ(h5::read_format(file), std::optional<std::string>("fluxjac-jacobian"));
  EXPECT_EQ(h5::read_integer_attribute(file, "/", "version"), std::optional<std::int64_t>(3));
  EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "orientation"), std::optional<std::string>("A"));
  EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "aoff_precision"), std::optional<std::string>("f32"));
  EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "variant"), std::optional<std::string>("dn5_2"));
  const auto expect_dataset = [&](const char* path, h5::ElementType type, std::vector<std::int64_t> shape) {
    const h5::DatasetInfo info = h5::describe_dataset(file, path);
    EXPECT_EQ(info.type.name(), type.name()) << path;
    EXPECT_EQ(info.shape, shape) << path;
  };
  expect_dataset("/jacobian/adiag", h5::kFloat64, {4, 5, 5});
  expect_dataset("/jacobian/row_ptr", h5::kInt64, {5});
  expect_dataset("/jacobian/col_idx", h5::kInt32, {8});
  expect_dataset("/jacobian/aoff", h5::kFloat32, {8, 5, 5});
  expect_dataset("/residual", h5::kFloat64, {4, 5});
}

TEST_F(JacobianIO, MissingProvenanceAttributesReadAsEmpty) {
  {
    h5::File file = h5::File::open(path_, h5::File::Mode::kReadWrite);
    h5::remove_attribute(file, "/jacobian", "variant");
    file.close();
  }
  EXPECT_EQ(read_jacobian(path_).info.variant, "");
}

/// The attribute aoff_precision (docs/formats.md): written as recorded, read back; a file without it (written before
/// Aoff could be assembled in bfloat16) holds f32; any other value is refused, f64 too (no assembly stores it).
TEST_F(JacobianIO, AoffPrecisionIsRecordedAndAFileWithoutItHoldsF32) {
  JacobianFileInfo bf16 = kInfo;
  bf16.aoff_precision = AoffPrecision::kBf16;
  write_jacobian(path_, cycle_pattern(), cycle_values(), bf16);
  EXPECT_EQ(read_jacobian(path_).info.aoff_precision, AoffPrecision::kBf16);
  EXPECT_EQ(read_jacobian_info(path_).aoff_precision, AoffPrecision::kBf16);
  for (const char* value : {"f64", "bf8"}) {
    {
      h5::File file = h5::File::open(path_, h5::File::Mode::kReadWrite);
      h5::remove_attribute(file, "/jacobian", "aoff_precision");
      h5::write_attribute(file, "/jacobian", "aoff_precision", value);
      file.close();
    }
    expect_invalid([&] { read_jacobian_info(path_); },
                   {"jac.h5", "\"aoff_precision\"", fmt::format("\"{}\"", value), "expected \"f32\" or \"bf16\""});
  }
  {
    h5::File file = h5::File::open(path_, h5::File::Mode::kReadWrite);
    h5::remove_attribute(file, "/jacobian", "aoff_precision");
    file.close();
  }
  EXPECT_EQ(read_jacobian(path_).info.aoff_precision, AoffPrecision::kF32);
}

/// A bfloat16 is the high half of a float32: widening is exact, and rounding a vector rounds each value
/// (round_to_bf16, to the nearest with ties to even); an assembly takes f32 or bf16, never f64.
TEST(AoffInBf16, WideningIsExactAndAnAssemblyTakesF32OrBf16) {
  EXPECT_EQ(widen_bf16(0x3f80), 1.0f);
  EXPECT_EQ(widen_bf16(0xc040), -3.0f);
  EXPECT_EQ(widen_bf16(0x3f81), 1.0f + 0.0078125f);  // 1 + 2^-7, the next bfloat16 above 1
  std::vector<float> values{1.0f + 0.00390625f, 1.0f + 3 * 0.00390625f, -0.0f, 2.5e-40f};
  round_to_bf16(values);
  EXPECT_EQ(values[0], 1.0f);              // a tie, to the even 1
  EXPECT_EQ(values[1], 1.0f + 0.015625f);  // a tie, to the even 1 + 2^-6
  EXPECT_TRUE(std::signbit(values[2]));    // -0 stays -0
  for (const float value : values) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    EXPECT_EQ(bits & 0xffffu, 0u) << value;  // each a bfloat16 held in a float32
    EXPECT_EQ(widen_bf16(static_cast<std::uint16_t>(bits >> 16)), value);
    EXPECT_EQ(bf16_bits(value), bits >> 16) << value;  // widen_bf16's inverse
  }
  std::vector<float> again = values;  // rounding a bfloat16 leaves it as it is
  round_to_bf16(again);
  for (std::size_t k = 0; k < values.size(); ++k) EXPECT_EQ(std::memcmp(&again[k], &values[k], sizeof(float)), 0);
  EXPECT_EQ(parse_assembly_precision("bf16"), AoffPrecision::kBf16);
  EXPECT_EQ(parse_assembly_precision("f32"), AoffPrecision::kF32);
  for (const auto& [name, words] : {std::pair{"f64",
                                              "f64 exists only for the solve with the CPU reference (fluxjac "
                                              "solve --variant reference --aoff-precision f64)"},
                                    std::pair{"f16", "use f32 or bf16"}}) {
    try {
      parse_assembly_precision(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    }
  }
  // Validation of a bf16 Aoff: at least 2^-8, more when asked.
  EXPECT_EQ(validation_tolerances({}, AoffPrecision::kBf16).aoff, 1.0 / 256);
  EXPECT_EQ(validation_tolerances({}, AoffPrecision::kF32).aoff, Tolerances{}.aoff);
  EXPECT_EQ(validation_tolerances({1e-12, 0.5, 1e-10}, AoffPrecision::kBf16).aoff, 0.5);
}

TEST_F(JacobianIO, MeshFileIsNotAJacobian) {
  EdgeMesh mesh;
  mesh.n_nodes = 2;
  mesh.edges = {0, 1};
  mesh.normals = {1.0, 0.0, 0.0};
  mesh.areas = {1.0};
  const std::string mesh_path = dir_.file("mesh.h5");
  write_edge_mesh(mesh_path, mesh, nullptr);
  expect_invalid([&] { read_jacobian(mesh_path); },
                 {"mesh.h5", "\"fluxjac-edge-mesh\"", "expected \"fluxjac-jacobian\""});
  expect_invalid([&] { read_jacobian(dir_.file("absent.h5")); }, {"absent.h5", "not found"});
}

TEST_F(JacobianIO, MissingDatasetsAreRejected) {
  for (const char* dataset : {"/jacobian/adiag", "/jacobian/row_ptr", "/jacobian/col_idx", "/jacobian/aoff"}) {
    write_good();
    {
      h5::File file = h5::File::open(path_, h5::File::Mode::kReadWrite);
      h5::remove(file, dataset);
      file.close();
    }
    SCOPED_TRACE(dataset);
    expect_rejected({dataset, "not found"});
  }
}

TEST_F(JacobianIO, MisshapedDatasetsAreRejected) {
  replace("/jacobian/adiag", cycle_values().adiag, {4, 25});
  expect_rejected({"/jacobian/adiag", "shape [4, 25]", "expected [*, 5, 5]"});
  write_good();
  replace("/jacobian/row_ptr", std::vector<std::int64_t>{0, 2, 4, 8}, {4});
  expect_rejected({"/jacobian/row_ptr", "shape [4]", "expected [5]"});
  write_good();
  replace("/jacobian/col_idx", cycle_pattern().col_idx, {4, 2});
  expect_rejected({"/jacobian/col_idx", "shape [4, 2]", "expected [*]"});
  write_good();
  replace("/jacobian/aoff", std::vector<float>(7 * 25, 0.0f), {7, 5, 5});
  expect_rejected({"/jacobian/aoff", "shape [7, 5, 5]", "expected [8, 5, 5]"});
}

TEST_F(JacobianIO, WrongTypesAreRejected) {
  const Jacobian values = cycle_values();
  replace("/jacobian/aoff", std::vector<double>(values.aoff.begin(), values.aoff.end()), {8, 5, 5});
  expect_rejected({"/jacobian/aoff", "type float64", "expected float32"});
  write_good();
  replace("/jacobian/adiag", std::vector<float>(values.adiag.begin(), values.adiag.end()), {4, 5, 5});
  expect_rejected({"/jacobian/adiag", "type float32", "expected float64"});
  write_good();
  replace("/jacobian/col_idx", std::vector<double>(8, 1.0), {8});
  expect_rejected({"/jacobian/col_idx", "type float64", "expected int32 or int64"});
}

TEST_F(JacobianIO, BadRowPointersAreRejected) {
  replace_row_ptr({1, 2, 4, 6, 8});
  expect_rejected({"/jacobian/row_ptr[0]", "is 1", "expected 0"});
  replace_row_ptr({0, 2, 1, 6, 8});
  expect_rejected({"/jacobian/row_ptr[2]", "must not decrease"});
  replace_row_ptr({0, 2, 4, 6, 7});
  expect_rejected({"/jacobian/row_ptr[4]", "is 7", "nnz = 8"});
}

TEST_F(JacobianIO, BadColumnsAreRejected) {
  replace_col_idx({1, 3, 0, 4, 1, 3, 0, 2});
  expect_rejected({"/jacobian/col_idx[3]", "column 4", "out of range [0, 4)"});
  replace_col_idx({1, 3, -1, 2, 1, 3, 0, 2});
  expect_rejected({"/jacobian/col_idx[2]", "column -1", "out of range"});
  replace_col_idx({3, 1, 0, 2, 1, 3, 0, 2});
  expect_rejected({"/jacobian/col_idx[1]", "strictly ascending", "row 0"});
  replace_col_idx({1, 3, 1, 2, 1, 3, 0, 2});
  expect_rejected({"/jacobian/col_idx[2]", "diagonal of row 1"});
  replace_col_idx({1, 3, 0, 2, 1, 1, 0, 2});
  expect_rejected({"/jacobian/col_idx[5]", "strictly ascending", "row 2"});
}

TEST_F(JacobianIO, NonFiniteValuesAreRejected) {
  Jacobian values = cycle_values();
  values.adiag[2 * 25 + 1 * 5 + 3] = std::numeric_limits<double>::quiet_NaN();
  replace("/jacobian/adiag", values.adiag, {4, 5, 5});
  expect_rejected({"/jacobian/adiag[2]", "entry (1, 3)", "finite"});
  values.aoff[5 * 25 + 4 * 5] = -std::numeric_limits<float>::infinity();
  replace("/jacobian/adiag", cycle_values().adiag, {4, 5, 5});
  replace("/jacobian/aoff", values.aoff, {8, 5, 5});
  expect_rejected({"/jacobian/aoff[5]", "entry (4, 0)", "finite"});
}

TEST_F(JacobianIO, FailedWriteLeavesNoFile) {
  JacobianPattern broken = cycle_pattern();
  broken.row_ptr.pop_back();
  const std::string target = dir_.file("new.h5");
  try {
    write_jacobian(target, broken, cycle_values(), kInfo);
    ADD_FAILURE() << "no Error for an inconsistent pattern";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kRuntime);
    EXPECT_NE(std::string(error.what()).find("new.h5"), std::string::npos) << error.what();
  }
  Jacobian short_values = cycle_values();
  short_values.aoff.resize(7 * 25);
  EXPECT_THROW(write_jacobian(path_, cycle_pattern(), short_values, kInfo), Error);
  std::vector<std::string> left_behind;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    left_behind.push_back(entry.path().filename().string());
  EXPECT_EQ(left_behind, std::vector<std::string>{"jac.h5"});
  EXPECT_EQ(read_jacobian(path_).pattern.nnz(), 8);  // the earlier file is intact
}

TEST_F(JacobianIO, DescribeSummarisesTheJacobian) {
  const std::string text = describe_file(path_);
  for (const char* fragment :
       {"fluxjac Jacobian", "nodes (block rows)", "off-diagonal blocks", "8 (2 per row)", "dn5_2", "meshes/wing.h5",
        "states/wing-m085.h5", "0.1.0 (abc1234)", "max |Adiag|", "1.79769e+308", "max |Aoff|"})
    EXPECT_NE(text.find(fragment), std::string::npos) << "\"" << fragment << "\" missing in:\n" << text;
}

}  // namespace
}  // namespace fluxjac
