// ctest-label: cli
// Benchmark tooling: `fluxjac bench` sweeps (configs/bench-ci.toml on the CPU reference: CSV and JSON contents,
// skipped cases, the mesh cache, progress), `fluxjac compare` regression checks (identical files, an injected
// slowdown, an injected validation failure, missing cases), its case key (a mesh by its content whatever its name,
// the ranks, files that repeat a case refused) and its escaping of control characters, the result model (record ->
// JSON byte for byte, CSV and table -> compare), the mesh digest, the hardened reader of result files, the golden
// Jacobian in tests/data, generator specs, and scripts/plot_bench.py on the checked-in sample result file.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/device_probe.hpp"
#include "bench/mesh_source.hpp"
#include "bench/report.hpp"
#include "bench/result_compare.hpp"
#include "bench/sweep.hpp"
#include "bench/work_model.hpp"
#include "mesh/mesh_digest.hpp"
#include "partition/partition.hpp"
#include "registry/registry.hpp"
#include "test_support.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

using nlohmann::ordered_json;
using test::CommandResult;
using test::run_fluxjac;
using test::run_fluxjac_mpi;
using test::TempDir;

const std::string kSourceDir = FLUXJAC_SOURCE_DIR;
const std::string kCiConfig = kSourceDir + "/configs/bench-ci.toml";

std::string shell_quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

ordered_json read_json(const std::string& path) { return ordered_json::parse(read_text(path)); }

/// \brief CSV records split into fields (RFC 4180 quoting), header first.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool in_quotes = false;
  const std::string text = read_text(path);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += text[++i];
      else if (c == '"')
        in_quotes = false;
      else
        field += c;
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      field.clear();
      rows.push_back(row);
      row.clear();
    } else {
      field += c;
    }
  }
  return rows;
}

/// Results of the CI sweep, run once per test process (each run takes about a second).
struct CiSweep {
  TempDir folder;
  std::string cache = folder.file("cache"), csv = folder.file("ci.csv"), json = folder.file("ci.json");
  CommandResult result;
};

const CiSweep& ci_sweep() {
  static CiSweep sweep;  // its folder is removed at exit
  static const bool ran = [] {
    sweep.result =
        run_fluxjac(fmt::format("bench --config {} --cache {} --csv {} --json {}", shell_quoted(kCiConfig),
                                shell_quoted(sweep.cache), shell_quoted(sweep.csv), shell_quoted(sweep.json)));
    return true;
  }();
  (void)ran;
  return sweep;
}

/// \brief Writes a copy of the CI results with `edit` applied to its runs array; returns the path.
std::string edited_results(const TempDir& folder, const std::string& name,
                           const std::function<void(ordered_json& runs)>& edit) {
  ordered_json results = read_json(ci_sweep().json);
  edit(results.at("runs"));
  const std::string path = folder.file(name);
  std::ofstream(path) << results.dump(2);
  return path;
}

// ---- bench: the CI configuration on the CPU reference ----------------------------------------------------

TEST(BenchSweep, CiConfigRunsEveryCaseAndRecordsTheSkippedOnes) {
  const CiSweep& sweep = ci_sweep();
  ASSERT_EQ(sweep.result.exit_code, 0) << sweep.result.output;
  // Progress names every case; the table says why the compute-only cases of the reference were skipped.
  for (const char* fragment :
       {"[case 1/4] mixed:4:rcm reference full ...", "[case 4/4] tet:3:random reference compute-only",
        "skipped: variant 'reference' runs only in mode 'full'", "4 cases: 2 ran, 2 skipped, 0 failed"})
    EXPECT_TRUE(contains(sweep.result.output, fragment)) << "\"" << fragment << "\" missing in:\n"
                                                         << sweep.result.output;
}

TEST(BenchSweep, JsonHoldsBuildMetadataAndOneRunPerCase) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const ordered_json results = read_json(ci_sweep().json);
  EXPECT_EQ(results.at("schema"), "fluxjac-bench");
  EXPECT_EQ(results.at("schema_version"), 4);
  const ordered_json& build = results.at("fluxjac");
  for (const char* key : {"version", "git_revision", "cxx_compiler", "cxx_flags", "build_type"})
    EXPECT_FALSE(build.at(key).get<std::string>().empty()) << key;
  ASSERT_TRUE(results.contains("device"));
  EXPECT_TRUE(results.at("device").is_null()) << "no device in a CPU-only sweep";
  // The work model of the variants that ran (the reference, on the CPU), as `fluxjac list` declares it.
  EXPECT_DOUBLE_EQ(results.at("model").at("reference").at("cpu").at("fp64_flops_per_edge").get<double>(),
                   Registry::instance().find("reference")->work.strategy("cpu").fp64_flops_per_edge());

  const ordered_json& runs = results.at("runs");
  ASSERT_EQ(runs.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> expected = {{"mixed:4:rcm", "full"},
                                                                     {"mixed:4:rcm", "compute-only"},
                                                                     {"tet:3:random", "full"},
                                                                     {"tet:3:random", "compute-only"}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ordered_json& run = runs[i];
    SCOPED_TRACE(fmt::format("runs[{}]", i));
    EXPECT_EQ(run.at("mesh"), expected[i].first);
    EXPECT_EQ(run.at("mode"), expected[i].second);
    EXPECT_EQ(run.at("variant"), "reference");
    EXPECT_EQ(run.at("mesh_order"), i < 2 ? "rcm" : "random");
    EXPECT_GT(run.at("ordering_bandwidth").get<double>(), 0);
    EXPECT_GT(run.at("n_edges").get<double>(), 0);
    EXPECT_GT(run.at("model_bytes").get<double>(), 0);
    EXPECT_EQ(run.at("reps"), 2);
    if (expected[i].second == "full") {
      EXPECT_EQ(run.at("status"), "ok");
      const ordered_json& times = run.at("assembly_ms");
      ASSERT_TRUE(times.is_object());
      EXPECT_GT(times.at("median").get<double>(), 0);
      EXPECT_LE(times.at("min").get<double>(), times.at("median").get<double>());
      EXPECT_LE(times.at("median").get<double>(), times.at("max").get<double>());
      EXPECT_GT(run.at("ns_per_edge").get<double>(), 0);
      const ordered_json& validation = run.at("validation");
      ASSERT_TRUE(validation.is_object());
      EXPECT_EQ(validation.at("passed"), true);
      EXPECT_EQ(validation.at("adiag_error"), 0.0) << "the reference against itself";
    } else {
      EXPECT_EQ(run.at("status"), "skipped");
      EXPECT_TRUE(contains(run.at("reason").get<std::string>(), "runs only in mode 'full'"));
      EXPECT_TRUE(run.at("assembly_ms").is_null());
      EXPECT_TRUE(run.at("validation").is_null());
    }
  }
}

TEST(BenchSweep, CsvHasOneRowPerCaseWithMetadata) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const auto rows = read_csv(ci_sweep().csv);
  ASSERT_EQ(rows.size(), 5u) << read_text(ci_sweep().csv);
  const std::vector<std::string>& header = rows[0];
  auto value = [&](std::size_t row, const std::string& column) -> std::string {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == column) return c < rows[row].size() ? rows[row][c] : "(missing)";
    return "(no such column)";
  };
  for (std::size_t row = 1; row < rows.size(); ++row) {
    SCOPED_TRACE(fmt::format("row {}", row));
    EXPECT_EQ(rows[row].size(), header.size()) << "fields per row";
    for (const char* column : {"mesh", "n_nodes", "n_edges", "ordering_bandwidth", "variant", "mode", "status",
                               "fluxjac_version", "git_revision", "cxx_compiler"})
      EXPECT_FALSE(value(row, column).empty()) << column;
  }
  EXPECT_EQ(value(1, "validation"), "PASS");
  EXPECT_EQ(value(2, "status"), "skipped");
  EXPECT_TRUE(contains(value(2, "reason"), "runs only in mode 'full'"));
  EXPECT_EQ(value(3, "mesh"), "tet:3:random");
}

TEST(BenchSweep, GeneratedMeshesAreCachedAndReused) {
  const TempDir folder;
  const std::string cache = folder.file("cache");
  const std::string args =
      fmt::format("bench --mesh tet:2:rcm --variant reference --reps 1 --warmup 0 --cache {}", shell_quoted(cache));
  const CommandResult first = run_fluxjac(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first.output, "generating")) << first.output;
  const auto cached = std::filesystem::recursive_directory_iterator(cache);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : cached)
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 2u);  // the mesh and the cache's record of its content digest
  EXPECT_EQ(files[0].filename(), "tet-2-rcm-seed1.h5");
  EXPECT_EQ(files[1].filename(), "tet-2-rcm-seed1.h5.digest");
  const auto written = std::filesystem::last_write_time(files[0]);

  const CommandResult second = run_fluxjac(args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(contains(second.output, "cached")) << second.output;
  EXPECT_FALSE(contains(second.output, "generating")) << second.output;
  EXPECT_EQ(std::filesystem::last_write_time(files[0]), written) << "the cached mesh was rewritten";
}

TEST(BenchSweep, DryRunListsTheCrossProductAndRunsNothing) {
  const TempDir folder;
  const CommandResult result = run_fluxjac(fmt::format(
      "bench --dry-run --mesh tet:2:rcm,mixed:3:natural:7 --variant reference --mode full,compute-only --cache {}",
      shell_quoted(folder.file("cache"))));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* fragment : {"(to generate)", "[case 1/4] tet:2:rcm reference full",
                               "[case 4/4] mixed:3:natural:7 reference compute-only", "mixed-3-natural-seed7.h5"})
    EXPECT_TRUE(contains(result.output, fragment)) << "\"" << fragment << "\" missing in:\n" << result.output;
  EXPECT_FALSE(std::filesystem::exists(folder.file("cache"))) << "a dry run generated meshes";
}

TEST(BenchSweep, AutoAssemblyBecomesEachVariantsStrategyAndRunsOnce) {
  const auto variant_info = [](const std::string& name) {
    for (const VariantInfo& info : Registry::instance().list())
      if (info.name == name) return info;
    throw std::runtime_error("no variant " + name);
  };
  for (const char* name : {"hd", "dn_10"})
    if (!variant_info(name).available) GTEST_SKIP() << "CUDA variants are not built (FLUXJAC_CUDA=OFF)";
  SweepConfig config;
  config.cases.variants = {"hd,dn_10"};
  config.meshes = {"tet:2:rcm"};
  config.cases.assemblies = {"auto", "edge", "node"};
  const SweepPlan plan = plan_sweep(config);
  // auto duplicates one of the explicit strategies for each variant, so each runs edge and node once.
  ASSERT_EQ(plan.cases.size(), 4u);
  for (const SweepCase& sweep_case : plan.cases) EXPECT_NE(sweep_case.assembly.strategy, AssemblyStrategy::kAuto);
  config.cases.assemblies = {"auto"};
  const SweepPlan automatic = plan_sweep(config);
  ASSERT_EQ(automatic.cases.size(), 2u);
  for (const SweepCase& sweep_case : automatic.cases)
    EXPECT_EQ(sweep_case.assembly.strategy, variant_info(sweep_case.variant).preferred_assembly) << sweep_case.variant;
}

TEST(BenchUsage, BadMeshesVariantsAndValuesAreUsageErrors) {
  const TempDir folder;
  const std::string cache = " --cache " + shell_quoted(folder.file("cache"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench --mesh mixed:ten:rcm", "n 'ten' is not a positive whole number"},
      {"bench --mesh mixed:10:sorted", "unknown order 'sorted'"},
      {"bench --mesh mixed:10", "expected kind:n:order[:seed]"},
      {"bench --variant reference", "no mesh"},
      {"bench --mesh tet:2:rcm --variant nosuch", "unknown variant 'nosuch'"},
      {"bench --mesh tet:2:rcm --edges-per-block -4", "--edges-per-block -4: edges per block"},
      {"bench --mesh tet:2:rcm --reps 0", "--reps 0: timed repetitions must be between 1 and"},
      {"bench --mesh tet:2:rcm --json " + shell_quoted(folder.file("no/such/folder/r.json")), "does not exist"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult result = run_fluxjac(args + cache);
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, message)) << args << ": \"" << message << "\" missing in:\n" << result.output;
  }
}

TEST(BenchUsage, ARankCountBelowOneSaysRankCountsMustBeOneOrMore) {
  const TempDir folder;
  const std::string config = folder.file("ranks.toml");
  std::ofstream(config) << "meshes = [\"tet:2:rcm\"]\nranks = 0\n";
  const std::string cache = " --cache " + shell_quoted(folder.file("cache"));
  for (const std::string& args :
       {std::string("bench --mesh tet:2:rcm --ranks 0"), std::string("bench --mesh tet:2:rcm --ranks -1"),
        std::string("bench --mesh tet:2:rcm --ranks 1,0"), "bench --config " + shell_quoted(config)}) {
    const CommandResult result = run_fluxjac(args + cache);
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, "rank counts must be 1 or more")) << args << "\n" << result.output;
    EXPECT_FALSE(contains(result.output, "mpirun")) << args << "\n" << result.output;
  }
}

TEST(BenchSweep, ConfigKeysAreTheLongOptionNames) {
  const TempDir folder;
  const std::string config = folder.file("sweep.toml");
  std::ofstream(config) << "variants = [\"reference\"]\nmeshes = [\"tet:2:rcm\"]\nmodes = [\"full\"]\n"
                           "edges-per-block = [0]\nassembly = [\"node\", \"edge\"]\nreps = 3\nwarmup = 0\n"
                           "validate = false\n";
  const std::string json = folder.file("r.json");
  const CommandResult result =
      run_fluxjac(fmt::format("bench -q --config {} --reps 2 --cache {} --json {}", shell_quoted(config),
                              shell_quoted(folder.file("cache")), shell_quoted(json)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const ordered_json runs = read_json(json).at("runs");
  ASSERT_EQ(runs.size(), 1u) << "CPU variants have no assembly or block-size axis";
  EXPECT_EQ(runs[0].at("reps"), 2) << "the command line overrides the config file";
  EXPECT_TRUE(runs[0].at("validation").is_null()) << "validate = false";
}

// ---- bench --solve: solve cases in the sweep, their records, and compare's key ----------------------------

/// Results of a sweep with solves on the CPU reference (2 CFL x 2 preconditioners x 2 precisions on mixed:6:rcm),
/// from a config file, run once per test process.
struct SolveSweepRun {
  TempDir folder;
  std::string cache = folder.file("cache"), csv = folder.file("solve.csv"), json = folder.file("solve.json");
  CommandResult result;
};

const SolveSweepRun& solve_sweep() {
  static SolveSweepRun sweep;
  static const bool ran = [] {
    const std::string config = sweep.folder.file("solve.toml");
    std::ofstream(config) << "meshes = [\"mixed:6:rcm\"]\nvariants = [\"reference\"]\nwarmup = 0\nreps = 1\n"
                             "solve-cfl = [10, 100]\nsolve-preconditioner = [\"pbjacobi\", \"mcgs\"]\n"
                             "solve-aoff-precision = [\"f32\", \"bf16\"]\n";
    sweep.result =
        run_fluxjac(fmt::format("bench --config {} --cache {} --csv {} --json {}", shell_quoted(config),
                                shell_quoted(sweep.cache), shell_quoted(sweep.csv), shell_quoted(sweep.json)));
    return true;
  }();
  (void)ran;
  return sweep;
}

/// \brief A copy of the solve sweep's results with `edit` applied to its runs; returns the path.
std::string edited_solve_results(const TempDir& folder, const std::string& name,
                                 const std::function<void(ordered_json& runs)>& edit) {
  ordered_json results = read_json(solve_sweep().json);
  edit(results.at("runs"));
  const std::string path = folder.file(name);
  std::ofstream(path) << results.dump(2);
  return path;
}

/// The index of the solve run of `cfl` and `preconditioner` with Aoff in f32.
std::size_t solve_run(const ordered_json& runs, double cfl, const std::string& preconditioner) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ordered_json& solve = runs.at(i).at("solve");
    if (!solve.is_null() && solve.at("cfl").get<double>() == cfl && solve.at("preconditioner") == preconditioner &&
        solve.at("aoff_precision") == "f32")
      return i;
  }
  throw std::runtime_error("no such solve run");
}

TEST(BenchSolve, EachCflPreconditionerAndPrecisionIsASolveRecordInJsonAndCsv) {
  const SolveSweepRun& sweep = solve_sweep();
  ASSERT_EQ(sweep.result.exit_code, 0) << sweep.result.output;
  for (const char* fragment : {"reference solve cfl=10 pbjacobi f32", "reference solve cfl=100 mcgs sweeps=2 bf16",
                               "iterations", "converged", "solves: 8 converged, 0 did not"})
    EXPECT_TRUE(contains(sweep.result.output, fragment)) << "\"" << fragment << "\" missing in:\n"
                                                         << sweep.result.output;
  const ordered_json document = read_json(sweep.json);
  EXPECT_EQ(document.at("schema_version"), kResultSchemaVersion);
  const ordered_json& runs = document.at("runs");
  ASSERT_EQ(runs.size(), 9u) << "the assembly case, then 2 x 2 x 2 solve cases";
  EXPECT_TRUE(runs.at(0).at("solve").is_null()) << "an assembly case has no solve";
  int mcgs = 0;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const ordered_json& run = runs.at(i);
    const ordered_json& solve = run.at("solve");
    ASSERT_TRUE(solve.is_object()) << run.dump();
    EXPECT_EQ(run.at("status"), "ok");
    EXPECT_EQ(run.at("mode"), "full");
    EXPECT_EQ(run.at("residual"), true) << "a solve case assembles its residual";
    EXPECT_EQ(run.at("validation").at("passed"), true) << "and validates it before it solves";
    EXPECT_EQ(solve.at("solved_on"), "cpu");
    const bool is_mcgs = solve.at("preconditioner") == "mcgs";
    mcgs += is_mcgs ? 1 : 0;
    EXPECT_EQ(solve.at("sweeps"), is_mcgs ? 2 : 0) << "sweeps count for mcgs only";
    EXPECT_GT(solve.at("iterations").get<int>(), 0);
    EXPECT_EQ(solve.at("converged"), true);
    EXPECT_LE(solve.at("relative_residual").get<double>(), 1e-7);
    EXPECT_GE(solve.at("solve_ms").get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(solve.at("ms_per_iteration").get<double>(),
                     solve.at("solve_ms").get<double>() / solve.at("iterations").get<double>());
    for (const char* key :
         {"restart", "tolerance", "max_iterations", "setup_ms", "product_ms", "exchange_ms", "reduction_ms"})
      EXPECT_TRUE(solve.contains(key)) << key;
  }
  EXPECT_EQ(mcgs, 4);

  // The CSV holds the same records, the assembly case's solve columns empty.
  const auto rows = read_csv(sweep.csv);
  ASSERT_EQ(rows.size(), 10u);
  auto column = [&](const std::string& name) {
    const auto at = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(at, rows[0].end()) << name;
    return static_cast<std::size_t>(at - rows[0].begin());
  };
  EXPECT_EQ(rows[1][column("solve_iterations")], "");
  const std::size_t i = solve_run(runs, 100, "pbjacobi");
  EXPECT_EQ(rows[i + 1][column("solve_cfl")], "100");
  EXPECT_EQ(rows[i + 1][column("solve_preconditioner")], "pbjacobi");
  EXPECT_EQ(rows[i + 1][column("solve_aoff_precision")], "f32");
  EXPECT_EQ(rows[i + 1][column("solve_iterations")],
            std::to_string(runs.at(i).at("solve").at("iterations").get<int>()));
  EXPECT_EQ(rows[i + 1][column("solve_converged")], "true");

  // The same step as `fluxjac solve` takes on the same mesh: the same iterations.
  const std::string json = sweep.folder.file("one-solve.json");
  const CommandResult one = run_fluxjac(
      fmt::format("solve -q --mesh mixed:6:rcm --variant reference --cfl 100 --warmup 0 --reps 1 --cache {} --json {}",
                  shell_quoted(sweep.cache), shell_quoted(json)));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(read_json(json).at("iterations"), runs.at(i).at("solve").at("iterations"));
}

TEST(BenchSolve, DryRunListsTheSolveCasesAfterTheAssemblyCases) {
  const TempDir folder;
  const CommandResult result =
      run_fluxjac(fmt::format("bench --dry-run --mesh tet:2:rcm --variant reference --solve-cfl 10,100 --cache {}",
                              shell_quoted(folder.file("cache"))));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* fragment : {"[case 1/3] tet:2:rcm reference full",
                               "[case 2/3] tet:2:rcm reference solve cfl=10 "
                               "pbjacobi f32",
                               "[case 3/3] tet:2:rcm reference solve cfl=100 pbjacobi f32"})
    EXPECT_TRUE(contains(result.output, fragment)) << "\"" << fragment << "\" missing in:\n" << result.output;
}

TEST(BenchSolve, BadSolveOptionsAreRefusedWithTheSolveCommandsWords) {
  const TempDir folder;
  const std::string cache = " --cache " + shell_quoted(folder.file("cache"));
  // The solve command's own check (check_solve_options) words each refusal; bench names its options --solve-NAME.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--solve-cfl 0", "--solve-cfl 0: the CFL number must be positive and finite"},
      {"--solve-cfl 10,-1", "--solve-cfl -1: the CFL number must be positive and finite"},
      {"--solve-preconditioner ilu", "--solve-preconditioner ilu: the preconditioners are: pbjacobi"},
      {"--solve --solve-sweeps 0", "--solve-sweeps 0: Gauss-Seidel sweeps per application, 1 to 100"},
      {"--solve --solve-restart 0", "--solve-restart 0: FGMRES keeps at least 1 basis vector"},
      {"--solve --solve-tolerance 1", "--solve-tolerance 1: a relative residual tolerance is between 0 and 1"},
      {"--solve --solve-max-iterations 0", "--solve-max-iterations 0: at least 1"},
      {"--solve-aoff-precision f16", "use f64, f32 or bf16"},
      {"--solve --transpose", "the solve needs A = dR/dQ, not A^T"},
      {"--variant hd:cpu --solve-aoff-precision f64", "only the CPU reference assembles Aoff in float64"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult result = run_fluxjac("bench --mesh tet:2:rcm " + args + cache);
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, message)) << args << ": \"" << message << "\" missing in:\n" << result.output;
  }
  // The words are the solve command's.
  const CommandResult solve = run_fluxjac("solve --mesh tet:2:rcm --variant reference --cfl 0" + cache);
  EXPECT_EQ(solve.exit_code, 3) << solve.output;
  EXPECT_TRUE(contains(solve.output, "--cfl 0: the CFL number must be positive and finite")) << solve.output;
}

TEST(CompareSolves, MoreIterationsAndAMissingSolveCaseAreRegressions) {
  ASSERT_EQ(solve_sweep().result.exit_code, 0) << solve_sweep().result.output;
  const std::string& base = solve_sweep().json;
  const CommandResult same = run_fluxjac(fmt::format("compare {} {}", shell_quoted(base), shell_quoted(base)));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(contains(same.output, "9 cases")) << "each solve case is its own case\n" << same.output;
  EXPECT_TRUE(contains(same.output, "0 regressions")) << same.output;

  const TempDir folder;
  const std::size_t i = solve_run(read_json(base).at("runs"), 100, "pbjacobi");
  const std::string more = edited_solve_results(folder, "more.json", [i](ordered_json& runs) {
    ordered_json& solve = runs.at(i).at("solve");
    solve["iterations"] = solve.at("iterations").get<int>() + 3;
  });
  const CommandResult grew = run_fluxjac(fmt::format("compare {} {}", shell_quoted(base), shell_quoted(more)));
  EXPECT_EQ(grew.exit_code, 1) << grew.output;
  EXPECT_TRUE(contains(grew.output, "mixed:6:rcm reference solve cfl=100 pbjacobi f32")) << grew.output;
  EXPECT_TRUE(contains(grew.output, "MORE ITERATIONS [regression]")) << grew.output;
  EXPECT_TRUE(contains(grew.output, "1 regression")) << grew.output;
  const CommandResult fewer = run_fluxjac(fmt::format("compare {} {}", shell_quoted(more), shell_quoted(base)));
  EXPECT_EQ(fewer.exit_code, 0) << fewer.output;
  EXPECT_TRUE(contains(fewer.output, "fewer iterations")) << fewer.output;

  const std::string unconverged = edited_solve_results(
      folder, "unconverged.json", [i](ordered_json& runs) { runs.at(i).at("solve")["converged"] = false; });
  const CommandResult diverged =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(base), shell_quoted(unconverged)));
  EXPECT_EQ(diverged.exit_code, 1) << diverged.output;
  EXPECT_TRUE(contains(diverged.output, "NO LONGER CONVERGES [regression]")) << diverged.output;

  const std::string slower = edited_solve_results(folder, "slower.json", [i](ordered_json& runs) {
    ordered_json& solve = runs.at(i).at("solve");
    solve["solve_ms"] = solve.at("solve_ms").get<double>() * 2.0 + 1.0;
  });
  const CommandResult slow = run_fluxjac(fmt::format("compare {} {}", shell_quoted(base), shell_quoted(slower)));
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  EXPECT_TRUE(contains(slow.output, "SLOWER [regression]")) << "the solve time against the time tolerance\n"
                                                            << slow.output;

  const std::string lacking =
      edited_solve_results(folder, "lacking.json", [i](ordered_json& runs) { runs.erase(runs.begin() + i); });
  const CommandResult missing = run_fluxjac(fmt::format("compare {} {}", shell_quoted(base), shell_quoted(lacking)));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "reference solve cfl=100 pbjacobi f32")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "MISSING [regression]")) << missing.output;
  const CommandResult allowed =
      run_fluxjac(fmt::format("compare --allow-missing {} {}", shell_quoted(base), shell_quoted(lacking)));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
}

// ---- golden Jacobian: any change in the reference's results is caught --------------------------------------
// (Each GPU variant against it: GpuVariants/ValidateAgainstReference.GoldenJacobian in test_gpu.cpp.)

TEST(BenchGolden, ReferenceReproducesTheStoredJacobianExactly) {
  const TempDir folder;
  const std::string json = folder.file("golden.json");
  const CommandResult result = run_fluxjac(
      fmt::format("run -q --warmup 0 --reps 1 --mesh {} --variant reference --reference {} --json {}",
                  shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-mesh.h5"),
                  shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-jacobian.h5"), shell_quoted(json)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const ordered_json run = read_json(json).at("runs").at(0);
  const ordered_json& validation = run.at("validation");
  ASSERT_TRUE(validation.is_object()) << result.output;
  EXPECT_EQ(validation.at("passed"), true);
  EXPECT_EQ(validation.at("adiag_error"), 0.0) << "the CPU reference must be bit-for-bit stable";
  EXPECT_EQ(validation.at("aoff_error"), 0.0);
  EXPECT_GE(run.at("n_edges").get<double>(), 2000) << "a few thousand edges";
}

// ---- compare --------------------------------------------------------------------------------------------

TEST(CompareResults, IdenticalFilesPass) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const CommandResult result =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(ci_sweep().json)));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "0 regressions")) << result.output;
}

TEST(CompareResults, SlowdownBeyondTheToleranceIsARegression) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  auto slower_by = [&](double factor) {
    return edited_results(folder, fmt::format("slower-{}.json", factor), [factor](ordered_json& runs) {
      ordered_json& times = runs.at(2).at("assembly_ms");
      times["median"] = times.at("median").get<double>() * factor;
    });
  };
  const CommandResult slow = run_fluxjac(
      fmt::format("compare {} {} --time-tolerance 0.1", shell_quoted(ci_sweep().json), shell_quoted(slower_by(1.25))));
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  EXPECT_TRUE(contains(slow.output, "tet:3:random reference full")) << slow.output;
  EXPECT_TRUE(contains(slow.output, "SLOWER")) << slow.output;
  EXPECT_TRUE(contains(slow.output, "+25.0%")) << slow.output;

  const CommandResult within = run_fluxjac(
      fmt::format("compare {} {} --time-tolerance 0.1", shell_quoted(ci_sweep().json), shell_quoted(slower_by(1.05))));
  EXPECT_EQ(within.exit_code, 0) << "5% is within a 10% tolerance\n" << within.output;
  EXPECT_TRUE(contains(within.output, "time tolerance 10%")) << within.output;
  const CommandResult tight = run_fluxjac(fmt::format("compare {} {} --time-tolerance 0.0001",
                                                      shell_quoted(ci_sweep().json), shell_quoted(slower_by(1.0))));
  EXPECT_TRUE(contains(tight.output, "time tolerance 0.01%")) << "a small tolerance printed as it is\n" << tight.output;
  const CommandResult faster =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(slower_by(1.25)), shell_quoted(ci_sweep().json)));
  EXPECT_EQ(faster.exit_code, 0) << faster.output;
  EXPECT_TRUE(contains(faster.output, "faster")) << faster.output;
}

TEST(CompareResults, InjectedValidationFailureIsARegression) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  const std::string failed = edited_results(folder, "failed.json", [](ordered_json& runs) {
    ordered_json& validation = runs.at(0).at("validation");
    validation["passed"] = false;
    validation["adiag_error"] = 3.5e-9;
  });
  const CommandResult result =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(failed)));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "VALIDATION FAILED [regression] (Adiag err 3.50e-09")) << result.output;
  EXPECT_TRUE(contains(result.output, "1 regression")) << result.output;
}

TEST(CompareResults, CasesThatNoLongerRunOrAreMissingAreRegressions) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  const std::string skipped = edited_results(folder, "skipped.json", [](ordered_json& runs) {
    runs.at(0)["status"] = "failed";
    runs.at(0)["reason"] = "CUDA error";
    runs.at(0)["assembly_ms"] = nullptr;
  });
  const CommandResult no_longer =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(skipped)));
  EXPECT_EQ(no_longer.exit_code, 1) << no_longer.output;
  EXPECT_TRUE(contains(no_longer.output, "NO LONGER RUNS [regression] (failed: CUDA error)")) << no_longer.output;

  const std::string fewer = edited_results(folder, "fewer.json", [](ordered_json& runs) { runs.erase(runs.begin()); });
  const CommandResult missing =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(fewer)));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "MISSING")) << missing.output;
  const CommandResult allowed =
      run_fluxjac(fmt::format("compare --allow-missing {} {}", shell_quoted(ci_sweep().json), shell_quoted(fewer)));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;

  // Of two cases NEW lacks, the one BASE ran is the regression and is marked; the one BASE skipped is not.
  ASSERT_EQ(read_json(ci_sweep().json).at("runs").at(1).at("status"), "skipped");
  const std::string two_fewer =
      edited_results(folder, "two-fewer.json", [](ordered_json& runs) { runs.erase(runs.begin(), runs.begin() + 2); });
  const CommandResult marked =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(two_fewer)));
  EXPECT_EQ(marked.exit_code, 1) << marked.output;
  EXPECT_TRUE(contains(marked.output, "1 regression (marked [regression])")) << marked.output;
  std::istringstream lines(marked.output);
  int missing_lines = 0, marked_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!contains(line, " MISSING") || contains(line, " cases (")) continue;
    ++missing_lines;
    marked_lines += contains(line, "MISSING [regression]") ? 1 : 0;
  }
  EXPECT_EQ(missing_lines, 2) << marked.output;
  EXPECT_EQ(marked_lines, 1) << marked.output;
}

/// \brief Runs `fluxjac compare FILE FILE` on a file holding `text`; returns the command's result.
CommandResult compare_file_holding(const TempDir& folder, const std::string& text) {
  const std::string path = folder.file("results.json");
  std::ofstream(path, std::ios::binary) << text;
  return run_fluxjac(fmt::format("compare {} {}", shell_quoted(path), shell_quoted(path)));
}

/// \brief A result file of one run whose run object holds `run_members` after its mesh, variant and mode.
std::string file_with_run(const std::string& run_members) {
  return R"({"schema": "fluxjac-bench", "schema_version": 1, "device": null, "runs": [
  {"mesh": "tet:2:rcm", "variant": "hd", "mode": "full", )" +
         run_members + "}\n]}\n";
}

/// \brief Expects compare to refuse the file as invalid input (exit code 2) with one error line holding `message`.
void expect_rejected(const CommandResult& result, const std::string& message) {
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "fluxjac: error: ")) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "one line:\n" << result.output;
  EXPECT_TRUE(contains(result.output, message)) << "\"" << message << "\" missing in:\n" << result.output;
}

TEST(CompareResults, UnreadableFilesAreInputErrors) {
  const TempDir folder;
  std::ofstream(folder.file("broken.json")) << "{\"runs\": [\n  {\"mesh\": \"a\",\n  \"variant\": }";
  std::ofstream(folder.file("cut.json")) << "{\"runs\": [\n  {\"mesh\": \"a\",\n";
  std::ofstream(folder.file("other.json")) << "{\"schema\": \"something-else\", \"runs\": []}";
  std::ofstream(folder.file("empty.json")) << " \n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {folder.file("broken.json"), "broken.json: not a JSON results file (invalid JSON at line 3, column 14)"},
      {folder.file("cut.json"), "cut.json: not a JSON results file (it ends early at line 3, column 1)"},
      {folder.file("other.json"), "schema 'something-else' is not a fluxjac result file"},
      {folder.file("empty.json"), "empty.json: empty file, not a JSON results file"},
      {folder.file("absent.json"), "absent.json: no such result file"},
  };
  for (const auto& [file, message] : cases) {
    SCOPED_TRACE(file);
    expect_rejected(run_fluxjac(fmt::format("compare {} {}", shell_quoted(file), shell_quoted(file))), message);
  }
}

TEST(CompareResults, DirectoriesAndFifosAreNotRegularFiles) {
  const TempDir folder;
  const std::string directory = folder.file("results.json");
  std::filesystem::create_directory(directory);
  const std::string fifo = folder.file("pipe.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opening the FIFO would block compare until a writer came: the check comes first.
  for (const std::string& path : {directory, fifo}) {
    SCOPED_TRACE(path);
    expect_rejected(run_fluxjac(fmt::format("compare {} {}", shell_quoted(path), shell_quoted(path))),
                    path + " is not a regular file");
  }
  EXPECT_TRUE(std::filesystem::is_directory(directory));
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST(CompareResults, BinaryAndOtherNonJsonFilesAreRejectedWithoutEchoingTheirBytes) {
  const TempDir folder;
  const std::string hdf5_signature("\x89HDF\r\n\x1a\n\xff\xfe\x01\x02", 12);
  for (const std::string& text : {hdf5_signature, std::string("mesh,variant,median_ms\nmixed:4:rcm,hd,0.25\n"),
                                  std::string("{\"runs\": [\xc3\x28]}")}) {
    const CommandResult result = compare_file_holding(folder, text);
    expect_rejected(result, "results.json: not a JSON results file (invalid JSON at line ");
    for (const char c : result.output)
      EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(static_cast<unsigned char>(c)) << " in\n"
                                                        << result.output;
  }
}

TEST(CompareResults, RepeatedKeysAreRejectedNamingTheKey) {
  const TempDir folder;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {file_with_run(R"("status": "skipped", "mesh": "mixed:100:rcm")"), R"(runs[0]: duplicate key "mesh")"},
      {file_with_run(R"("assembly_ms": {"min": 1, "median": 2, "max": 3, "median": 1})"),
       R"(runs[0].assembly_ms: duplicate key "median")"},
      {R"({"schema": "fluxjac-bench", "runs": [], "runs": []})", R"(results.json: duplicate key "runs")"},
      {R"({"a\nb": {"x": 1, "x": 2}})", R"(results.json: a\nb: duplicate key "x")"},
      // The same key written with an escape is the same key.
      {file_with_run(R"("status": "skipped", "\u006dode": "full")"), R"(runs[0]: duplicate key "mode")"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    expect_rejected(compare_file_holding(folder, text), message);
  }
}

TEST(CompareResults, WrongTypesAreRejectedNamingTheKey) {
  const TempDir folder;
  const std::string ok_times = R"("status": "ok", "assembly_ms": {"min": 1, "median": 1, "max": 1})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"schema": 1, "runs": []})", R"(results.json: "schema" is a number, expected a string)"},
      {R"({"schema": ["fluxjac-bench"], "runs": []})", R"("schema" is an array, expected a string)"},
      {R"({"schema_version": "1", "runs": []})", R"("schema_version" is a string, expected a number)"},
      {R"({"schema_version": 5, "runs": []})", "schema version 5 is newer than this fluxjac reads (4)"},
      {R"({"runs": {}})", R"("runs" is an object, expected an array)"},
      {R"({"runs": [3]})", "results.json: runs[0] is a number, expected an object"},
      {R"({"device": "H100", "runs": []})", R"("device" is a string, expected an object)"},
      {file_with_run(R"("status": 3)"), R"(runs[0]: "status" is a number, expected a string)"},
      {file_with_run(R"("status": true)"), R"(runs[0]: "status" is a boolean, expected a string)"},
      // Text from the file stays one line of ASCII in the message.
      {file_with_run(R"("status": "d\u00f6ne\nnow")"), "\"status\" is 'd\xc3\xb6ne\\nnow', expected ok"},
      {file_with_run(R"("status": "ok", "assembly_ms": {"median": "fast"})"),
       R"(runs[0].assembly_ms: "median" is a string, expected a number)"},
      {file_with_run(R"("status": "ok", "assembly_ms": {"median": -1.5})"), R"("median" is -1.5, expected a time)"},
      {file_with_run(R"("status": "ok", "assembly_ms": [1, 2, 3])"),
       R"("assembly_ms" is an array, expected an object)"},
      {file_with_run(R"("status": "ok")"), R"(status ok but no "assembly_ms")"},
      {file_with_run(ok_times + R"(, "validation": {"passed": "yes"})"),
       R"(runs[0].validation: "passed" is a string, expected a boolean)"},
      {file_with_run(ok_times + R"(, "validation": {"passed": true, "adiag_error": "0"})"),
       R"("adiag_error" is a string, expected a number)"},
      {file_with_run(ok_times + R"(, "assembly": 7)"), R"("assembly" is a number, expected a string)"},
      {R"({"runs": [{"variant": "hd", "mode": "full", "status": "skipped"}]})", R"(runs[0]: "mesh" is missing)"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    expect_rejected(compare_file_holding(folder, text), message);
  }
}

TEST(CompareResults, EdgesPerBlockOutsideWhatTheCommandLineTakesIsRejected) {
  const TempDir folder;
  for (const char* value : {"-4", "16.5", "2147483648", "1e12", "99999999999999999999", "\"16\""}) {
    SCOPED_TRACE(value);
    const std::string text =
        file_with_run(fmt::format(R"("status": "skipped", "edges_per_block_requested": {})", value));
    expect_rejected(compare_file_holding(folder, text), R"(runs[0]: "edges_per_block_requested" is )");
  }
  const CommandResult largest = compare_file_holding(
      folder, file_with_run(
                  fmt::format(R"("status": "skipped", "assembly": "edge", "edges_per_block_requested": {})", INT_MAX)));
  EXPECT_EQ(largest.exit_code, 0) << "what --edges-per-block can ask for\n" << largest.output;
  EXPECT_TRUE(contains(largest.output, fmt::format("edge epb={}", INT_MAX))) << largest.output;
}

TEST(CompareResults, AnObjectOf200000KeysIsReadInLinearTime) {
  // A reader that looks members up one by one takes minutes on this. ctest's time for this test shows the reader's.
  const TempDir folder;
  std::string text = file_with_run(R"("status": "skipped")");
  std::string extra;
  for (int i = 0; i < 200000; ++i) extra += fmt::format(", \"extra_{}\": {}", i, i);
  text.insert(text.find(R"("status": "skipped")"), extra.substr(2) + ", ");
  const std::string path = folder.file("wide.json");
  std::ofstream(path) << text;
  const ResultFile file = read_result_file(path);
  ASSERT_EQ(file.runs.size(), 1u);
  EXPECT_EQ(file.runs[0].status, "skipped");
  EXPECT_EQ(file.runs[0].key(), "tet:2:rcm hd full");
}

// ---- compare: the case key --------------------------------------------------------------------------------

/// \brief `bench` of the CPU reference on `mesh` (a generator spec or a file) into folder/NAME.json, on `ranks`
/// ranks (1: one process); returns the path of the JSON file, failing the test when bench fails.
std::string bench_results(const TempDir& folder, const std::string& name, const std::string& mesh, int ranks = 1) {
  const std::string json = folder.file(name + ".json");
  const std::string args =
      fmt::format("bench -q --mesh {} --variant reference --cache {} --warmup 0 --reps 2 --threads 1 --json {}",
                  shell_quoted(mesh), shell_quoted(folder.file("cache")), shell_quoted(json));
  const CommandResult result = ranks == 1 ? run_fluxjac(args) : run_fluxjac_mpi(ranks, args);
  EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.output;
  return json;
}

/// \brief The cached file of a generator spec that bench_results made in `folder`.
std::string cached_mesh_file(const TempDir& folder, const std::string& file_name) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder.file("cache")))
    if (entry.path().filename() == file_name) return entry.path().string();
  ADD_FAILURE() << file_name << " is not in the cache";
  return {};
}

/// \brief Writes a copy of the result file at `path` with `edit` applied to its runs array; returns the copy's path.
std::string edited_copy(const TempDir& folder, const std::string& path, const std::string& name,
                        const std::function<void(ordered_json& runs)>& edit) {
  ordered_json results = read_json(path);
  edit(results.at("runs"));
  const std::string copy = folder.file(name);
  std::ofstream(copy) << results.dump(2);
  return copy;
}

CommandResult compare_files(const std::string& base, const std::string& candidate) {
  // Timings of tiny CPU runs vary: the time tolerance keeps these tests about the matching of cases.
  return run_fluxjac(fmt::format("compare {} {} --time-tolerance 1000", shell_quoted(base), shell_quoted(candidate)));
}

TEST(CompareCaseKey, AGeneratorSpecAndItsFileAreOneMesh) {
  const TempDir folder;
  const std::string spec = bench_results(folder, "spec", "tet:3:rcm");
  const std::string file = bench_results(folder, "file", cached_mesh_file(folder, "tet-3-rcm-seed1.h5"));
  const ordered_json spec_run = read_json(spec).at("runs").at(0), file_run = read_json(file).at("runs").at(0);
  EXPECT_NE(spec_run.at("mesh"), file_run.at("mesh"));
  ASSERT_TRUE(spec_run.at("mesh_digest").is_string()) << spec_run.dump();
  EXPECT_EQ(spec_run.at("mesh_digest").get<std::string>().size(), 16u);
  EXPECT_EQ(spec_run.at("mesh_digest"), file_run.at("mesh_digest"));

  const CommandResult same = compare_files(spec, file);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(contains(same.output, "tet:3:rcm reference full")) << same.output;
  EXPECT_TRUE(contains(same.output, "(NEW names the mesh '" + file_run.at("mesh").get<std::string>() + "')"))
      << same.output;
  EXPECT_FALSE(contains(same.output, "MISSING")) << same.output;
  EXPECT_TRUE(contains(same.output, "1 cases (1 same)")) << same.output;
  EXPECT_FALSE(contains(same.output, "note:")) << "both files have digests\n" << same.output;

  // Files written before the digest: the counts and ordering figures match the meshes, and compare says so.
  const auto without_digest = [](ordered_json& runs) {
    for (ordered_json& run : runs) run.erase("mesh_digest");
  };
  const std::string old_spec = edited_copy(folder, spec, "old-spec.json", without_digest);
  const std::string old_file = edited_copy(folder, file, "old-file.json", without_digest);
  for (const auto& [base, candidate] : {std::pair{old_spec, old_file}, std::pair{old_spec, file}}) {
    const CommandResult old = compare_files(base, candidate);
    EXPECT_EQ(old.exit_code, 0) << old.output;
    EXPECT_TRUE(contains(old.output, "1 cases (1 same)")) << old.output;
    EXPECT_TRUE(contains(old.output, "note: " + old_spec +
                                         ": 1 of 1 run has no \"mesh_digest\" (written by an older fluxjac or by "
                                         "hand): matched by their counts and ordering figures\n"))
        << old.output;
  }

  // Another mesh under the same name is another case, and the verdict says how the meshes differ.
  const std::string other_content = edited_copy(folder, file, "other-content.json", [&](ordered_json& runs) {
    runs.at(0)["mesh"] = spec_run.at("mesh");
    runs.at(0)["mesh_digest"] = "0000000000000001";
  });
  const CommandResult content = compare_files(spec, other_content);
  EXPECT_EQ(content.exit_code, 1) << content.output;
  EXPECT_TRUE(contains(content.output,
                       "MISSING [regression] (NEW's mesh 'tet:3:rcm' is another mesh: the same counts, other "
                       "content (mesh_digest))"))
      << content.output;
  const std::string other_counts = edited_copy(folder, old_file, "other-counts.json", [&](ordered_json& runs) {
    runs.at(0)["mesh"] = spec_run.at("mesh");
    runs.at(0)["n_edges"] = spec_run.at("n_edges").get<std::int64_t>() + 1;
  });
  const CommandResult counts = compare_files(old_spec, other_counts);
  EXPECT_EQ(counts.exit_code, 1) << counts.output;
  const auto n_edges = spec_run.at("n_edges").get<std::int64_t>();
  EXPECT_TRUE(contains(counts.output,
                       fmt::format("MISSING [regression] (NEW's mesh 'tet:3:rcm' is another mesh: n_edges {} in BASE, "
                                   "{} in NEW)",
                                   n_edges, n_edges + 1)))
      << counts.output;
  EXPECT_TRUE(contains(counts.output, fmt::format("new (BASE's mesh 'tet:3:rcm' is another mesh: n_edges {} in NEW, "
                                                  "{} in BASE)",
                                                  n_edges + 1, n_edges)))
      << counts.output;
}

TEST(CompareCaseKey, RanksArePartOfTheKeyAndTheVerdictSaysSo) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  const std::string two_ranks = edited_results(folder, "two-ranks.json", [](ordered_json& runs) {
    runs.at(0)["ranks"] = 2;
    runs.erase(runs.begin() + 1, runs.end());
  });
  const CommandResult result = compare_files(ci_sweep().json, two_ranks);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "MISSING [regression] (differs only in ranks: NEW ran it on 2 ranks)"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "ranks=2")) << result.output;
  EXPECT_TRUE(contains(result.output, "new (differs only in ranks: BASE ran it on 1 rank)")) << result.output;
}

TEST(CompareCaseKey, ManyRanksRecordTheDigestOfOneProcess) {
  if (!test::mpi_unavailable_reason().empty()) GTEST_SKIP() << test::mpi_unavailable_reason();
  const TempDir folder;
  // A partitioned file, read by slices on each rank.
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS (install libmetis-dev and rebuild): skipped";
  const std::string mesh = folder.file("box.h5"), partitioned = folder.file("box-2.h5");
  ASSERT_EQ(run_fluxjac(fmt::format("mesh gen -q --kind mixed --n 3 -o {}", shell_quoted(mesh))).exit_code, 0);
  const CommandResult partition =
      run_fluxjac(fmt::format("mesh partition {} --parts 2 -o {}", shell_quoted(mesh), shell_quoted(partitioned)));
  ASSERT_EQ(partition.exit_code, 0) << partition.output;
  const std::string one = bench_results(folder, "one", partitioned);
  const std::string two = bench_results(folder, "two", partitioned, 2);
  EXPECT_EQ(read_json(one).at("runs").at(0).at("mesh_digest"), read_json(two).at("runs").at(0).at("mesh_digest"));
  EXPECT_EQ(read_json(two).at("runs").at(0).at("ranks"), 2);
  const CommandResult result = compare_files(one, two);
  EXPECT_TRUE(contains(result.output, "(differs only in ranks: NEW ran it on 2 ranks)")) << result.output;
  // A mesh partitioned by METIS on rank 0 and sent to the ranks.
  EXPECT_EQ(read_json(bench_results(folder, "metis-one", mesh)).at("runs").at(0).at("mesh_digest"),
            read_json(bench_results(folder, "metis-two", mesh, 2)).at("runs").at(0).at("mesh_digest"));
}

TEST(CompareCaseKey, AFileThatRepeatsACaseIsRefusedNamingTheRuns) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  // Two sweeps merged: the second run of a case 100 times slower. Were BASE to keep the first run of a key and
  // NEW the last, the file would regress against itself.
  const std::string merged = edited_results(folder, "merged.json", [](ordered_json& runs) {
    ordered_json again = runs.at(2);
    again.at("assembly_ms")["median"] = again.at("assembly_ms").at("median").get<double>() * 100;
    runs.push_back(again);
  });
  const std::string message =
      merged + ": the same case more than once: runs[2] and runs[4] (tet:3:random reference full)";
  expect_rejected(compare_files(merged, merged), message);
  expect_rejected(compare_files(ci_sweep().json, merged), message);
  expect_rejected(compare_files(merged, ci_sweep().json), message);

  // One mesh named twice in a sweep (its spec and its cached file) is one case twice as well.
  const std::string cached = cached_mesh_file(ci_sweep().folder, "tet-3-random-seed1.h5");
  const std::string named_twice = edited_results(folder, "named-twice.json", [&](ordered_json& runs) {
    ordered_json again = runs.at(2);
    again["mesh"] = cached;
    runs.push_back(again);
    runs.push_back(runs.at(0));
  });
  const CommandResult twice = compare_files(named_twice, ci_sweep().json);
  expect_rejected(twice, "runs[2] and runs[4] (" + cached + " reference full); runs[0] and runs[5]");
}

TEST(CompareResults, ControlCharactersFromTheFilesAreEscaped) {
  const TempDir folder;
  // An escape sequence, a line break and a C1 CSI in the mesh name and the reason, a device name with a tab.
  const std::string text = R"({"schema": "fluxjac-bench", "device": {"name": "GPU\tX"}, "runs": [
  {"mesh": "box\u001b[31m\nred.h5", "variant": "hd", "mode": "full", "status": "skipped",
   "reason": "no \u009b2J CUDA device\r"}]})";
  const CommandResult result = compare_file_holding(folder, text);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_FALSE(contains(result.output, "\x1b")) << result.output;
  EXPECT_FALSE(contains(result.output, "\xc2\x9b")) << result.output;
  EXPECT_FALSE(contains(result.output, "\r")) << result.output;
  EXPECT_FALSE(contains(result.output, "\t")) << result.output;
  EXPECT_TRUE(contains(result.output, R"(box\x1b[31m\nred.h5 hd full)")) << result.output;
  EXPECT_TRUE(contains(result.output, R"((skipped: no \u009b2J CUDA device\r))")) << result.output;
  EXPECT_TRUE(contains(result.output, R"(GPU\tX)")) << result.output;
  // Two header lines, the note on the missing digest, a blank, the heading, one case, a blank, the summary.
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 8) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "1 of 1 run has no \"mesh_digest\" (written by an older fluxjac or by hand): "
                       "matched by the mesh's name (no counts recorded)"))
      << result.output;

  // An error line naming the same text stays one line.
  const std::string twice = R"({"schema": "fluxjac-bench", "runs": [
  {"mesh": "box\u001b[2J\n.h5", "variant": "hd", "mode": "full", "status": "skipped"},
  {"mesh": "box\u001b[2J\n.h5", "variant": "hd", "mode": "full", "status": "skipped"}]})";
  const CommandResult refused = compare_file_holding(folder, twice);
  expect_rejected(refused, R"(runs[0] and runs[1] (box\x1b[2J\n.h5 hd full))");
  EXPECT_FALSE(contains(refused.output, "\x1b")) << refused.output;
}

TEST(CompareResults, PrintableEscapesWhatATerminalWouldObey) {
  EXPECT_EQ(printable("mixed:100:rcm"), "mixed:100:rcm");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82")
      << "UTF-8 text stays readable";
  EXPECT_EQ(printable("a\tb\nc\rd\\e"), R"(a\tb\nc\rd\e)");
  EXPECT_EQ(printable(std::string("\x1b[31m\x07\x7f", 7) + std::string(1, '\0')), R"(\x1b[31m\x07\x7f\x00)");
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J \xc2\x85"),
            R"(\u009b2J \u0085)")
      << "C1 controls";
  EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0") << "U+00A0 is no control";
  EXPECT_EQ(printable("\xff\xfe"), R"(\xff\xfe)");
  EXPECT_EQ(printable("\xe2\x82"), R"(\xe2\x82)") << "a sequence cut short";
  EXPECT_EQ(printable("\xc0\xaf"), R"(\xc0\xaf)") << "an overlong form";
  EXPECT_EQ(printable("\xed\xa0\x80"), R"(\xed\xa0\x80)") << "a surrogate";
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)") << "above U+10FFFF";
}

// ---- the mesh digest: the identity of a mesh in result files ----------------------------------------------

TEST(MeshDigest, FollowsTheContentNotTheOrderOfTheEdgesOrTheirSplit) {
  const EdgeMesh mesh = test::generate_mesh("mixed", 3, "rcm").mesh;
  const std::uint64_t digest = mesh_digest(mesh);
  EXPECT_EQ(digest_text(digest).size(), 16u);
  EXPECT_EQ(digest_text(0x00000000000000abULL), "00000000000000ab");

  // The edges in reverse order: the same mesh.
  EdgeMesh reversed = mesh;
  const edge_index n = mesh.n_edges();
  for (edge_index e = 0; e < n; ++e) {
    const edge_index from = n - 1 - e;
    reversed.edges[2 * e] = mesh.edges[2 * from];
    reversed.edges[2 * e + 1] = mesh.edges[2 * from + 1];
    for (int axis = 0; axis < 3; ++axis) reversed.normals[3 * e + axis] = mesh.normals[3 * from + axis];
    reversed.areas[e] = mesh.areas[from];
  }
  EXPECT_EQ(mesh_digest(reversed), digest);

  // Two parts, as two ranks add them: the digest of the whole.
  MeshDigest first, second;
  for (edge_index e = 0; e < n; ++e) (e < n / 3 ? first : second).add_edge(mesh, e, mesh.left(e), mesh.right(e));
  MeshDigest whole;
  whole.add_part(first.sum());
  whole.add_part(second.sum());
  EXPECT_EQ(whole.value(mesh.n_nodes, n), digest);

  // Any change of the content is another mesh.
  EdgeMesh flipped = mesh;
  std::swap(flipped.edges[0], flipped.edges[1]);
  EXPECT_NE(mesh_digest(flipped), digest) << "an edge's direction";
  EdgeMesh area = mesh;
  area.areas[n / 2] = std::nextafter(area.areas[n / 2], 2.0 * area.areas[n / 2]);
  EXPECT_NE(mesh_digest(area), digest) << "the last bit of an area";
  EdgeMesh normal = mesh;
  normal.normals[3 * (n - 1) + 2] = -normal.normals[3 * (n - 1) + 2];
  EXPECT_NE(mesh_digest(normal), digest) << "a normal";
  EdgeMesh more_nodes = mesh;
  ++more_nodes.n_nodes;
  EXPECT_NE(mesh_digest(more_nodes), digest) << "an isolated node more";
}

// ---- the result model: one record, three printers, read back by compare ----------------------------------

/// \brief A GPU case that ran and validated, one that was skipped, and a CPU reference case.
std::vector<RunRecord> sample_records(const DeviceCeilings& device) {
  RunRecord gpu;
  gpu.mesh = {"mixed:100:rcm",      "/cache/mixed-100-rcm-seed1.h5", "rcm", 1030301, 5580300, 11160600, 9368, 4397.8,
              0x0123456789abcdefULL};
  gpu.variant = *Registry::instance().find("hd");
  gpu.mode = AssemblyMode::kFull;
  gpu.assembly = AssemblyStrategy::kNode;
  gpu.warmup = 1;
  gpu.reps = 3;
  gpu.assembly_ms = Stats::of({2.5, 2.4, 2.6});
  gpu.zero_ms = Stats::of({0.01, 0.02});
  gpu.resources = KernelResources{152, 0, 6400, 32, 16, 384, "file"};
  gpu.validated = true;
  gpu.comparison = {true, "", 9.5e-16, 5.2e-12, 3.1e-15, true};
  finish_record(gpu, device);

  RunRecord skipped = gpu;
  skipped.assembly = AssemblyStrategy::kEdge;
  skipped.edges_per_block_requested = 4096;
  skipped.status = CaseStatus::kSkipped;
  skipped.reason = "4096 edges per block need 8192 threads, \"at most\" 1024,\nthe kernel's limit";
  skipped.resources.reset();
  skipped.validated = false;

  RunRecord cpu = gpu;
  cpu.variant = *Registry::instance().find("reference");
  cpu.assembly.reset();
  cpu.resources.reset();
  cpu.comparison.aoff_error = std::nan("");  // written as null
  cpu.roofline_fraction = 0.0;
  finish_record(cpu, device);
  std::vector<RunRecord> records{gpu, skipped, cpu};
  relate_to_hd(records);
  return records;
}

TEST(RunRecord, OnlyTheFullAssemblyIsHeldAgainstTheFloor) {
  // The floor is the whole assembly's: compute-only and scatter-only leave out part of its work, and the time of one
  // of them over the whole floor would read as a fraction of a floor it does not have (over 100% for a store phase).
  DeviceCeilings device;
  device.copy_bandwidth_gbs = 3000.0;
  device.fp64_gflops = 33000.0;
  for (AssemblyMode mode : {AssemblyMode::kFull, AssemblyMode::kComputeOnly, AssemblyMode::kScatterOnly}) {
    RunRecord record;
    record.mesh = {"mixed:100:rcm", "", "rcm", 1030301, 5580300, 11160600, 9368, 4397.8, 0};
    record.variant = *Registry::instance().find("dn_10");
    record.mode = mode;
    record.assembly = AssemblyStrategy::kNode;
    record.assembly_ms = Stats::of({1.2, 1.2, 1.2});
    finish_record(record, device);
    if (mode == AssemblyMode::kFull)
      EXPECT_GT(record.roofline_fraction, 1.0) << "1.2 ms is under dn_10's floor: the fraction says so in full mode";
    else
      EXPECT_EQ(record.roofline_fraction, 0.0) << to_string(mode) << " has no floor of its own";
    EXPECT_GT(record.gbytes_per_s, 0.0) << "the model's rates are still given";
  }
}

DeviceCeilings sample_device() {
  DeviceCeilings device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.sm_count = 132;
  device.sm_clock_mhz = 1980;
  device.memory_clock_mhz = 2619;
  device.memory_gib = 79.1;
  device.l2_mib = 50.0;
  device.runtime_version = 13000;
  device.driver_version = 13000;
  device.copy_bandwidth_gbs = 3000.0;
  device.fp64_gflops = 51000.0;
  return device;
}

/// \brief The sample records and a case of two ranks in a strong-scaling sweep.
std::vector<RunRecord> golden_records(const DeviceCeilings& device) {
  std::vector<RunRecord> records = sample_records(device);
  RunRecord ranks = records[0];
  ranks.assembly_ms = Stats::of({1.3, 1.25, 1.4});
  ranks.zero_ms = Stats::of({0.005, 0.006});
  ranks.parallel.ranks = 2;
  ranks.parallel.halo_ms = Stats::of({0.03, 0.02, 0.04});
  ranks.parallel.rank_assembly_ms = Spread::of({1.3, 1.2, 1.25});
  ranks.parallel.halo_transport = "MPI";
  PartitionStatistics& statistics = ranks.parallel.partition.statistics;
  ranks.parallel.partition.source = "file partition";
  statistics.parts = {PartStatistics{}, PartStatistics{}};
  statistics.parts[0].ghosts = 5100;
  statistics.parts[1].ghosts = 5101;
  statistics.edge_cut = 10201;
  statistics.total_ghosts = 10201;
  statistics.edge_imbalance = 1.0004;
  statistics.node_imbalance = 1.00001;
  ranks.parallel.scaling = "strong";
  ranks.parallel.efficiency = 0.96;
  ranks.parallel.efficiency_with_halo = 0.94;
  finish_record(ranks, device);
  records.push_back(ranks);
  return records;
}

/// The runs of golden_records as format_json writes them: the result files are a contract (docs/bench-json.md),
/// so a change of these bytes is a change of the schema.
const char* const kGoldenRuns = R"golden(
  "runs": [
    {"mesh": "mixed:100:rcm", "mesh_file": "/cache/mixed-100-rcm-seed1.h5", "mesh_order": "rcm", "n_nodes": 1030301, "n_edges": 5580300, "n_offdiag_blocks": 11160600, "ordering_bandwidth": 9368, "mean_edge_span": 4397.8, "mesh_digest": "0123456789abcdef", "variant": "hd", "backend": "cuda", "emulates": null, "mode": "full", "orientation": "A", "residual": false, "aoff_precision": "f32", "assembly": "node", "threads_per_edge": 2, "threads_per_side": 1, "edges_per_block": 16, "edges_per_block_requested": 0, "warmup": 1, "reps": 3, "status": "ok", "reason": "", "assembly_ms": {"min": 2.4, "median": 2.5, "max": 2.6}, "zero_ms": {"min": 0.01, "median": 0.015, "max": 0.02}, "ns_per_edge": 0.4480045875669767, "model_bytes": 1813877444.0, "model_flops": 9821328000.0, "model_fp64_instructions": 7209747600.0, "gb_per_s": 725.5509776, "gflop_per_s": 3928.5312, "roofline_fraction": 0.24185032586666672, "time_relative_to_hd": 1.0, "resources": {"registers": 152, "local_bytes": 0, "shared_bytes": 6400, "block_threads": 32, "edges_per_block": 16, "max_block_threads": 384, "node_traversal": "file"}, "validation": {"adiag_error": 9.5e-16, "aoff_error": 5.2e-12, "residual_error": 3.1e-15, "adiag_tolerance": 1e-12, "aoff_tolerance": 1e-06, "residual_tolerance": 1e-10, "same_pattern": true, "passed": true}, "ranks": 1, "parallel": null, "solve": null},
    {"mesh": "mixed:100:rcm", "mesh_file": "/cache/mixed-100-rcm-seed1.h5", "mesh_order": "rcm", "n_nodes": 1030301, "n_edges": 5580300, "n_offdiag_blocks": 11160600, "ordering_bandwidth": 9368, "mean_edge_span": 4397.8, "mesh_digest": "0123456789abcdef", "variant": "hd", "backend": "cuda", "emulates": null, "mode": "full", "orientation": "A", "residual": false, "aoff_precision": "f32", "assembly": "edge", "threads_per_edge": 2, "threads_per_side": 1, "edges_per_block": null, "edges_per_block_requested": 4096, "warmup": 1, "reps": 3, "status": "skipped", "reason": "4096 edges per block need 8192 threads, \"at most\" 1024,\nthe kernel's limit", "assembly_ms": null, "zero_ms": null, "ns_per_edge": null, "model_bytes": 1837246840.0, "model_flops": 10100343000.0, "model_fp64_instructions": 7488762600.0, "gb_per_s": null, "gflop_per_s": null, "roofline_fraction": 0.24185032586666672, "time_relative_to_hd": null, "resources": null, "validation": null, "ranks": 1, "parallel": null, "solve": null},
    {"mesh": "mixed:100:rcm", "mesh_file": "/cache/mixed-100-rcm-seed1.h5", "mesh_order": "rcm", "n_nodes": 1030301, "n_edges": 5580300, "n_offdiag_blocks": 11160600, "ordering_bandwidth": 9368, "mean_edge_span": 4397.8, "mesh_digest": "0123456789abcdef", "variant": "reference", "backend": "cpu", "emulates": null, "mode": "full", "orientation": "A", "residual": false, "aoff_precision": "f32", "assembly": null, "threads_per_edge": 1, "threads_per_side": 1, "edges_per_block": null, "edges_per_block_requested": 0, "warmup": 1, "reps": 3, "status": "ok", "reason": "", "assembly_ms": {"min": 2.4, "median": 2.5, "max": 2.6}, "zero_ms": {"min": 0.01, "median": 0.015, "max": 0.02}, "ns_per_edge": 0.4480045875669767, "model_bytes": 1881889240.0, "model_flops": 14776634400.0, "model_fp64_instructions": 11400552900.0, "gb_per_s": 752.755696, "gflop_per_s": 5910.65376, "roofline_fraction": null, "time_relative_to_hd": 1.0, "resources": null, "validation": {"adiag_error": 9.5e-16, "aoff_error": null, "residual_error": 3.1e-15, "adiag_tolerance": 1e-12, "aoff_tolerance": 1e-06, "residual_tolerance": 1e-10, "same_pattern": true, "passed": true}, "ranks": 1, "parallel": null, "solve": null},
    {"mesh": "mixed:100:rcm", "mesh_file": "/cache/mixed-100-rcm-seed1.h5", "mesh_order": "rcm", "n_nodes": 1030301, "n_edges": 5580300, "n_offdiag_blocks": 11160600, "ordering_bandwidth": 9368, "mean_edge_span": 4397.8, "mesh_digest": "0123456789abcdef", "variant": "hd", "backend": "cuda", "emulates": null, "mode": "full", "orientation": "A", "residual": false, "aoff_precision": "f32", "assembly": "node", "threads_per_edge": 2, "threads_per_side": 1, "edges_per_block": 16, "edges_per_block_requested": 0, "warmup": 1, "reps": 3, "status": "ok", "reason": "", "assembly_ms": {"min": 1.25, "median": 1.3, "max": 1.4}, "zero_ms": {"min": 0.005, "median": 0.0055, "max": 0.006}, "ns_per_edge": 0.23296238553482793, "model_bytes": 906938600.0, "model_flops": 4910664000.0, "model_fp64_instructions": 3604873800.0, "gb_per_s": 697.6450769230768, "gflop_per_s": 3777.4338461538455, "roofline_fraction": 0.23254835897435897, "time_relative_to_hd": 1.0, "resources": {"registers": 152, "local_bytes": 0, "shared_bytes": 6400, "block_threads": 32, "edges_per_block": 16, "max_block_threads": 384, "node_traversal": "file"}, "validation": {"adiag_error": 9.5e-16, "aoff_error": 5.2e-12, "residual_error": 3.1e-15, "adiag_tolerance": 1e-12, "aoff_tolerance": 1e-06, "residual_tolerance": 1e-10, "same_pattern": true, "passed": true}, "ranks": 2, "parallel": {"halo_ms": {"min": 0.02, "median": 0.03, "max": 0.04}, "halo_transport": "MPI", "rank_assembly_ms": {"min": 1.2, "mean": 1.25, "max": 1.3}, "ns_per_edge_per_gpu": 0.46592477106965585, "partition": {"source": "file partition", "edge_cut": 10201, "ghosts_min": 5100, "ghosts_max": 5101, "ghosts_total": 10201, "edge_imbalance": 1.0004, "node_imbalance": 1.00001, "steps": []}, "scaling": "strong", "efficiency": 0.96, "efficiency_with_halo": 0.94}, "solve": null}
  ]
}
)golden";

TEST(ResultModel, RecordsAreWrittenAsTheGoldenRuns) {
  const DeviceCeilings device = sample_device();
  const std::string text = format_json(golden_records(device), device);
  const std::size_t runs = text.find("\n  \"runs\": [");
  ASSERT_NE(runs, std::string::npos) << text;
  EXPECT_EQ(text.substr(runs), kGoldenRuns);
}

TEST(ResultModel, RecordsRoundTripThroughJsonIntoCompare) {
  const DeviceCeilings device = sample_device();
  const std::vector<RunRecord> records = sample_records(device);
  const TempDir folder;
  const std::string path = folder.file("results.json");
  write_text_output(path, format_json(records, device));

  const ResultFile file = read_result_file(path);
  EXPECT_EQ(file.device, device.name);
  EXPECT_TRUE(contains(file.build, "fluxjac ")) << file.build;
  ASSERT_EQ(file.runs.size(), 3u);
  const ResultRun& gpu = file.runs[0];
  EXPECT_EQ(gpu.key(), "mixed:100:rcm hd full node epb=default");
  EXPECT_EQ(gpu.mesh.digest, records[0].mesh.digest) << "16 hexadecimal digits, read back";
  ASSERT_TRUE(gpu.mesh.figures.has_value());
  EXPECT_EQ(gpu.mesh.figures->n_offdiag_blocks, 11160600);
  EXPECT_EQ(gpu.status, "ok");
  ASSERT_TRUE(gpu.median_ms.has_value());
  EXPECT_EQ(*gpu.median_ms, records[0].assembly_ms.median) << "doubles are written to round-trip exactly";
  EXPECT_EQ(gpu.passed, std::optional<bool>(true));
  EXPECT_EQ(gpu.adiag_error, 9.5e-16);
  EXPECT_EQ(gpu.aoff_error, 5.2e-12);
  const ResultRun& skipped = file.runs[1];
  EXPECT_EQ(skipped.key(), "mixed:100:rcm hd full edge epb=4096");
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_EQ(skipped.reason, records[1].reason) << "quotes and line breaks survive";
  EXPECT_FALSE(skipped.median_ms.has_value());
  EXPECT_FALSE(skipped.passed.has_value());
  const ResultRun& cpu = file.runs[2];
  EXPECT_EQ(cpu.key(), "mixed:100:rcm reference full");
  EXPECT_TRUE(std::isnan(cpu.aoff_error)) << "a non-finite error is written as null and read back as NaN";

  const ComparisonReport report = compare_results(file, file, CompareOptions{});
  EXPECT_EQ(report.regressions, 0);
  ASSERT_EQ(report.cases.size(), 3u);
  EXPECT_EQ(report.cases[0].change, Change::kSame);
  EXPECT_EQ(report.cases[1].change, Change::kNotComparable);
}

TEST(ResultModel, JsonKeepsTheDocumentedKeysInOrder) {
  const DeviceCeilings device = sample_device();
  const std::vector<RunRecord> records = sample_records(device);
  const std::string text = format_json(records, device);
  const ordered_json document = ordered_json::parse(text);
  std::vector<std::string> top, run;
  for (const auto& member : document.items()) top.push_back(member.key());
  for (const auto& member : document.at("runs").at(0).items()) run.push_back(member.key());
  // docs/bench-json.md and scripts/plot_bench.py read these: a change here is a schema change.
  EXPECT_EQ(top, (std::vector<std::string>{"schema", "schema_version", "fluxjac", "host", "device", "model", "runs"}));
  EXPECT_EQ(run, (std::vector<std::string>{"mesh",
                                           "mesh_file",
                                           "mesh_order",
                                           "n_nodes",
                                           "n_edges",
                                           "n_offdiag_blocks",
                                           "ordering_bandwidth",
                                           "mean_edge_span",
                                           "mesh_digest",
                                           "variant",
                                           "backend",
                                           "emulates",
                                           "mode",
                                           "orientation",
                                           "residual",
                                           "aoff_precision",
                                           "assembly",
                                           "threads_per_edge",
                                           "threads_per_side",
                                           "edges_per_block",
                                           "edges_per_block_requested",
                                           "warmup",
                                           "reps",
                                           "status",
                                           "reason",
                                           "assembly_ms",
                                           "zero_ms",
                                           "ns_per_edge",
                                           "model_bytes",
                                           "model_flops",
                                           "model_fp64_instructions",
                                           "gb_per_s",
                                           "gflop_per_s",
                                           "roofline_fraction",
                                           "time_relative_to_hd",
                                           "resources",
                                           "validation",
                                           "ranks",
                                           "parallel",
                                           "solve"}));
  // The model of every variant the runs use, per strategy, as the variant declares it.
  const VariantWork& hd_work = Registry::instance().find("hd")->work;
  EXPECT_EQ(document.at("model").size(), 2u) << "hd and the reference";
  EXPECT_DOUBLE_EQ(document.at("model").at("hd").at("node").at("fp64_flops_per_edge").get<double>(),
                   hd_work.strategy("node").fp64_flops_per_edge());
  EXPECT_DOUBLE_EQ(document.at("model").at("hd").at("node").at("fp64_instructions_per_edge").get<double>(),
                   hd_work.strategy("node").fp64_instructions_per_edge());
  EXPECT_DOUBLE_EQ(document.at("runs").at(0).at("model_fp64_instructions").get<double>(),
                   hd_work.strategy("node").fp64_instructions_per_edge() * 5580300);
  EXPECT_DOUBLE_EQ(document.at("model").at("hd").at("edge").at("bytes_per_edge").get<double>(),
                   hd_work.strategy("edge").bytes.per_edge);
  EXPECT_TRUE(document.at("model").at("reference").contains("cpu"));
  EXPECT_DOUBLE_EQ(document.at("runs").at(0).at("time_relative_to_hd").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(document.at("runs").at(2).at("time_relative_to_hd").get<double>(), 1.0) << "same times as hd";
  EXPECT_TRUE(document.at("runs").at(1).at("time_relative_to_hd").is_null()) << "a skipped case has none";
  const ordered_json& gpu = document.at("runs").at(0);
  EXPECT_EQ(gpu.at("edges_per_block"), 16);
  EXPECT_EQ(gpu.at("resources").at("registers"), 152);
  EXPECT_EQ(gpu.at("resources").at("node_traversal"), "file");
  EXPECT_GT(gpu.at("roofline_fraction").get<double>(), 0.0);
  EXPECT_TRUE(document.at("runs").at(1).at("assembly_ms").is_null()) << "figures of a skipped case are null";
  EXPECT_TRUE(document.at("runs").at(1).at("edges_per_block").is_null());
  EXPECT_TRUE(document.at("runs").at(2).at("assembly").is_null());
  EXPECT_TRUE(document.at("runs").at(2).at("roofline_fraction").is_null()) << "no roofline for a CPU case";
  EXPECT_TRUE(document.at("runs").at(2).at("validation").at("aoff_error").is_null());
  // One run per line (short diffs, grep finds a case).
  std::size_t run_lines = 0;
  for (std::size_t at = text.find("\n    {\"mesh\": "); at != std::string::npos;
       at = text.find("\n    {\"mesh\": ", at + 1))
    ++run_lines;
  EXPECT_EQ(run_lines, 3u) << text;
}

TEST(ResultModel, CsvColumnsStayTheSameAndReadTheRecordsKeys) {
  const DeviceCeilings device = sample_device();
  const TempDir folder;
  const std::string path = folder.file("results.csv");
  write_text_output(path, format_csv(sample_records(device), device));
  const auto rows = read_csv(path);
  ASSERT_EQ(rows.size(), 4u);
  const std::string header =
      "mesh,mesh_file,mesh_order,n_nodes,n_edges,n_offdiag_blocks,ordering_bandwidth,variant,backend,mode,orientation,"
      "residual,aoff_precision,assembly,"
      "threads_per_edge,threads_per_side,edges_per_block,edges_per_block_requested,warmup,reps,status,min_ms,median_ms,"
      "max_ms,zero_median_ms,ns_per_edge,gb_per_s,gflop_per_s,roofline_fraction,time_relative_to_hd,registers,"
      "local_bytes,shared_bytes,"
      "block_threads,ranks,halo_median_ms,rank_max_ms,rank_min_ms,halo_transport,edge_cut,scaling,efficiency,"
      "efficiency_with_halo,"
      "adiag_error,aoff_error,residual_error,validation,solve_cfl,solve_preconditioner,solve_sweeps,"
      "solve_aoff_precision,solve_restart,solve_tolerance,solve_max_iterations,solved_on,solve_setup_ms,"
      "solve_iterations,solve_ms_per_iteration,solve_product_ms,solve_ms,solve_exchange_ms,solve_reduction_ms,"
      "solve_relative_residual,solve_converged,reason,fluxjac_version,git_revision,cxx_compiler,build_type,"
      "device,sm_count,sm_clock_mhz,memory_clock_mhz,cuda_runtime,cuda_driver,copy_gb_per_s,fp64_gflop_per_s";
  EXPECT_EQ(read_text(path).substr(0, read_text(path).find('\n')), header);
  auto value = [&](std::size_t row, const std::string& column) -> std::string {
    for (std::size_t c = 0; c < rows[0].size(); ++c)
      if (rows[0][c] == column) return c < rows[row].size() ? rows[row][c] : "(missing)";
    return "(no such column)";
  };
  for (std::size_t row = 1; row < rows.size(); ++row) EXPECT_EQ(rows[row].size(), rows[0].size()) << row;
  EXPECT_EQ(value(1, "median_ms"), "2.500000");
  // hd's own floor (node strategy) on this mesh at 3 TB/s and 51 TFLOP/s, over 2.5 ms.
  const WorkEstimate hd_node = estimate_work({"hd", "node", 1030301, 5580300, 11160600}, device);
  ASSERT_GT(hd_node.floor_ms, 0.0);
  EXPECT_EQ(value(1, "roofline_fraction"), fmt::format("{:.6f}", hd_node.floor_ms / 2.5));
  EXPECT_EQ(value(1, "gb_per_s"), fmt::format("{:.3f}", hd_node.bytes / 2.5e-3 / 1e9));
  EXPECT_EQ(value(1, "time_relative_to_hd"), "1.000000");
  EXPECT_EQ(value(1, "zero_median_ms"), "0.015000");
  EXPECT_EQ(value(1, "edges_per_block"), "16");
  EXPECT_EQ(value(1, "registers"), "152");
  EXPECT_EQ(value(1, "adiag_error"), "9.500e-16");
  EXPECT_EQ(value(1, "validation"), "PASS");
  EXPECT_EQ(value(1, "device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(value(1, "copy_gb_per_s"), "3000.0");
  EXPECT_EQ(value(1, "cuda_runtime"), "13000");
  EXPECT_EQ(value(2, "status"), "skipped");
  EXPECT_EQ(value(2, "reason"), sample_records(device)[1].reason) << "quoted, with its comma, quotes and line break";
  EXPECT_EQ(value(2, "median_ms"), "") << "figures that do not apply are empty";
  EXPECT_EQ(value(2, "edges_per_block"), "");
  EXPECT_EQ(value(2, "edges_per_block_requested"), "4096");
  EXPECT_EQ(value(2, "validation"), "n/a");
  EXPECT_EQ(value(3, "assembly"), "");
  EXPECT_EQ(value(3, "roofline_fraction"), "");
  EXPECT_EQ(value(3, "fluxjac_version"), value(1, "fluxjac_version"));
  EXPECT_FALSE(value(3, "fluxjac_version").empty());

  write_text_output(path, format_csv(sample_records(device), std::nullopt));
  const auto without_device = read_csv(path);
  EXPECT_EQ(without_device[1].size(), rows[0].size());
  EXPECT_EQ(without_device[1].back(), "") << "no device: its columns are empty";
}

TEST(ResultModel, TableShowsTheSameKeysForPeople) {
  const std::string table = format_table(sample_records(sample_device()));
  std::vector<std::string> lines;
  for (std::size_t at = 0, next; at < table.size(); at = next + 1) {
    next = table.find('\n', at);
    lines.push_back(table.substr(at, next - at));
  }
  ASSERT_EQ(lines.size(), 5u) << table;  // header, 3 cases, and the reason's own line break
  EXPECT_EQ(
      lines[0],
      "variant    mode          assembly  epb     min ms  median ms     max ms   ns/edge     GB/s roofline   x hd  "
      "Adiag err   Aoff err  valid");
  const DeviceCeilings device = sample_device();
  const WorkEstimate hd_node = estimate_work({"hd", "node", 1030301, 5580300, 11160600}, device);
  const WorkEstimate reference = estimate_work({"reference", "", 1030301, 5580300, 11160600}, std::nullopt);
  EXPECT_EQ(lines[1], fmt::format("hd         full          node       16     2.4000     2.5000     2.6000    0.4480 "
                                  "{:>8.1f} {:>7.1f}%   1.00   9.50e-16   5.20e-12   PASS",
                                  hd_node.bytes / 2.5e-3 / 1e9, 100.0 * hd_node.floor_ms / 2.5));
  EXPECT_EQ(lines[2],
            "hd         full          edge        - skipped: 4096 edges per block need 8192 threads, "
            "\"at most\" 1024,");
  EXPECT_EQ(lines[4],
            fmt::format("reference  full          -           -     2.4000     2.5000     2.6000    0.4480 {:>8.1f}    "
                        "    -   1.00   9.50e-16        nan   PASS",
                        reference.bytes / 2.5e-3 / 1e9));
}

TEST(ResultModel, NamesThatAreNotUtf8AreWrittenNotThrownOn) {
  const DeviceCeilings device = sample_device();
  std::vector<RunRecord> records = sample_records(device);
  records[0].mesh.name = "caf\xe9.h5";  // Latin-1, as an old file system may hold it
  const TempDir folder;
  const std::string path = folder.file("results.json");
  write_text_output(path, format_json(records, device));
  const ResultFile file = read_result_file(path);
  EXPECT_EQ(file.runs[0].mesh.name, "caf\xef\xbf\xbd.h5") << "the byte becomes U+FFFD";
}

// ---- units: generator specs ------------------------------------------------------------------------------

TEST(BenchMeshSpec, ParsesKindSizeOrderAndSeed) {
  const BoxMeshSpec spec = parse_mesh_spec("prism:12:random:42");
  EXPECT_EQ(spec.kind, MeshKind::kPrism);
  EXPECT_EQ(spec.n, 12);
  EXPECT_EQ(spec.order, NodeOrdering::kRandom);
  EXPECT_EQ(spec.seed, 42u);
  EXPECT_EQ(parse_mesh_spec("mixed:100:rcm").seed, 1u) << "seed 1 when left out, as in 'mesh gen'";
  EXPECT_TRUE(looks_like_mesh_spec("tet:4:natural"));
  EXPECT_FALSE(looks_like_mesh_spec("meshes/box-mixed-6-rcm.h5"));
  for (const char* bad : {"mixed:0:rcm", "mixed:4:rcm:x", "mixed:4:rcm:1:2", "cube:4:rcm", "mixed::rcm"}) {
    try {
      parse_mesh_spec(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << bad;
    }
  }
}

TEST(BenchMeshSpec, ATooLargeNIsCalledTooLargeWithTheGeneratorsLimit) {
  const std::string limit = "the generator takes n up to " + std::to_string(largest_box_mesh_n());
  EXPECT_EQ(largest_box_mesh_n(), 1289) << "(n+1)^3 nodes in int32";
  EXPECT_NO_THROW(validate_box_mesh_spec(parse_mesh_spec("tet:1289:natural")));
  for (const std::string n : {"1290", "4194303", "99999999999999999999"}) {
    try {
      parse_mesh_spec("tet:" + n + ":natural");
      ADD_FAILURE() << "accepted n = " << n;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
      EXPECT_TRUE(contains(e.what(), "n " + n + " is too large: " + limit)) << e.what();
    }
  }
  for (const std::string n : {"0", "000", "-1", "1e3"}) {
    try {
      parse_mesh_spec("tet:" + n + ":natural");
      ADD_FAILURE() << "accepted n = " << n;
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "n '" + n + "' is not a positive whole number")) << e.what();
    }
  }
}

TEST(BenchMeshSpec, CacheFolderFollowsXdgCacheHome) {
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string restore = saved ? saved : "";
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(default_mesh_cache(), "/somewhere/cache/fluxjac");
  const MeshSource source = resolve_mesh_source("mixed:20:rcm", "/my/cache");
  EXPECT_TRUE(source.spec.has_value());
  EXPECT_EQ(source.order, "rcm");
  EXPECT_EQ(source.file.rfind("/my/cache/", 0), 0u) << source.file;
  if (saved)
    setenv("XDG_CACHE_HOME", restore.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

// ---- plots ------------------------------------------------------------------------------------------------

TEST(PlotBench, RendersEveryChartFromTheSampleResults) {
  const TempDir folder;
  const std::string log = folder.file("plot.log");
  if (std::system(fmt::format("/usr/bin/python3 -c 'import matplotlib, numpy' > {} 2>&1", shell_quoted(log)).c_str()) !=
      0)
    GTEST_SKIP() << "plot test skipped: /usr/bin/python3 lacks matplotlib or numpy (apt-get install python3-matplotlib "
                    "python3-numpy)";
  const std::string command =
      fmt::format("/usr/bin/python3 {} {} --out {} > {} 2>&1", shell_quoted(kSourceDir + "/scripts/plot_bench.py"),
                  shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/sample-bench.json"),
                  shell_quoted(folder.file("plots")), shell_quoted(log));
  ASSERT_EQ(std::system(command.c_str()), 0) << read_text(log);
  for (const char* chart : {"time-vs-paper.png", "table4-split.png", "roofline.png", "ns-per-edge-vs-size.png",
                            "orderings.png", "edges-per-block.png"}) {
    const std::filesystem::path png = std::filesystem::path(folder.file("plots")) / chart;
    ASSERT_TRUE(std::filesystem::exists(png)) << chart << " missing\n" << read_text(log);
    EXPECT_GT(std::filesystem::file_size(png), 1000u) << chart;
  }

  // Drawn again into the same folder: refused, naming --force, every chart left as it was; with --force replaced.
  const std::filesystem::path roofline = std::filesystem::path(folder.file("plots")) / "roofline.png";
  std::ofstream(roofline, std::ios::binary | std::ios::trunc) << "a chart of the user's";
  const int refused = std::system(command.c_str());
  EXPECT_NE(refused, 0) << read_text(log);
  EXPECT_TRUE(contains(read_text(log), "exists")) << read_text(log);
  EXPECT_TRUE(contains(read_text(log), "--force")) << read_text(log);
  EXPECT_EQ(read_text(roofline.string()), "a chart of the user's");
  const std::string forced = command.substr(0, command.find(" > ")) + " --force" + command.substr(command.find(" > "));
  ASSERT_EQ(std::system(forced.c_str()), 0) << read_text(log);
  EXPECT_GT(std::filesystem::file_size(roofline), 1000u);
  for (const auto& entry : std::filesystem::directory_iterator(folder.file("plots")))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace fluxjac
