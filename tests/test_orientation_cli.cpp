// ctest-label: cli
// The adjoint orientation from the command line (docs/design.md, "The adjoint orientation"): `run --transpose` writes
// A^T, the transpose of what `run` writes, and says so in the file and in `info`; the config key; a stored reference
// of the other orientation refused with nothing written; bench records, CSV and table carrying the orientation, and
// `compare` keying cases by it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "reference/reference.hpp"
#include "run_on_box.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::read_text;
using test::run_fluxjac;
using test::TempDir;

class OrientationCli : public test::RunOnBox {};

TEST_F(OrientationCli, TransposeWritesTheTransposeOfTheDefaultFileAndInfoShowsIt) {
  const std::string of_a = dir_.file("a.h5"), of_transpose = dir_.file("at.h5");
  run_to(of_a);
  run_to(of_transpose, "--transpose");
  const StoredJacobian a = read_jacobian(of_a), transpose = read_jacobian(of_transpose);
  EXPECT_EQ(a.info.orientation, Orientation::kA);
  EXPECT_EQ(transpose.info.orientation, Orientation::kTransposed);
  EXPECT_EQ(a.pattern.row_ptr, transpose.pattern.row_ptr);
  EXPECT_EQ(a.pattern.col_idx, transpose.pattern.col_idx);
  JacobianPattern pattern = a.pattern;
  const Jacobian expected = test::transposed(pattern, a.jacobian);
  EXPECT_TRUE(test::bitwise_equal(transpose.jacobian.adiag, expected.adiag));
  EXPECT_TRUE(test::bitwise_equal(transpose.jacobian.aoff, expected.aoff));

  const CommandResult info = run_fluxjac(fmt::format("info '{}'", of_transpose));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("version 3"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("orientation           A^T"), std::string::npos) << info.output;
  const CommandResult info_a = run_fluxjac(fmt::format("info '{}'", of_a));
  EXPECT_NE(info_a.output.find("orientation           A = dR/dQ"), std::string::npos) << info_a.output;
}

TEST_F(OrientationCli, TheConfigKeyTransposeDoesWhatTheOptionDoesAndAMisspellingIsNamed) {
  const std::string output = dir_.file("at.h5");
  const CommandResult result = run_with_config("transpose = true\nthreads = 1\n", output);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(read_jacobian(output).info.orientation, Orientation::kTransposed);

  const CommandResult typo = run_with_config("transpos = true\n");
  EXPECT_EQ(typo.exit_code, 3) << typo.output;
  EXPECT_NE(typo.output.find("unknown key 'transpos'; did you mean 'transpose'?"), std::string::npos) << typo.output;
  const CommandResult option = run_fluxjac(fmt::format("run --mesh '{}' --tranpose -q", mesh_));
  EXPECT_EQ(option.exit_code, 3) << option.output;
  EXPECT_NE(option.output.find("did you mean '--transpose'?"), std::string::npos) << option.output;
  const CommandResult help = run_fluxjac("bench --help");
  EXPECT_NE(help.output.find("--transpose"), std::string::npos) << help.output;
}

TEST_F(OrientationCli, AStoredReferenceOfTheOtherOrientationIsRefusedAndNothingIsWritten) {
  const std::string of_a = dir_.file("a.h5"), of_transpose = dir_.file("at.h5");
  run_to(of_a);
  run_to(of_transpose, "--transpose");
  const std::string output = dir_.file("out.h5"), csv = dir_.file("out.csv"), json = dir_.file("out.json");
  for (const auto& [reference, options, held, assembled, advice] :
       {std::tuple{of_a, "--transpose", "orientation A", "assembles A^T", "drop --transpose"},
        std::tuple{of_transpose, "", "orientation A^T", "assembles A", "add --transpose"}}) {
    const CommandResult result =
        run_fluxjac(fmt::format("run --mesh '{}' --reference '{}' {} -q -o '{}' --csv '{}' --json '{}'", mesh_,
                                reference, options, output, csv, json));
    EXPECT_EQ(result.exit_code, 2) << result.output;
    for (const char* fragment : {held, assembled, advice})
      EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment << ": " << result.output;
    for (const std::string& file : {output, csv, json}) EXPECT_FALSE(std::filesystem::exists(file)) << file;
  }
  // The same orientation validates.
  const CommandResult same =
      run_fluxjac(fmt::format("run --mesh '{}' --reference '{}' --transpose -q", mesh_, of_transpose));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("PASS"), std::string::npos) << same.output;
}

TEST_F(OrientationCli, BenchRecordsCarryTheOrientationAndCompareKeysCasesByIt) {
  const std::string of_a = dir_.file("a.json"), of_transpose = dir_.file("at.json"), csv = dir_.file("at.csv");
  const CommandResult a =
      run_fluxjac(fmt::format("bench --mesh '{}' --variant reference --reps 1 --warmup 0 --json '{}'", mesh_, of_a));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output.find("A^T"), std::string::npos) << "no orientation column for A alone: " << a.output;
  const CommandResult transpose = run_fluxjac(
      fmt::format("bench --mesh '{}' --variant reference --reps 1 --warmup 0 --transpose --json '{}' --csv '{}'", mesh_,
                  of_transpose, csv));
  ASSERT_EQ(transpose.exit_code, 0) << transpose.output;
  EXPECT_NE(transpose.output.find("matrix"), std::string::npos) << transpose.output;
  EXPECT_NE(transpose.output.find("A^T"), std::string::npos) << transpose.output;

  const nlohmann::json runs_a = nlohmann::json::parse(read_text(of_a))["runs"];
  const nlohmann::json runs_transpose = nlohmann::json::parse(read_text(of_transpose))["runs"];
  ASSERT_EQ(runs_transpose.size(), 1u);
  EXPECT_EQ(runs_a[0]["orientation"], "A");
  EXPECT_EQ(runs_transpose[0]["orientation"], "A^T");
  EXPECT_EQ(runs_transpose[0]["validation"]["passed"], true);
  const std::string table = read_text(csv);
  EXPECT_NE(table.find(",orientation,"), std::string::npos) << table;
  EXPECT_NE(table.find(",A^T,"), std::string::npos) << table;

  // The same orientation is the same case; the other orientation is another case, and compare says why.
  const CommandResult same = run_fluxjac(fmt::format("compare '{}' '{}'", of_transpose, of_transpose));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const CommandResult other = run_fluxjac(fmt::format("compare '{}' '{}'", of_a, of_transpose));
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find("reference full A^T"), std::string::npos) << other.output;
  EXPECT_NE(other.output.find("differs only in orientation"), std::string::npos) << other.output;
}

/// `--residual` (docs/formats.md, "Residual"): the file gains /residual, equal to the residual of the flux alone, and
/// the Jacobian is the same; without it there is none; the table shows its error, the records carry it and `compare`
/// keys cases by it.
TEST_F(OrientationCli, ResidualIsWrittenOnlyWhenAskedAndCompareKeysCasesByIt) {
  const std::string plain = dir_.file("j.h5"), with = dir_.file("jr.h5");
  run_to(plain);
  run_to(with, "--residual");
  const StoredJacobian without_r = read_jacobian(plain), with_r = read_jacobian(with);
  EXPECT_TRUE(without_r.jacobian.residual.empty());
  EXPECT_TRUE(test::bitwise_equal(with_r.jacobian.adiag, without_r.jacobian.adiag));
  EXPECT_TRUE(test::bitwise_equal(with_r.jacobian.aoff, without_r.jacobian.aoff));
  const EdgeMesh mesh = read_edge_mesh(mesh_);
  const std::vector<double> expected = residual(mesh, read_flow_state(mesh_, mesh.n_nodes).Q);
  ASSERT_EQ(with_r.jacobian.residual.size(), expected.size());
  double worst = 0.0, largest = 0.0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    worst = std::max(worst, std::abs(with_r.jacobian.residual[k] - expected[k]));
    largest = std::max(largest, std::abs(expected[k]));
  }
  EXPECT_LE(worst, 1e-14 * largest);

  const std::string of_plain = dir_.file("j.json"), of_with = dir_.file("jr.json");
  const auto bench = [&](const std::string& json, const std::string& extra) {
    return run_fluxjac(
        fmt::format("bench --mesh '{}' --variant reference --reps 1 --warmup 0 --json '{}' {}", mesh_, json, extra));
  };
  const CommandResult a = bench(of_plain, ""), b = bench(of_with, "--residual");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_EQ(a.output.find("R err"), std::string::npos) << a.output;
  EXPECT_NE(b.output.find("R err"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("residual 1e-10"), std::string::npos) << b.output;
  const nlohmann::json run = nlohmann::json::parse(read_text(of_with))["runs"][0];
  EXPECT_EQ(run["residual"], true);
  EXPECT_LE(run["validation"]["residual_error"].get<double>(), 1e-14);
  EXPECT_EQ(nlohmann::json::parse(read_text(of_plain))["runs"][0]["residual"], false);
  const CommandResult other = run_fluxjac(fmt::format("compare '{}' '{}'", of_plain, of_with));
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find("reference full +R"), std::string::npos) << other.output;
}

}  // namespace
}  // namespace fluxjac
