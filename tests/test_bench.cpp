// Benchmark tooling: `fluxjac bench` sweeps (configs/bench-ci.toml on the CPU reference: CSV and JSON contents,
// skipped cases, the mesh cache, progress), `fluxjac compare` regression checks (identical files, an injected
// slowdown, an injected validation failure, missing cases), the golden Jacobian in tests/data, the JSON reader,
// generator specs, and scripts/plot_bench.py on the checked-in sample result file.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "bench/json.hpp"
#include "bench/mesh_source.hpp"
#include "bench/sweep.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;

const std::string kSourceDir = FLUXJAC_SOURCE_DIR;
const std::string kCiConfig = kSourceDir + "/configs/bench-ci.toml";

std::string shell_quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Json read_json(const std::string& path) { return Json::parse(read_text(path), path); }

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
                           const std::function<void(Json& runs)>& edit) {
  Json results = read_json(ci_sweep().json);
  edit(*results.find("runs"));
  const std::string path = folder.file(name);
  std::ofstream(path) << results.dump();
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
  const Json results = read_json(ci_sweep().json);
  EXPECT_EQ(results.string_or("schema", ""), "fluxjac-bench");
  EXPECT_EQ(results.number_or("schema_version", 0), 1);
  const Json* build = results.find("fluxjac");
  ASSERT_TRUE(build);
  for (const char* key : {"version", "git_revision", "cxx_compiler", "cxx_flags", "build_type"})
    EXPECT_FALSE(build->string_or(key, "").empty()) << key;
  ASSERT_TRUE(results.find("device"));
  EXPECT_TRUE(results.find("device")->is_null()) << "no device in a CPU-only sweep";
  EXPECT_EQ(results.find("model")->number_or("flops_per_edge", 0), 2700);

  const std::vector<Json>& runs = results.find("runs")->items();
  ASSERT_EQ(runs.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> expected = {{"mixed:4:rcm", "full"},
                                                                     {"mixed:4:rcm", "compute-only"},
                                                                     {"tet:3:random", "full"},
                                                                     {"tet:3:random", "compute-only"}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    SCOPED_TRACE(fmt::format("runs[{}]", i));
    EXPECT_EQ(run.string_or("mesh", ""), expected[i].first);
    EXPECT_EQ(run.string_or("mode", ""), expected[i].second);
    EXPECT_EQ(run.string_or("variant", ""), "reference");
    EXPECT_EQ(run.string_or("mesh_order", ""), i < 2 ? "rcm" : "random");
    EXPECT_GT(run.number_or("ordering_bandwidth", 0), 0);
    EXPECT_GT(run.number_or("n_edges", 0), 0);
    EXPECT_GT(run.number_or("model_bytes", 0), 0);
    EXPECT_EQ(run.number_or("reps", 0), 2);
    if (expected[i].second == "full") {
      EXPECT_EQ(run.string_or("status", ""), "ok");
      const Json* times = run.find("assembly_ms");
      ASSERT_TRUE(times && times->is_object());
      EXPECT_GT(times->number_or("median", 0), 0);
      EXPECT_LE(times->number_or("min", 0), times->number_or("median", 0));
      EXPECT_LE(times->number_or("median", 0), times->number_or("max", 0));
      EXPECT_GT(run.number_or("ns_per_edge", 0), 0);
      const Json* validation = run.find("validation");
      ASSERT_TRUE(validation && validation->is_object());
      EXPECT_TRUE(validation->find("passed")->as_bool());
      EXPECT_EQ(validation->number_or("adiag_error", -1), 0.0) << "the reference against itself";
    } else {
      EXPECT_EQ(run.string_or("status", ""), "skipped");
      EXPECT_TRUE(contains(run.string_or("reason", ""), "runs only in mode 'full'"));
      EXPECT_TRUE(run.find("assembly_ms")->is_null());
      EXPECT_TRUE(run.find("validation")->is_null());
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
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "tet-2-rcm-seed1.h5");
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
  for (const SweepCase& sweep_case : plan.cases) EXPECT_NE(sweep_case.timing.strategy, AssemblyStrategy::kAuto);
  config.cases.assemblies = {"auto"};
  const SweepPlan automatic = plan_sweep(config);
  ASSERT_EQ(automatic.cases.size(), 2u);
  for (const SweepCase& sweep_case : automatic.cases)
    EXPECT_EQ(sweep_case.timing.strategy, variant_info(sweep_case.variant).preferred_assembly) << sweep_case.variant;
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
  const Json results = read_json(json);
  const std::vector<Json>& runs = results.find("runs")->items();
  ASSERT_EQ(runs.size(), 1u) << "CPU variants have no assembly or block-size axis";
  EXPECT_EQ(runs[0].number_or("reps", 0), 2) << "the command line overrides the config file";
  EXPECT_TRUE(runs[0].find("validation")->is_null()) << "validate = false";
}

// ---- golden Jacobian: any change in the reference's results is caught --------------------------------------

TEST(BenchGolden, ReferenceReproducesTheStoredJacobianExactly) {
  const TempDir folder;
  const std::string json = folder.file("golden.json");
  const CommandResult result = run_fluxjac(
      fmt::format("run -q --warmup 0 --reps 1 --mesh {} --variant reference --reference {} --json {}",
                  shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-mesh.h5"),
                  shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-jacobian.h5"), shell_quoted(json)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const Json results = read_json(json);
  const Json& run = results.find("runs")->items().at(0);
  const Json* validation = run.find("validation");
  ASSERT_TRUE(validation && validation->is_object()) << result.output;
  EXPECT_TRUE(validation->find("passed")->as_bool());
  EXPECT_EQ(validation->number_or("adiag_error", -1), 0.0) << "the CPU reference must be bit-for-bit stable";
  EXPECT_EQ(validation->number_or("aoff_error", -1), 0.0);
  EXPECT_GE(run.number_or("n_edges", 0), 2000) << "a few thousand edges";
}

TEST(BenchGolden, GpuVariantsMatchTheStoredJacobian) {
  if (!gpu_available()) GTEST_SKIP() << "GPU test skipped: no CUDA device (or a CPU-only build)";
  for (const char* assembly : {"node", "edge"}) {
    const CommandResult result =
        run_fluxjac(fmt::format("run -q --warmup 0 --reps 1 --variant hd,dn_10,dn_5,dn_2,dn5_2,edn_5,edn5_2 --assembly "
                                "{} --mesh {} --reference {}",
                                assembly, shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-mesh.h5"),
                                shell_quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/golden-jacobian.h5")));
    EXPECT_EQ(result.exit_code, 0) << assembly << "\n" << result.output;
  }
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
    return edited_results(folder, fmt::format("slower-{}.json", factor), [factor](Json& runs) {
      Json& times = *runs.items().at(2).find("assembly_ms");
      times.set("median", times.number_or("median", 0) * factor);
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
  const CommandResult faster =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(slower_by(1.25)), shell_quoted(ci_sweep().json)));
  EXPECT_EQ(faster.exit_code, 0) << faster.output;
  EXPECT_TRUE(contains(faster.output, "faster")) << faster.output;
}

TEST(CompareResults, InjectedValidationFailureIsARegression) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  const std::string failed = edited_results(folder, "failed.json", [](Json& runs) {
    Json& validation = *runs.items().at(0).find("validation");
    validation.set("passed", false).set("adiag_error", 3.5e-9);
  });
  const CommandResult result =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(failed)));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "VALIDATION FAILED (Adiag err 3.50e-09")) << result.output;
  EXPECT_TRUE(contains(result.output, "1 regression")) << result.output;
}

TEST(CompareResults, CasesThatNoLongerRunOrAreMissingAreRegressions) {
  ASSERT_EQ(ci_sweep().result.exit_code, 0) << ci_sweep().result.output;
  const TempDir folder;
  const std::string skipped = edited_results(folder, "skipped.json", [](Json& runs) {
    runs.items().at(0).set("status", "failed").set("reason", "CUDA error").set("assembly_ms", Json());
  });
  const CommandResult no_longer =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(skipped)));
  EXPECT_EQ(no_longer.exit_code, 1) << no_longer.output;
  EXPECT_TRUE(contains(no_longer.output, "NO LONGER RUNS (failed: CUDA error)")) << no_longer.output;

  const std::string fewer =
      edited_results(folder, "fewer.json", [](Json& runs) { runs.items().erase(runs.items().begin()); });
  const CommandResult missing =
      run_fluxjac(fmt::format("compare {} {}", shell_quoted(ci_sweep().json), shell_quoted(fewer)));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "MISSING")) << missing.output;
  const CommandResult allowed =
      run_fluxjac(fmt::format("compare --allow-missing {} {}", shell_quoted(ci_sweep().json), shell_quoted(fewer)));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
}

TEST(CompareResults, UnreadableFilesAreInputErrors) {
  const TempDir folder;
  std::ofstream(folder.file("broken.json")) << "{\"runs\": [\n  {\"mesh\": \"a\",\n";
  std::ofstream(folder.file("other.json")) << "{\"schema\": \"something-else\", \"runs\": []}";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {folder.file("broken.json"), "invalid JSON at line 3"},
      {folder.file("other.json"), "schema 'something-else' is not a fluxjac result file"},
      {folder.file("absent.json"), "no such result file"},
  };
  for (const auto& [file, message] : cases) {
    const CommandResult result = run_fluxjac(fmt::format("compare {} {}", shell_quoted(file), shell_quoted(file)));
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_TRUE(contains(result.output, message)) << "\"" << message << "\" missing in:\n" << result.output;
  }
}

// ---- units: the JSON value and generator specs ------------------------------------------------------------

TEST(BenchJson, WritesAndReadsBackEveryType) {
  Json value = Json::object()
                   .set("text", "quote \" backslash \\ tab \t newline \n")
                   .set("integer", std::int64_t{5580300})
                   .set("large", 2.5e15)
                   .set("fraction", 0.125)
                   .set("tiny", 1e-300)
                   .set("flag", true)
                   .set("nothing", Json())
                   .set("list", Json::array().push(1).push("two").push(Json::object().set("three", 3)));
  const Json back = Json::parse(value.dump(), "test");
  EXPECT_EQ(back.string_or("text", ""), "quote \" backslash \\ tab \t newline \n");
  EXPECT_EQ(back.number_or("integer", 0), 5580300);
  EXPECT_EQ(back.number_or("large", 0), 2.5e15);
  EXPECT_EQ(back.number_or("fraction", 0), 0.125);
  EXPECT_EQ(back.number_or("tiny", 0), 1e-300);
  EXPECT_TRUE(back.find("flag")->as_bool());
  EXPECT_TRUE(back.find("nothing")->is_null());
  ASSERT_EQ(back.find("list")->items().size(), 3u);
  EXPECT_EQ(back.find("list")->items()[2].number_or("three", 0), 3);
  EXPECT_EQ(Json::parse(R"({"u": "\u00e9\ud83d\ude00"})", "test").string_or("u", ""), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(Json(std::nan("")).dump(), "null\n") << "non-finite numbers are written as null";
}

TEST(BenchJson, ErrorsNameTheSourceLineAndColumn) {
  for (const auto& [text, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"{\"a\": 1,\n \"b\": }", "results.json: invalid JSON at line 2, column 7"},
           {"[1, 2", "unexpected end"},
           {"{\"a\": 1} x", "unexpected text after the document"},
           {"\"open", "unterminated string"}}) {
    try {
      Json::parse(text, "results.json");
      ADD_FAILURE() << "parsed: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInvalidInput);
      EXPECT_TRUE(contains(e.what(), fragment)) << e.what();
    }
  }
}

TEST(BenchMeshSpec, ParsesKindSizeOrderAndSeed) {
  const BoxMeshSpec spec = parse_mesh_spec("prism:12:random:42");
  EXPECT_EQ(spec.kind, "prism");
  EXPECT_EQ(spec.n, 12);
  EXPECT_EQ(spec.order, "random");
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
}

}  // namespace
}  // namespace fluxjac
