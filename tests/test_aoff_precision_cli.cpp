// ctest-label: cli
// Aoff in bfloat16 from the command line (docs/design.md, "Aoff in bfloat16"): `run --aoff-precision bf16` writes the
// float32 Aoff rounded to bfloat16 and says so in the file and in `info`, on one process and on many ranks; a CPU
// emulation validates with the bf16 tolerance; records, table and `compare` carry the precision; f64 is refused with
// nothing written; the config key; `solve --aoff-precision bf16` assembles in bf16.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jacobian/aoff_precision.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "partition/partition.hpp"
#include "run_on_box.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::read_text;
using test::run_fluxjac;
using test::TempDir;

class AoffPrecisionCli : public test::RunOnBox {
 protected:
  /// Expects `bf16` to hold f32's Aoff rounded to bfloat16 (each float32 with its low 16 bits zero) and its Adiag.
  static void expect_rounded(const StoredJacobian& f32, const StoredJacobian& bf16) {
    EXPECT_EQ(f32.info.aoff_precision, AoffPrecision::kF32);
    EXPECT_EQ(bf16.info.aoff_precision, AoffPrecision::kBf16);
    EXPECT_TRUE(test::bitwise_equal(bf16.jacobian.adiag, f32.jacobian.adiag));
    std::vector<float> expected = f32.jacobian.aoff;
    round_to_bf16(expected);
    EXPECT_TRUE(test::bitwise_equal(bf16.jacobian.aoff, expected));
    std::size_t low_bits_set = 0;
    for (const float value : bf16.jacobian.aoff) {
      std::uint32_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      low_bits_set += (bits & 0xffffu) != 0;
    }
    EXPECT_EQ(low_bits_set, 0u);
    EXPECT_FALSE(test::bitwise_equal(bf16.jacobian.aoff, f32.jacobian.aoff)) << "nothing was rounded";
  }
};

TEST_F(AoffPrecisionCli, TheReferenceInBf16WritesTheRoundedAoffAndTheAttributeAndInfoShowsIt) {
  const std::string f32 = dir_.file("f32.h5"), bf16 = dir_.file("bf16.h5");
  run_to(f32);
  run_to(bf16, "--aoff-precision bf16");
  expect_rounded(read_jacobian(f32), read_jacobian(bf16));
  {
    const h5::File file = h5::File::open(f32);
    EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "aoff_precision"), std::optional<std::string>("f32"));
  }
  {
    const h5::File file = h5::File::open(bf16);
    EXPECT_EQ(h5::read_string_attribute(file, "/jacobian", "aoff_precision"), std::optional<std::string>("bf16"));
  }
  const CommandResult info = run_fluxjac(fmt::format("info '{}'", bf16));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("Aoff precision        bf16"), std::string::npos) << info.output;
  EXPECT_NE(run_fluxjac(fmt::format("info '{}'", f32)).output.find("Aoff precision        f32"), std::string::npos);
  // A bf16 file is no reference: validation compares with float32 values.
  const CommandResult as_reference = run_fluxjac(fmt::format("run --mesh '{}' --reference '{}' -q", mesh_, bf16));
  EXPECT_EQ(as_reference.exit_code, 2) << as_reference.output;
  EXPECT_NE(as_reference.output.find("holds Aoff in bf16: a reference holds it in f32"), std::string::npos)
      << as_reference.output;
}

TEST_F(AoffPrecisionCli, ManyRanksWriteTheSameBf16FileAsOneProcess) {
#ifndef FLUXJAC_MPIEXEC
  GTEST_SKIP() << "this build has no MPI: skipped";
#else
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS (install libmetis-dev and rebuild): skipped";
  const std::string one = dir_.file("one.h5"), two = dir_.file("two.h5");
  run_to(one, "--aoff-precision bf16");
  const CommandResult result =
      test::run_fluxjac_mpi(2, fmt::format("run --mesh '{}' --threads 1 -q -o '{}' --aoff-precision bf16", mesh_, two));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  test::expect_same_file(one, two);
  EXPECT_EQ(read_jacobian_info(two).aoff_precision, AoffPrecision::kBf16);
#endif
}

TEST_F(AoffPrecisionCli, AnEmulationInBf16ValidatesWithTheBf16ToleranceAndTheRecordsCarryIt) {
  const std::string json = dir_.file("r.json"), csv = dir_.file("r.csv");
  const CommandResult result =
      run_fluxjac(fmt::format("run --mesh '{}' --variant hd:cpu --aoff-precision f32,bf16 --reps 1 --warmup 0 --json "
                              "'{}' --csv '{}'",
                              mesh_, json, csv));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("hd:cpu full bf16 node ... "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(" aoff "), std::string::npos) << "the table's Aoff precision column: " << result.output;
  EXPECT_NE(result.output.find("Aoff 1e-06 (bf16 cases: 3.91e-03)"), std::string::npos) << result.output;
  const nlohmann::json runs = nlohmann::json::parse(read_text(json))["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["aoff_precision"], "f32");
  EXPECT_EQ(runs[1]["aoff_precision"], "bf16");
  EXPECT_EQ(runs[0]["validation"]["aoff_tolerance"], 1e-6);
  EXPECT_EQ(runs[1]["validation"]["aoff_tolerance"], 1.0 / 256);
  EXPECT_EQ(runs[1]["validation"]["passed"], true);
  const double error = runs[1]["validation"]["aoff_error"];
  EXPECT_GT(error, 1e-6);  // the rounding shows
  EXPECT_LT(error, 1.0 / 256);
  EXPECT_NE(read_text(csv).find(",aoff_precision,"), std::string::npos);
  // A run of f32 alone has no such column.
  const CommandResult f32 = run_fluxjac(fmt::format("run --mesh '{}' --variant hd:cpu --reps 1 --warmup 0", mesh_));
  ASSERT_EQ(f32.exit_code, 0) << f32.output;
  EXPECT_EQ(f32.output.find(" aoff "), std::string::npos) << f32.output;
  EXPECT_EQ(f32.output.find("bf16"), std::string::npos) << f32.output;
}

TEST_F(AoffPrecisionCli, F64IsRefusedWithOneLineAndNothingIsWritten) {
  const std::string output = dir_.file("out.h5"), json = dir_.file("out.json");
  for (const char* command : {"run", "bench"}) {
    const CommandResult result =
        run_fluxjac(fmt::format("{} --mesh '{}' --aoff-precision f32,f64 -q --json '{}'{}", command, mesh_, json,
                                std::string(command) == "run" ? " -o '" + output + "'" : ""));
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_EQ(test::count_lines(result.output, "\n"), 1u) << result.output;
    EXPECT_NE(result.output.find("fluxjac: error: --aoff-precision f64: an assembly stores Aoff in f32 or bf16; f64 "
                                 "exists only for the solve with the CPU reference (fluxjac solve --variant "
                                 "reference --aoff-precision f64)"),
              std::string::npos)
        << result.output;
    for (const std::string& file : {output, json}) EXPECT_FALSE(std::filesystem::exists(file)) << file;
  }
  const CommandResult unknown = run_fluxjac(fmt::format("run --mesh '{}' --aoff-precision f16 -q", mesh_));
  EXPECT_EQ(unknown.exit_code, 3) << unknown.output;
  EXPECT_NE(unknown.output.find("--aoff-precision f16: use f32 or bf16"), std::string::npos) << unknown.output;
}

TEST_F(AoffPrecisionCli, TheConfigKeyDoesWhatTheOptionDoes) {
  const std::string output = dir_.file("bf16.h5");
  const CommandResult result = run_with_config("aoff-precision = [\"bf16\"]\nthreads = 1\n", output);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(read_jacobian(output).info.aoff_precision, AoffPrecision::kBf16);
  std::filesystem::remove(output);
  const CommandResult underscore = run_with_config("aoff_precision = \"f32\"\n", output);
  ASSERT_EQ(underscore.exit_code, 0) << underscore.output;
  EXPECT_EQ(read_jacobian(output).info.aoff_precision, AoffPrecision::kF32);
}

TEST_F(AoffPrecisionCli, CompareKeysCasesByThePrecisionAndAFileWithoutItHoldsF32) {
  const std::string f32 = dir_.file("f32.json"), bf16 = dir_.file("bf16.json"), old = dir_.file("old.json");
  for (const auto& [json, precision] : {std::pair{f32, "f32"}, std::pair{bf16, "bf16"}}) {
    const CommandResult result = run_fluxjac(
        fmt::format("bench --mesh '{}' --variant reference --reps 1 --warmup 0 --aoff-precision {} --json '{}' -q",
                    mesh_, precision, json));
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }
  const CommandResult same = run_fluxjac(fmt::format("compare '{}' '{}'", bf16, bf16));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const CommandResult other = run_fluxjac(fmt::format("compare '{}' '{}'", f32, bf16));
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find("reference full bf16"), std::string::npos) << other.output;
  // Result files written before the field: f32.
  nlohmann::json document = nlohmann::json::parse(read_text(f32));
  for (nlohmann::json& run : document["runs"]) run.erase("aoff_precision");
  std::ofstream(old) << document.dump(2);
  const CommandResult without = run_fluxjac(fmt::format("compare '{}' '{}' --time-tolerance 1000", old, f32));
  EXPECT_EQ(without.exit_code, 0) << without.output;
  const CommandResult against_bf16 = run_fluxjac(fmt::format("compare '{}' '{}'", old, bf16));
  EXPECT_EQ(against_bf16.exit_code, 1) << against_bf16.output;
}

TEST_F(AoffPrecisionCli, SolveInBf16AssemblesInBf16AndTheFileSaysSo) {
  const std::string f32 = dir_.file("step-f32.h5"), bf16 = dir_.file("step-bf16.h5");
  for (const auto& [output, precision] : {std::pair{f32, "f32"}, std::pair{bf16, "bf16"}}) {
    const CommandResult result = run_fluxjac(
        fmt::format("solve --mesh '{}' --variant reference --cfl 50 --warmup 0 --reps 1 --aoff-precision {} -q -o '{}'",
                    mesh_, precision, output));
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }
  expect_rounded(read_jacobian(f32), read_jacobian(bf16));
  const h5::File file = h5::File::open(bf16);
  EXPECT_EQ(h5::read_string_attribute(file, "/solve", "aoff_precision"), std::optional<std::string>("bf16"));
}

}  // namespace
}  // namespace fluxjac
