// ctest-label: cli
// CLI integration tests: run the real `fluxjac` executable on tiny meshes made by `fluxjac mesh gen` — help
// texts, the registry listing, mesh generation and `info`, reference runs with table/CSV/JSON output, stored
// references (exact and perturbed), TOML configs, and every invalid input of docs/design.md, "Edge mesh and state" and
// usage error as the user sees it: exit code, one `fluxjac: error:` line naming file, dataset and index, no partial
// output.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "test_support.hpp"
#include "util/hdf5.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;

/// Every name the registry must show (docs/design.md, "The variants").
const std::vector<std::string> kVariantNames = {"reference", "dn_10", "dn_5", "dn_2", "dn5_2", "edn_5", "edn5_2", "hd"};

/// Repetitions kept to one: these tests check behaviour, not timings.
constexpr const char* kQuickRun = "run -q --warmup 0 --reps 1";

/// \brief A path quoted for the shell that run_fluxjac goes through.
std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

/// \brief How many times fragment occurs in text.
std::size_t count_of(const std::string& text, const std::string& fragment) {
  std::size_t count = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + fragment.size()))
    ++count;
  return count;
}

/// \brief Expects every fragment in text, naming the missing one and showing the text.
void expect_all(const std::string& text, const std::vector<std::string>& fragments) {
  for (const std::string& fragment : fragments)
    EXPECT_TRUE(contains(text, fragment)) << "\"" << fragment << "\" missing in:\n" << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  return parts;
}

/// \brief The first data row of a CSV file by column name; empty when the file has no data row. A column
/// without a value reads "(missing)".
std::map<std::string, std::string> first_csv_row(const std::string& path) {
  const std::vector<std::string> lines = split(read_text(path), '\n');
  std::map<std::string, std::string> row;
  if (lines.size() < 2) return row;
  const std::vector<std::string> names = split(lines[0], ',');
  const std::vector<std::string> values = split(lines[1] + ",", ',');  // the extra ',' keeps a last empty field
  for (std::size_t i = 0; i < names.size(); ++i) row[names[i]] = i < values.size() ? values[i] : "(missing)";
  if (values.size() > names.size()) row["(extra values)"] = lines[1];
  return row;
}

/// \brief The value of a column of first_csv_row, or "(no such column)".
std::string column(const std::map<std::string, std::string>& row, const std::string& name) {
  const auto at = row.find(name);
  return at == row.end() ? "(no such column)" : at->second;
}

/// \brief Runs `fluxjac mesh gen` (quietly) and expects success.
void generate_mesh(const std::string& path, const std::string& kind, int n, const std::string& order) {
  const CommandResult result =
      run_fluxjac(fmt::format("mesh gen -q --kind {} --n {} --order {} -o {}", kind, n, order, quoted(path)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
}

/// \brief A mixed n = 3 mesh (64 nodes) with its state, made once per test process.
const std::string& small_mesh() {
  static const TempDir folder;
  static const std::string path = [] {
    const std::string mesh = folder.file("mixed-3-rcm.h5");
    generate_mesh(mesh, "mixed", 3, "rcm");
    return mesh;
  }();
  return path;
}

/// \brief True when this fluxjac was built with CUDA ('fluxjac list' marks unbuilt variants 'cuda*').
bool built_with_cuda() { return !contains(run_fluxjac("list").output, "cuda*"); }

/// \brief Reads a dataset as T, lets edit change the values (and shape), and stores the result as U.
template <class T, class U = T>
void rewrite_dataset(const std::string& file_path, const std::string& dataset,
                     const std::function<void(std::vector<T>&, std::vector<std::int64_t>&)>& edit) {
  h5::File file = h5::File::open(file_path, h5::File::Mode::kReadWrite);
  const h5::DatasetInfo info = h5::describe_dataset(file, dataset);
  std::vector<T> values = h5::read<T>(file, info);
  std::vector<std::int64_t> shape = info.shape;
  edit(values, shape);
  h5::replace(file, dataset, std::vector<U>(values.begin(), values.end()), shape);
  file.close();
}

/// \brief Expects no file named `name` nor any temporary `name.tmp-*` in folder: nothing partial was left.
void expect_no_output(const TempDir& folder, const std::string& name) {
  for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
    EXPECT_NE(entry.path().filename().string().rfind(name, 0), 0u) << "left behind: " << entry.path();
}

/// Names each instance of a parameterized test after its case.
struct CaseName {
  template <class TestInfo>
  std::string operator()(const TestInfo& info) const {
    return info.param.name;
  }
};

// ---- help and listing ----------------------------------------------------------------------------------------

struct HelpCase {
  std::string name, args;
  std::vector<std::string> mentions;
};

void PrintTo(const HelpCase& help, std::ostream* out) { *out << help.name << " --help"; }

std::vector<HelpCase> help_cases() {
  return {
      {"app", "", {"run", "list", "info", "mesh", "device", "Exit codes"}},
      {"run",
       "run",
       {"--mesh", "--state", "--variant", "--warmup", "--reps", "--mode", "--validate", "--reference", "--output",
        "--csv", "--json", "--config", "--adiag-tolerance", "--aoff-tolerance"}},
      {"list", "list", {"registered variants"}},
      {"info", "info", {"file", "Jacobian"}},
      {"mesh", "mesh", {"gen", "dual", "partition"}},
      {"mesh_gen",
       "mesh gen",
       {"--kind", "tet", "prism", "mixed", "--n", "--order", "natural", "random", "rcm", "--jitter", "--seed",
        "--output"}},
      {"device", "device", {"bandwidth", "FP64"}},
  };
}

class Help : public ::testing::TestWithParam<HelpCase> {};

TEST_P(Help, ExitsZeroAndMentionsKeyOptions) {
  const CommandResult result = run_fluxjac(GetParam().args + " --help");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  expect_all(result.output, GetParam().mentions);
}

INSTANTIATE_TEST_SUITE_P(Cli, Help, ::testing::ValuesIn(help_cases()), CaseName());

TEST(CliHelp, SubcommandsShowTheirOwnExamplesAndFlagsReadRight) {
  // The top level's examples are about run, bench and compare: list and device inherited them.
  for (const char* command : {"list", "device", "info", "compare"}) {
    const CommandResult result = run_fluxjac(std::string(command) + " --help");
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_FALSE(contains(result.output, "fluxjac compare base.json")) << command << " --help:\n" << result.output;
  }
  for (const char* command : {"run", "bench"}) {
    const CommandResult result = run_fluxjac(std::string(command) + " --help");
    EXPECT_EQ(result.exit_code, 0) << result.output;
    // "--no-validate{false}" reads as "off by default"; the default is in the text.
    EXPECT_FALSE(contains(result.output, "{false}")) << result.output;
    expect_all(result.output, {"--validate", "--no-validate", "on unless --no-validate", "--threads", "Examples:"});
  }
  EXPECT_TRUE(std::regex_search(run_fluxjac("run --help").output, std::regex(R"(-o,\s*--output)")));
}

/// \brief The subcommands a --help lists (the names under "Subcommands:").
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  const std::vector<std::string> lines = split(help, '\n');
  auto line = std::find(lines.begin(), lines.end(), "Subcommands:");
  if (line == lines.end()) return names;
  const std::regex entry(R"(^  ([a-z]+)( |$))");  // a name; its description's further lines start with spaces
  std::smatch match;
  for (++line; line != lines.end() && !line->empty() && line->front() == ' '; ++line)
    if (std::regex_search(*line, match, entry)) names.push_back(match[1]);
  return names;
}

TEST(CliHelp, EveryHelpFitsAHundredColumns) {
  constexpr std::size_t kColumns = 100;
  std::vector<std::string> commands = {""};  // every command and subcommand, found through the helps' lists
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const CommandResult result = run_fluxjac(commands[i] + " --help");
    EXPECT_EQ(result.exit_code, 0) << "fluxjac " << commands[i] << " --help\n" << result.output;
    for (const std::string& line : split(result.output, '\n'))
      EXPECT_LE(line.size(), kColumns) << "fluxjac " << commands[i] << " --help: " << line;
    for (const std::string& sub : listed_subcommands(result.output))
      commands.push_back(commands[i].empty() ? sub : commands[i] + " " + sub);
  }
  for (const char* command : {"run", "bench", "compare", "mesh gen", "mesh dual", "mesh partition"})
    EXPECT_NE(std::find(commands.begin(), commands.end(), command), commands.end()) << command << " is not listed";
}

TEST(CliList, ShowsEveryRegisteredVariant) {
  const CommandResult result = run_fluxjac("list");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const std::string& name : kVariantNames) {
    const bool listed = std::regex_search(result.output, std::regex("(^|\n)" + name + " "));
    EXPECT_TRUE(listed) << name << " is not listed in:\n" << result.output;
  }
}

// ---- mesh gen and info -----------------------------------------------------------------------------------------

class MeshGen : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(MeshGen, WritesAMeshThatInfoDescribes) {
  const auto& [kind, order] = GetParam();
  const TempDir folder;
  const std::string mesh = folder.file("box.h5");
  const CommandResult generated =
      run_fluxjac(fmt::format("mesh gen -q --kind {} --n 3 --order {} -o {}", kind, order, quoted(mesh)));
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  expect_all(generated.output, {"64 nodes", "order " + order});
  if (kind == "tet") {
    EXPECT_TRUE(contains(generated.output, " 0 prisms")) << generated.output;
  } else if (kind == "prism") {
    EXPECT_TRUE(contains(generated.output, " 0 tetrahedra")) << generated.output;
  }
  expect_no_output(folder, "box.h5.tmp-");

  const CommandResult info = run_fluxjac("info " + quoted(mesh));
  EXPECT_EQ(info.exit_code, 0) << info.output;
  expect_all(info.output, {"fluxjac edge mesh", "gamma 1.4", "density", "pressure", "Mach number"});
  EXPECT_TRUE(std::regex_search(info.output, std::regex(R"(nodes\s+64\b)"))) << info.output;
}

INSTANTIATE_TEST_SUITE_P(Cli, MeshGen,
                         ::testing::Combine(::testing::Values("tet", "prism", "mixed"),
                                            ::testing::Values("natural", "random", "rcm")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST(CliMeshGen, RefusesAMeshTooLargeForTheMemoryWithItsEstimate) {
  const std::optional<AvailableMemory> memory = available_memory();
  ASSERT_TRUE(memory.has_value());
  BoxMeshSpec spec;
  spec.n = 1200;
  if (static_cast<double>(memory->bytes) >= estimate_box_mesh_bytes(spec))
    GTEST_SKIP() << "SKIPPED: this machine has room for a mesh of n = 1200";
  const TempDir folder;
  const CommandResult result = run_fluxjac("mesh gen -q --kind mixed --n 1200 -o " + quoted(folder.file("huge.h5")));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  expect_all(result.output, {"fluxjac: error: box mesh mixed n = 1200 (natural order): generating it needs about ",
                             " is available (MemAvailable in /proc/meminfo): use n <= "});
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "one line: " << result.output;
  expect_no_output(folder, "huge.h5");
}

// ---- the bundled mesh ------------------------------------------------------------------------------------------

/// \brief Every dataset of an HDF5 file (type, shape and raw bytes) and every attribute (value as text), by path
/// ("/mesh/areas", "/mesh@n_nodes"), so that two files compare by content, whatever their HDF5 layout and dates.
std::map<std::string, std::string> hdf5_contents(const std::string& path) {
  const h5::File file = h5::File::open(path);
  std::vector<std::string> objects = {"/"};
  H5Lvisit(
      file.id(), H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(std::string("/") + name);
        return 0;
      },
      &objects);
  std::map<std::string, std::string> contents;
  for (const std::string& object : objects) {
    const h5::Object handle(H5Oopen(file.id(), object.c_str(), H5P_DEFAULT));
    std::vector<std::string> attributes;
    H5Aiterate2(
        handle.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
          static_cast<std::vector<std::string>*>(data)->push_back(name);
          return 0;
        },
        &attributes);
    for (const std::string& name : attributes) {
      const h5::Attribute attribute(H5Aopen(handle.id(), name.c_str(), H5P_DEFAULT));
      const h5::Datatype type(H5Aget_type(attribute.id()));
      contents[object + "@" + name] = H5Tget_class(type.id()) == H5T_STRING
                                          ? *h5::read_string_attribute(file, object, name)
                                          : fmt::format("{:.17g}", *h5::read_number_attribute(file, object, name));
    }
    if (H5Iget_type(handle.id()) != H5I_DATASET) continue;
    const h5::DatasetInfo info = h5::describe_dataset(file, object);
    const h5::Dataset dataset(H5Dopen2(file.id(), object.c_str(), H5P_DEFAULT));
    const h5::Datatype stored(H5Dget_type(dataset.id()));
    const h5::Datatype native(H5Tget_native_type(stored.id(), H5T_DIR_ASCEND));
    std::int64_t n_values = 1;
    for (const std::int64_t extent : info.shape) n_values *= extent;
    std::string bytes(static_cast<std::size_t>(n_values) * H5Tget_size(native.id()), '\0');
    h5::read_raw(file, info, native.id(), bytes.data());
    contents[object] = info.type.name() + " " + h5::shape_text(info.shape) + " " + bytes;
  }
  return contents;
}

TEST(BundledMesh, RegeneratesIdenticallyFromItsDocumentedCommand) {
  const std::string bundled = std::string(FLUXJAC_SOURCE_DIR) + "/meshes/box-mixed-6-rcm.h5";
  const std::string readme = read_text(std::string(FLUXJAC_SOURCE_DIR) + "/meshes/README.md");
  std::smatch command;
  ASSERT_TRUE(std::regex_search(readme, command,
                                std::regex(R"(`build/fluxjac (mesh gen [^`]*) -o meshes/box-mixed-6-rcm\.h5`)")))
      << "meshes/README.md no longer documents how box-mixed-6-rcm.h5 is made";
  const TempDir folder;
  const std::string regenerated = folder.file("box-mixed-6-rcm.h5");
  const CommandResult result = run_fluxjac(command[1].str() + " -q -o " + quoted(regenerated));
  ASSERT_EQ(result.exit_code, 0) << result.output;

  const std::map<std::string, std::string> expected = hdf5_contents(bundled), actual = hdf5_contents(regenerated);
  for (const auto& [name, value] : expected) {
    const auto found = actual.find(name);
    if (found == actual.end())
      ADD_FAILURE() << name << " is in the bundled mesh but not in the regenerated one";
    else
      EXPECT_TRUE(found->second == value)
          << name << " differs (regenerate meshes/box-mixed-6-rcm.h5 with " << command[0] << ")";
  }
  for (const auto& entry : actual)
    EXPECT_EQ(expected.count(entry.first), 1u) << entry.first << " is new: the bundled mesh lacks it";
  EXPECT_TRUE(expected.count("/mesh/boundary_nodes")) << "the bundled mesh predates the boundary flags";
}

// ---- runs, stored references, reports --------------------------------------------------------------------------

/// \brief `fluxjac run` quickly on the shared small mesh, with extra arguments.
CommandResult quick_run(const std::string& extra) {
  return run_fluxjac(fmt::format("{} --mesh {} {}", kQuickRun, quoted(small_mesh()), extra));
}

TEST(CliRun, ReferencePrintsAPassingTable) {
  const CommandResult result = quick_run("--variant reference");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  expect_all(result.output, {"variant", "median ms", "Adiag err", "Aoff err", "reference", "PASS", "64 nodes"});
  EXPECT_FALSE(contains(result.output, "FAIL")) << result.output;
}

TEST(CliRun, StoredReferenceMatchesExactlyAndAPerturbedOneFails) {
  const TempDir folder;
  const std::string stored = folder.file("J.h5"), perturbed = folder.file("J-perturbed.h5");
  const CommandResult written = quick_run("--output " + quoted(stored));
  ASSERT_EQ(written.exit_code, 0) << written.output;
  ASSERT_TRUE(std::filesystem::exists(stored));
  expect_no_output(folder, "J.h5.tmp-");

  const CommandResult same = quick_run("--reference " + quoted(stored));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  expect_all(same.output, {"0.00e+00   0.00e+00", "PASS"});

  // Change the largest Adiag value by 1e-6 relative: far above the 1e-12 tolerance.
  std::filesystem::copy_file(stored, perturbed);
  rewrite_dataset<double>(perturbed, "/jacobian/adiag", [](std::vector<double>& adiag, auto&) {
    auto largest =
        std::max_element(adiag.begin(), adiag.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
    *largest *= 1.0 + 1e-6;
  });
  const CommandResult different = quick_run("--reference " + quoted(perturbed));
  EXPECT_EQ(different.exit_code, 1) << different.output;
  expect_all(different.output, {"FAIL", "validation FAILED"});
}

TEST(CliRun, WritesCsvAndJsonReports) {
  const TempDir folder;
  const std::string csv = folder.file("runs.csv"), json = folder.file("runs.json");
  const CommandResult result = quick_run(fmt::format("--csv {} --json {}", quoted(csv), quoted(json)));
  ASSERT_EQ(result.exit_code, 0) << result.output;

  EXPECT_EQ(split(read_text(csv), '\n').size(), 2u) << "expected a header and one row:\n" << read_text(csv);
  const std::map<std::string, std::string> row = first_csv_row(csv);
  for (const char* name : {"mesh", "n_edges", "backend", "mode", "threads_per_edge", "min_ms", "median_ms", "max_ms",
                           "ns_per_edge", "gb_per_s", "adiag_error", "aoff_error"}) {
    const std::string value = column(row, name);
    EXPECT_TRUE(value != "(no such column)" && value != "(missing)") << name << ": " << value << "\n" << read_text(csv);
  }
  EXPECT_EQ(row.count("(extra values)"), 0u) << "more values than columns:\n" << read_text(csv);
  const std::map<std::string, std::string> expected = {
      {"variant", "reference"}, {"n_nodes", "64"}, {"reps", "1"}, {"validation", "PASS"}};
  for (const auto& [name, value] : expected) EXPECT_EQ(column(row, name), value) << name;

  expect_all(read_text(json), {"\"runs\"", "\"variant\": \"reference\"", "\"validation\"", "\"passed\": true"});
}

// ---- the GPU variants' CPU emulation (NAME:cpu) ------------------------------------------------------------------

TEST(CliEmulation, EveryGpuVariantRunsOnTheCpuValidatedAndLabelled) {
  const TempDir folder;
  const std::string json = folder.file("runs.json"), csv = folder.file("runs.csv");
  const CommandResult result =
      quick_run(fmt::format("--variant all:cpu --transpose --residual --json {} --csv {}", quoted(json), quoted(csv)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* name : {"hd:cpu", "dn5_2:cpu", "dn_10:cpu", "dn_2:cpu", "dn_5:cpu", "edn5_2:cpu", "edn_5:cpu"})
    EXPECT_TRUE(std::regex_search(result.output, std::regex(std::string("\\n") + name + " +full +A\\^T +node .*PASS")))
        << name << "\n"
        << result.output;
  expect_all(result.output, {"7 cases: 7 ran", "CPU emulations of the GPU variants",
                             "NAME:cpu: the CPU emulation of GPU variant NAME; its times are not GPU performance"});
  // Times, but no throughput held against a device, no ratio to hd: an emulation's time is not a GPU figure.
  const std::string text = read_text(json);
  expect_all(text, {"\"variant\": \"hd:cpu\"", "\"emulates\": \"hd\"", "\"backend\": \"cpu\""});
  const std::map<std::string, std::string> row = first_csv_row(csv);
  EXPECT_EQ(column(row, "gb_per_s"), "") << read_text(csv);
  EXPECT_EQ(column(row, "roofline_fraction"), "") << read_text(csv);
  EXPECT_EQ(column(row, "time_relative_to_hd"), "") << read_text(csv);
  EXPECT_NE(column(row, "median_ms"), "") << read_text(csv);
}

TEST(CliEmulation, BothStrategiesRunAndTheTableOfModesRefusesTheSplit) {
  const CommandResult strategies = quick_run("--variant hd:cpu --assembly edge,node");
  ASSERT_EQ(strategies.exit_code, 0) << strategies.output;
  EXPECT_TRUE(contains(strategies.output, "2 cases: 2 ran")) << strategies.output;
  for (const char* strategy : {"edge", "node"})
    EXPECT_TRUE(
        std::regex_search(strategies.output, std::regex(std::string("\\nhd:cpu +full +") + strategy + " .*PASS")))
        << strategy << "\n"
        << strategies.output;
  const CommandResult split = quick_run("--variant hd:cpu --mode compute-only");
  EXPECT_EQ(split.exit_code, 3) << split.output;
  EXPECT_TRUE(contains(split.output, "variant 'hd:cpu' runs only in mode 'full'")) << split.output;
}

TEST(CliEmulation, AGpuVariantThatCannotRunNamesItsEmulationAndAMisspellingIsNamed) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present: every GPU variant runs";
  const CommandResult gpu = quick_run("--variant hd");
  EXPECT_EQ(gpu.exit_code, 3) << gpu.output;
  EXPECT_TRUE(contains(gpu.output, "hd:cpu")) << gpu.output;
  const CommandResult typo = quick_run("--variant hd:cpy");
  EXPECT_EQ(typo.exit_code, 3) << typo.output;
  EXPECT_TRUE(contains(typo.output, "did you mean 'hd:cpu'?")) << typo.output;
}

TEST(CliEmulation, SeveralVariantsWriteOneFileEachAndOnlyThoseFilesAreChecked) {
  const TempDir folder;
  const std::string output = folder.file("J.h5");
  // J.h5 itself is not written with several variants, so an existing J.h5 is no reason to refuse.
  std::ofstream(output) << "the user's own J.h5";
  const CommandResult written = quick_run(fmt::format("--variant hd:cpu,dn5_2:cpu -o {}", quoted(output)));
  ASSERT_EQ(written.exit_code, 0) << written.output;
  EXPECT_EQ(read_text(output), "the user's own J.h5");
  EXPECT_TRUE(std::filesystem::exists(folder.file("J-hd-cpu.h5"))) << written.output;
  EXPECT_TRUE(std::filesystem::exists(folder.file("J-dn5_2-cpu.h5"))) << written.output;
  // One of the files it would write exists: refused before any work, naming it, and nothing written.
  std::filesystem::remove(folder.file("J-dn5_2-cpu.h5"));
  const auto before = std::filesystem::last_write_time(folder.file("J-hd-cpu.h5"));
  const CommandResult refused = quick_run(fmt::format("--variant hd:cpu,dn5_2:cpu -o {}", quoted(output)));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "J-hd-cpu.h5")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--force")) << refused.output;
  EXPECT_FALSE(contains(refused.output, "[case 1/")) << refused.output;
  EXPECT_FALSE(std::filesystem::exists(folder.file("J-dn5_2-cpu.h5")));
  EXPECT_EQ(std::filesystem::last_write_time(folder.file("J-hd-cpu.h5")), before);
}

TEST(CliEmulation, TheSolveRunsOnAnEmulatedAssembly) {
  const CommandResult result =
      run_fluxjac(fmt::format("solve -q --mesh {} --variant dn5_2:cpu --cfl 10", quoted(small_mesh())));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::regex_search(result.output, std::regex("dn5_2:cpu +10 +pbjacobi .* yes"))) << result.output;
}

// ---- TOML configs -----------------------------------------------------------------------------------------------

TEST(CliConfig, FileSetsOptionsAndTheCommandLineOverridesThem) {
  const TempDir folder;
  const std::string config = folder.file("run.toml"), csv = folder.file("runs.csv");
  std::ofstream(config) << fmt::format("mesh = \"{}\"\nvariant = \"reference\"\nreps = 3\nwarmup = 0\n", small_mesh());
  auto reps_column = [&](const std::string& extra) -> std::string {
    const CommandResult result =
        run_fluxjac(fmt::format("run -q --force --config {} --csv {} {}", quoted(config), quoted(csv), extra));
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return column(first_csv_row(csv), "reps");
  };
  EXPECT_EQ(reps_column(""), "3") << "reps from the config file";
  EXPECT_EQ(reps_column("--reps 2"), "2") << "--reps on the command line overrides the config file";
}

TEST(CliMessages, AMisspelledGeneratorKindGetsTheNearestKind) {
  for (const auto& [spec, kind] :
       std::vector<std::pair<std::string, std::string>>{{"mixd:20:rcm", "mixed"}, {"tett:3:random", "tet"}}) {
    const CommandResult result = run_fluxjac(fmt::format("run -q --mesh {}", spec));
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find(fmt::format("did you mean '{}'?", kind)), std::string::npos) << result.output;
  }
  const CommandResult plain = run_fluxjac("run -q --mesh no-such-mesh.h5");
  EXPECT_EQ(plain.output.find("did you mean"), std::string::npos) << plain.output;
}

TEST(CliMessages, AValueOfTheWrongKindSaysWhatTheOptionTakes) {
  const CommandResult option = run_fluxjac("run -q --reps three");
  EXPECT_EQ(option.exit_code, 3) << option.output;
  EXPECT_NE(option.output.find("--reps three: not a whole number"), std::string::npos) << option.output;
  const TempDir folder;
  const std::string config = folder.file("bad.toml");
  std::ofstream(config) << "reps = \"three\"\n";
  const CommandResult key = run_fluxjac(fmt::format("run -q --config {}", quoted(config)));
  EXPECT_EQ(key.exit_code, 3) << key.output;
  EXPECT_NE(key.output.find("bad.toml:1: reps = three: not a whole number"), std::string::npos) << key.output;
  EXPECT_EQ(key.output.find("Could not convert"), std::string::npos) << key.output;
}

TEST(CliConfig, PathsResolveFromTheConfigFilesFolderWhereverFluxjacStarts) {
  const TempDir folder;
  std::filesystem::create_directories(folder.path() / "study" / "meshes");
  std::filesystem::copy_file(small_mesh(), folder.file("study/meshes/box.h5"));
  const std::string config = folder.file("study/run.toml");
  std::ofstream(config) << "mesh = \"meshes/box.h5\"\nvariant = \"reference\"\nreps = 1\nwarmup = 0\n"
                           "json = \"out/runs.json\"\n";
  std::filesystem::create_directories(folder.path() / "study" / "out");
  // Started from another folder: the mesh and the output are the config folder's.
  const CommandResult result = test::run_command(
      fmt::format("cd {} && '{}' run -q --config study/run.toml", quoted(folder.path().string()), FLUXJAC_EXECUTABLE));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::filesystem::exists(folder.file("study/out/runs.json")));
  // A path that is not there is named as tried, from the config's folder.
  std::ofstream(config) << "mesh = \"missing.h5\"\nvariant = \"reference\"\n";
  const CommandResult missing = test::run_command(
      fmt::format("cd {} && '{}' run -q --config study/run.toml", quoted(folder.path().string()), FLUXJAC_EXECUTABLE));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("study/missing.h5"), std::string::npos) << missing.output;
}

TEST(CliConfig, FlagKeysMeanWhatTheirNamesSay) {
  const TempDir folder;
  const std::string config = folder.file("flags.toml"), csv = folder.file("runs.csv");
  for (const char* command : {"run", "bench"})
    for (const auto& [line, validated] : std::vector<std::pair<std::string, bool>>{{"no-validate = true", false},
                                                                                   {"no-validate = false", true},
                                                                                   {"validate = false", false},
                                                                                   {"validate = true", true},
                                                                                   {"no_validate = true", false}}) {
      std::ofstream(config) << fmt::format("mesh = \"{}\"\nvariant = \"reference\"\nreps = 1\nwarmup = 0\n{}\n",
                                           small_mesh(), line);
      const CommandResult result =
          run_fluxjac(fmt::format("{} -q --force --config {} --csv {}", command, quoted(config), quoted(csv)));
      ASSERT_EQ(result.exit_code, 0) << command << " " << line << "\n" << result.output;
      EXPECT_EQ(column(first_csv_row(csv), "validation"), validated ? "PASS" : "n/a") << command << ": " << line;
    }
}

struct MalformedConfigCase {
  std::string name, text;
  int line;
  std::string fragment;
};

void PrintTo(const MalformedConfigCase& bad, std::ostream* out) { *out << bad.name; }

std::vector<MalformedConfigCase> malformed_config_cases() {
  return {
      {"unterminated_string", "json = \"out.json\n", 4, "unterminated string"},
      {"bare_word", "json = out.json\n", 4, "'out.json' is not a value"},
      {"no_equals", "json \"out.json\"\n", 4, "expected '='"},
      {"no_value", "reps =\n", 4, "has no value"},
      {"text_after_value", "reps = 1 2\n", 4, "after the value"},
      {"table", "[run]\nreps = 1\n", 4, "tables"},
      {"duplicate_key", "mesh = \"other.h5\"\n", 4, "set twice (first on line 1)"},
      {"same_option_twice", "variants = [\"reference\"]\n", 4, "sets the same option as 'variant' on line 2"},
      {"unterminated_array", "modes = [\"full\",\n\n", 4, "unterminated array"},
      {"list_for_one_value", "warmup = [0, 1]\n", 4, "takes one value"},
      {"flag_not_boolean", "validate = 1\n", 4, "give true or false"},
      {"unknown_key", "# comment\n\nrepetitions = 3\n", 6, "unknown key 'repetitions' (keys are"},
      {"misspelled_key", "repz = 3\n", 4, "unknown key 'repz'; did you mean 'reps'?"},
      {"bad_escape", "json = \"out\\q.json\"\n", 4, "unsupported escape"},
  };
}

class MalformedConfig : public ::testing::TestWithParam<MalformedConfigCase> {};

TEST_P(MalformedConfig, IsRefusedWithItsLineAndNothingIsWritten) {
  const TempDir folder;
  const std::string config = folder.file("run.toml"), csv = folder.file("runs.csv");
  // Line 3 is a valid output: a parser that let the bad line through would write it.
  std::ofstream(config) << fmt::format("mesh = \"{}\"\nvariant = \"reference\"\ncsv = \"{}\"\n{}", small_mesh(), csv,
                                       GetParam().text);
  const CommandResult result = run_fluxjac(fmt::format("run -q --warmup 0 --reps 1 --config {}", quoted(config)));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(result.output.rfind(fmt::format("fluxjac: error: {}:{}: ", config, GetParam().line), 0), 0u)
      << result.output;
  EXPECT_TRUE(contains(result.output, GetParam().fragment)) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "not one line:\n" << result.output;
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
    if (entry.path().filename() != "run.toml") left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "written: " << left.front();
}

INSTANTIATE_TEST_SUITE_P(Cli, MalformedConfig, ::testing::ValuesIn(malformed_config_cases()), CaseName());

TEST(CliConfig, AConfigThatIsNoFileIsNamedForWhatItIs) {
  const TempDir folder;
  const std::string fifo = folder.file("fifo.toml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const struct Case {
    std::string path, says;
  } cases[] = {{folder.file("missing.toml"), "config file not found"},
               {folder.path().string(), "is a folder, not a config file"},
               {fifo, "is not a regular file (a FIFO, device or socket)"},
               {"/dev/zero", "is not a regular file"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    // At once: a FIFO is never opened (nothing would ever write into it).
    const CommandResult result = run_fluxjac(fmt::format("run -q --config {}", quoted(c.path)));
    EXPECT_EQ(result.exit_code, 3) << result.output;
    EXPECT_TRUE(contains(result.output, c.path + ": " + c.says)) << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "not one line:\n" << result.output;
  }
}

TEST(CliConfig, EveryShippedConfigIsRead) {
  // --dry-run reads the config and plans the cases without running them.
  const TempDir folder;
  for (const char* name : {"bench-ci", "paper", "orderings", "scaling"}) {
    const CommandResult result = run_fluxjac(fmt::format(
        "bench --dry-run --variant reference --config {} --cache {}",
        quoted(std::string(FLUXJAC_SOURCE_DIR) + "/configs/" + name + ".toml"), quoted(folder.file("cache"))));
    EXPECT_EQ(result.exit_code, 0) << name << "\n" << result.output;
  }
  for (const char* name : {"default", "ci"}) {
    const std::string path = std::string(FLUXJAC_SOURCE_DIR) + "/configs/" + name + ".toml";
    const CommandResult result = run_fluxjac(
        fmt::format("run -q --config {} --mesh {} --reps 1 --warmup 0", quoted(path), quoted(small_mesh())));
    EXPECT_EQ(result.exit_code, 0) << name << "\n" << result.output;
  }
}

// ---- invalid input (docs/design.md, "Edge mesh and state"): exit 2, one line naming file, dataset and index, no
// output file -----------

/// The files a bad-input case passes to `fluxjac run`, and the one its message must name.
struct BadInputFiles {
  std::string mesh, state, named;
};

struct BadInputCase {
  std::string name;
  /// Builds the files in folder, starting from a copy of the small mesh at `copy`.
  std::function<BadInputFiles(const TempDir& folder, const std::string& copy)> prepare;
  std::vector<std::string> fragments;  ///< expected in the message besides the file name
};

/// \brief A case that edits one dataset of the mesh copy (as T, stored back as U).
template <class T, class U = T>
BadInputCase spoil_dataset(std::string name, std::string dataset,
                           std::function<void(std::vector<T>&, std::vector<std::int64_t>&)> edit,
                           std::vector<std::string> fragments) {
  auto prepare = [dataset, edit](const TempDir&, const std::string& copy) {
    rewrite_dataset<T, U>(copy, dataset, edit);
    return BadInputFiles{copy, "", copy};
  };
  return {std::move(name), prepare, std::move(fragments)};
}

/// \brief A case that changes the mesh copy through the open file.
BadInputCase spoil_file(std::string name, std::function<void(const h5::File&)> edit,
                        std::vector<std::string> fragments) {
  auto prepare = [edit](const TempDir&, const std::string& copy) {
    h5::File file = h5::File::open(copy, h5::File::Mode::kReadWrite);
    edit(file);
    file.close();
    return BadInputFiles{copy, "", copy};
  };
  return {std::move(name), prepare, std::move(fragments)};
}

/// \brief Sets one value of a flattened array (row-major, `width` values per row).
template <class T>
std::function<void(std::vector<T>&, std::vector<std::int64_t>&)> set_value(std::size_t row, int width, int component,
                                                                           T value) {
  return [=](std::vector<T>& values, auto&) { values.at(row * width + component) = value; };
}

std::vector<BadInputCase> bad_input_cases() {
  using Edges = std::vector<std::int32_t>;
  using Shape = std::vector<std::int64_t>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {
      {"missing_file",
       [](const TempDir& folder, const std::string&) {
         const std::string absent = folder.file("absent.h5");
         return BadInputFiles{absent, "", absent};
       },
       {"file not found"}},
      {"not_hdf5",
       [](const TempDir& folder, const std::string&) {
         const std::string text = folder.file("text.h5");
         std::ofstream(text) << "not an HDF5 file\n";
         return BadInputFiles{text, "", text};
       },
       {"not an HDF5 file"}},
      spoil_file("missing_dataset", [](const h5::File& file) { h5::remove(file, "/mesh/normals"); },
                 {"/mesh/normals", "not found"}),
      spoil_dataset<double>("wrong_shape", "/mesh/areas",
                            [](std::vector<double>& areas, Shape& shape) {
                              areas.pop_back();
                              --shape[0];
                            },
                            {"/mesh/areas", "shape"}),
      spoil_dataset<double, float>("float32_normals", "/mesh/normals", [](auto&, Shape&) { /* same values */ },
                                   {"/mesh/normals", "float32"}),
      spoil_dataset<std::int32_t>("index_out_of_range", "/mesh/edges", set_value<std::int32_t>(7, 2, 1, 64),
                                  {"/mesh/edges[7]", "out of range"}),
      spoil_dataset<std::int32_t>("self_loop", "/mesh/edges",
                                  [](Edges& edges, Shape&) { edges[2 * 7 + 1] = edges[2 * 7]; },
                                  {"/mesh/edges[7]", "self-loop"}),
      spoil_dataset<std::int32_t>("duplicate_edge_reversed", "/mesh/edges",
                                  [](Edges& edges, Shape&) {
                                    edges[2 * 9] = edges[2 * 4 + 1];
                                    edges[2 * 9 + 1] = edges[2 * 4];
                                  },
                                  {"/mesh/edges[9]", "duplicate"}),
      spoil_dataset<double>("nan_in_state", "/state/Q", set_value(11, 5, 2, nan), {"/state/Q[11]", "finite"}),
      spoil_dataset<double>("non_unit_normal", "/mesh/normals",
                            [](std::vector<double>& normals, Shape&) {
                              for (int k = 0; k < 3; ++k) normals[3 * 5 + k] *= 1.001;
                            },
                            {"/mesh/normals[5]", "unit length"}),
      spoil_dataset<double>("zero_area", "/mesh/areas", set_value(6, 1, 0, 0.0), {"/mesh/areas[6]", "positive"}),
      spoil_file("gamma_1_3", [](const h5::File& file) { h5::write_attribute(file, "/state", "gamma", 1.3); },
                 {"/state", "gamma", "1.3"}),
      spoil_dataset<double>("negative_density", "/state/Q", set_value(12, 5, 0, -1.0), {"/state/Q[12]", "density"}),
      spoil_dataset<double>("subnormal_density", "/state/Q", set_value(12, 5, 0, 1e-310),
                            {"/state/Q[12]", "density is 1e-310", "below the normal range"}),
      spoil_dataset<double>("negative_pressure", "/state/Q", set_value(13, 5, 4, 0.0), {"/state/Q[13]", "pressure"}),
      {"state_file_node_count",
       [](const TempDir& folder, const std::string& copy) {
         const std::string state = folder.file("state-27-nodes.h5");
         generate_mesh(state, "tet", 2, "natural");
         return BadInputFiles{copy, state, state};
       },
       {"/state/Q", "[27, 5]", "[64, 5]"}},
  };
}

void PrintTo(const BadInputCase& bad, std::ostream* out) { *out << bad.name; }

class BadInput : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(BadInput, ExitsTwoWithOneLineNamingTheProblemAndWritesNothing) {
  const TempDir folder;
  const std::string copy = folder.file("mesh.h5");
  std::filesystem::copy_file(small_mesh(), copy);
  const BadInputFiles files = GetParam().prepare(folder, copy);
  const std::string state = files.state.empty() ? "" : " --state " + quoted(files.state);
  const CommandResult result = run_fluxjac(
      fmt::format("{} --mesh {}{} --output {}", kQuickRun, quoted(files.mesh), state, quoted(folder.file("out.h5"))));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output.rfind("fluxjac: error: " + files.named + ": ", 0), 0u) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "not one line:\n" << result.output;
  expect_all(result.output, GetParam().fragments);
  expect_no_output(folder, "out.h5");
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(bad_input_cases()), CaseName());

// ---- usage errors: exit 3 ----------------------------------------------------------------------------------------

struct UsageCase {
  std::string name, args;
  std::vector<std::string> fragments;
};

void PrintTo(const UsageCase& usage, std::ostream* out) { *out << "fluxjac run " << usage.args; }

std::vector<UsageCase> usage_cases() {
  std::vector<std::string> lists_every_variant = {"fluxjac: error:", "no_such_variant"};
  lists_every_variant.insert(lists_every_variant.end(), kVariantNames.begin(), kVariantNames.end());
  return {
      {"unknown_variant", "--variant no_such_variant", lists_every_variant},
      {"zero_reps", "--reps 0", {"fluxjac: error:", "--reps"}},
      {"output_with_compute_only", "--mode full,compute-only", {"fluxjac: error:", "--output needs --mode full"}},
      {"unknown_option", "--no-such-option", {"--no-such-option"}},
  };
}

class Usage : public ::testing::TestWithParam<UsageCase> {};

TEST_P(Usage, ExitsThree) {
  const TempDir folder;
  const CommandResult result = run_fluxjac(fmt::format("run -q --mesh {} {} --output {}", quoted(small_mesh()),
                                                       GetParam().args, quoted(folder.file("out.h5"))));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  expect_all(result.output, GetParam().fragments);
  expect_no_output(folder, "out.h5");
}

INSTANTIATE_TEST_SUITE_P(Cli, Usage, ::testing::ValuesIn(usage_cases()), CaseName());

// ---- case options: run and bench check them the same way --------------------------------------------------------

/// \brief `fluxjac COMMAND` as a quick run of the reference on the small mesh writing a CSV, with `extra`
/// arguments (one repetition and no warm-up unless extra sets them: an option given twice is an error).
std::string quick_case_args(const std::string& command, const std::string& csv, const std::string& extra) {
  return fmt::format("{} -q --mesh {} --variant reference --csv {}{}{} {}", command, quoted(small_mesh()), quoted(csv),
                     contains(extra, "--warmup") ? "" : " --warmup 0", contains(extra, "--reps") ? "" : " --reps 1",
                     extra);
}

struct BadOptionCase {
  std::string name, args;
  std::vector<std::string> fragments;
};

void PrintTo(const BadOptionCase& bad, std::ostream* out) { *out << bad.args; }

std::vector<BadOptionCase> bad_option_cases() {
  return {
      // 2 + reps overflowed int: nothing ran and an empty result validated.
      {"reps_overflow", "--warmup 2 --reps 2147483647", {"--reps 2147483647", "1000000"}},
      {"reps_zero", "--reps 0", {"--reps 0"}},
      {"warmup_overflow", "--warmup 2147483647", {"--warmup 2147483647", "1000"}},
      {"warmup_negative", "--warmup -1", {"--warmup -1"}},
      {"edges_per_block_negative", "--edges-per-block -5", {"--edges-per-block -5"}},
      {"edges_per_block_huge", "--edges-per-block 100000", {"--edges-per-block 100000"}},
      {"threads_negative", "--threads -2", {"--threads -2"}},
      {"adiag_tolerance_nan", "--adiag-tolerance nan", {"--adiag-tolerance nan", "finite"}},
      {"adiag_tolerance_inf", "--adiag-tolerance inf", {"--adiag-tolerance inf", "finite"}},
      {"aoff_tolerance_nan", "--aoff-tolerance nan", {"--aoff-tolerance nan", "finite"}},
      {"aoff_tolerance_negative", "--aoff-tolerance -1e-6", {"--aoff-tolerance -1e-06"}},
      {"no_mode", "--mode ''", {"fluxjac: error:"}},
  };
}

class BadCaseOption : public ::testing::TestWithParam<std::tuple<std::string, BadOptionCase>> {};

TEST_P(BadCaseOption, IsRefusedByRunAndBenchAlikeAndNothingIsWritten) {
  const auto& [command, bad] = GetParam();
  const TempDir folder;
  const std::string csv = folder.file("runs.csv");
  const CommandResult result = run_fluxjac(quick_case_args(command, csv, bad.args));
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(result.output.rfind("fluxjac: error: ", 0), 0u) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << "not one line:\n" << result.output;
  expect_all(result.output, bad.fragments);
  expect_no_output(folder, "runs.csv");
}

INSTANTIATE_TEST_SUITE_P(Cli, BadCaseOption,
                         ::testing::Combine(::testing::Values("run", "bench"), ::testing::ValuesIn(bad_option_cases())),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

TEST(CliOptions, NonFiniteNumbersAreRefusedInEveryCommand) {
  const std::string sample = quoted(std::string(FLUXJAC_TEST_DATA_DIR) + "/sample-bench.json");
  const TempDir folder;
  const std::vector<std::pair<std::string, std::string>> cases = {
      // A NaN tolerance made every slowdown comparison false: no regression, ever.
      {"compare " + sample + " " + sample + " --time-tolerance nan", "--time-tolerance"},
      {"compare " + sample + " " + sample + " --time-tolerance inf", "--time-tolerance"},
      {"compare " + sample + " " + sample + " --time-tolerance -0.1", "--time-tolerance"},
      {"mesh gen -q --kind tet --n 2 --jitter nan -o " + quoted(folder.file("box.h5")), "jitter"},
  };
  for (const auto& [args, fragment] : cases) {
    const CommandResult result = run_fluxjac(args);
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_EQ(result.output.rfind("fluxjac: error: ", 0), 0u) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, fragment)) << args << "\n" << result.output;
  }
  expect_no_output(folder, "box.h5");
}

TEST(CliOptions, ParserErrorsAreOneFluxjacErrorLine) {
  for (const char* args : {"run --no-such-option", "run --reps many", "bench --mode fast", "mesh gen --kind tet",
                           "compare only-one.json", "no-such-command"}) {
    const CommandResult result = run_fluxjac(args);
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_EQ(result.output.rfind("fluxjac: error: ", 0), 0u) << args << "\n" << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << args << "\n" << result.output;
  }
  EXPECT_TRUE(contains(run_fluxjac("run --reps many").output, "see 'fluxjac run --help'"));
}

// ---- unknown words: named, with the nearest valid one ------------------------------------------------------------

struct UnknownWordCase {
  std::string name, args, error;  ///< error: the whole line, without "fluxjac: error: "
};

void PrintTo(const UnknownWordCase& unknown, std::ostream* out) { *out << "fluxjac " << unknown.args; }

/// `{csv}` in args stands for a report file that must not be written.
std::vector<UnknownWordCase> unknown_word_cases() {
  return {
      {"subcommand", "runn --mesh {mesh} --csv {csv}",
       "unknown subcommand 'runn'; did you mean 'run'? (see 'fluxjac --help')"},
      {"subcommand_swapped_letters", "bnech --mesh {mesh} --csv {csv}",
       "unknown subcommand 'bnech'; did you mean 'bench'? (see 'fluxjac --help')"},
      {"subcommand_of_mesh", "mesh genn --kind tet --n 2 -o {csv}",
       "unknown subcommand 'genn'; did you mean 'gen'? (see 'fluxjac mesh --help')"},
      {"subcommand_far_from_any", "assemble --mesh {mesh}", "unknown subcommand 'assemble' (see 'fluxjac --help')"},
      {"no_subcommand", "",
       "'fluxjac' needs a subcommand: run, list, info, mesh, device, bench, compare or solve (see 'fluxjac --help')"},
      {"no_subcommand_of_mesh", "mesh",
       "'fluxjac mesh' needs a subcommand: gen, dual or partition (see 'fluxjac mesh --help')"},
      {"option", "run --mesh {mesh} --repz 3 --csv {csv}",
       "unknown option '--repz'; did you mean '--reps'? (see 'fluxjac run --help')"},
      {"option_with_value", "bench --mesh {mesh} --warmpu=0 --csv {csv}",
       "unknown option '--warmpu'; did you mean '--warmup'? (see 'fluxjac bench --help')"},
      {"option_far_from_any", "run --mesh {mesh} --no-such-option --csv {csv}",
       "unknown option '--no-such-option' (see 'fluxjac run --help')"},
      {"option_of_another_command", "run --mesh {mesh} --dry-run --csv {csv}",
       "unknown option '--dry-run' (see 'fluxjac run --help')"},
      {"value_too_many", "run --mesh {mesh} extra.h5 --csv {csv}",
       "unexpected 'extra.h5': --mesh takes one value (see 'fluxjac run --help')"},
      {"value_of_a_flag", "run --mesh {mesh} -q yes --csv {csv}",
       "unexpected 'yes': -q takes no value (see 'fluxjac run --help')"},
  };
}

class UnknownWord : public ::testing::TestWithParam<UnknownWordCase> {};

TEST_P(UnknownWord, IsNamedWithTheNearestValidNameAndExitsThree) {
  const TempDir folder;
  std::string args = GetParam().args;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{mesh}", quoted(small_mesh())},
                                   {"{csv}", quoted(folder.file("runs.csv"))}})
    if (args.find(key) != std::string::npos) args.replace(args.find(key), key.size(), value);
  const CommandResult result = run_fluxjac(args);
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(result.output, "fluxjac: error: " + GetParam().error + "\n");
  expect_no_output(folder, "runs.csv");
}

INSTANTIATE_TEST_SUITE_P(Cli, UnknownWord, ::testing::ValuesIn(unknown_word_cases()), CaseName());

TEST(CliUsage, AMisspelledVariantIsNamedWithTheNearestOneInRunAndBench) {
  const TempDir folder;
  const std::string csv = folder.file("runs.csv");
  for (const char* command : {"run", "bench"}) {
    const CommandResult result = run_fluxjac(
        fmt::format("{} -q --mesh {} --variant reference,dn52 --csv {}", command, quoted(small_mesh()), quoted(csv)));
    EXPECT_EQ(result.exit_code, 3) << command << "\n" << result.output;
    EXPECT_EQ(result.output.rfind("fluxjac: error: unknown variant 'dn52'; did you mean 'dn5_2'? (registered: ", 0), 0u)
        << command << "\n"
        << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << command << "\n" << result.output;
    expect_no_output(folder, "runs.csv");
  }
}

TEST(CliOptions, AMissingMeshIsInvalidInputInRunAndBench) {
  const TempDir folder;
  const std::string absent = folder.file("absent.h5");
  for (const char* command : {"run", "bench"}) {
    const CommandResult result = run_fluxjac(fmt::format("{} -q --mesh {}", command, quoted(absent)));
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_EQ(result.output.rfind("fluxjac: error: " + absent + ": file not found", 0), 0u) << result.output;
  }
}

TEST(CliOptions, ContradictionsAreRefusedBeforeAnyWork) {
  const TempDir folder;
  const std::string stored = folder.file("J.h5"), csv = folder.file("runs.csv");
  ASSERT_EQ(quick_run("--output " + quoted(stored)).exit_code, 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--no-validate --reference " + quoted(stored), "--no-validate"},
      {"--mode compute-only --reference " + quoted(stored), "mode full"},
      {"--variant reference --mode compute-only --output " + quoted(folder.file("J2.h5")), "--output"},
  };
  for (const auto& [args, fragment] : cases) {
    const CommandResult result = run_fluxjac(
        fmt::format("run --warmup 0 --reps 1 --mesh {} --csv {} {}", quoted(small_mesh()), quoted(csv), args));
    EXPECT_EQ(result.exit_code, 3) << args << "\n" << result.output;
    EXPECT_EQ(result.output.rfind("fluxjac: error: ", 0), 0u) << args << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, fragment)) << args << "\n" << result.output;
    expect_no_output(folder, "runs.csv");
    expect_no_output(folder, "J2.h5");
  }
}

TEST(CliOptions, OptionsWithoutEffectAreNoted) {
  const CommandResult tuned = quick_run("--variant reference --assembly node --edges-per-block 32");
  EXPECT_EQ(tuned.exit_code, 0) << tuned.output;
  expect_all(tuned.output, {"fluxjac: note: --assembly and --edges-per-block tune GPU variants only", "PASS"});
  const CommandResult unvalidated = quick_run("--no-validate --aoff-tolerance 1e-3");
  EXPECT_EQ(unvalidated.exit_code, 0) << unvalidated.output;
  expect_all(unvalidated.output, {"fluxjac: note: --adiag-tolerance and --aoff-tolerance have no effect"});
}

TEST(CliRun, StoredReferenceOfAnotherMeshIsRefusedBeforeRunning) {
  const TempDir folder;
  const std::string other_mesh = folder.file("tet-2.h5"), stored = folder.file("J-tet-2.h5");
  generate_mesh(other_mesh, "tet", 2, "natural");
  ASSERT_EQ(
      run_fluxjac(fmt::format("{} --mesh {} --output {}", kQuickRun, quoted(other_mesh), quoted(stored))).exit_code, 0);
  const std::string csv = folder.file("runs.csv");
  const CommandResult result = run_fluxjac(fmt::format("run --warmup 0 --reps 1 --mesh {} --reference {} --csv {}",
                                                       quoted(small_mesh()), quoted(stored), quoted(csv)));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  expect_all(result.output, {"fluxjac: error: " + stored + ": a Jacobian of another mesh", "node counts differ"});
  EXPECT_FALSE(contains(result.output, "[case")) << "a case ran before the check:\n" << result.output;
  expect_no_output(folder, "runs.csv");
}

TEST(CliRun, ThreadsOptionSetsTheReferenceThreads) {
  const CommandResult result = run_fluxjac(
      fmt::format("run --warmup 0 --reps 1 --threads 1 --mesh {} --variant reference", quoted(small_mesh())));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  expect_all(result.output, {"CPU reference: 1 thread ", "PASS"});
}

// ---- variants this machine cannot run --------------------------------------------------------------------------

TEST(CliUsage, VariantNotBuiltIsRefusedBeforeAnyWorkInRunAndBench) {
  if (built_with_cuda()) GTEST_SKIP() << "this fluxjac was built with CUDA: every variant is available";
  const TempDir folder;
  const std::string csv = folder.file("runs.csv");
  for (const char* variants : {"reference,dn_10", "dn_10"})
    for (const char* command : {"run", "bench"}) {
      const CommandResult result = run_fluxjac(fmt::format("{} --warmup 0 --reps 1 --mesh {} --variant {} --csv {}",
                                                           command, quoted(small_mesh()), variants, quoted(csv)));
      EXPECT_EQ(result.exit_code, 3) << command << " " << variants << "\n" << result.output;
      EXPECT_EQ(
          result.output.rfind("fluxjac: error: variant 'dn_10' needs CUDA, but this fluxjac was built without it", 0),
          0u)
          << "work before the refusal:\n"
          << result.output;
      expect_no_output(folder, "runs.csv");
    }
}

// ---- a sweep that runs no case fails, in run and bench alike ----------------------------------------------------

TEST(CliSweep, ASweepInWhichNoCaseRanFailsAndSaysWhyOnce) {
  // The reference has no compute-only mode: every case is skipped when it is set up.
  const std::string why = "variant 'reference' runs only in mode 'full'";
  for (const auto& [command, error] : std::vector<std::pair<std::string, std::string>>{
           {"bench", "fluxjac: error: no case ran: " + why},
           {"run", "fluxjac: error: " + small_mesh() + " reference compute-only could not run: " + why}}) {
    const CommandResult result = run_fluxjac(fmt::format(
        "{} -q --warmup 0 --reps 1 --mesh {} --variant reference --mode compute-only", command, quoted(small_mesh())));
    EXPECT_EQ(result.exit_code, 3) << command << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, "0 ran, 1 skipped, 0 failed")) << command << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, error)) << command << "\n" << result.output;
    EXPECT_EQ(count_of(result.output, "fluxjac: error:"), 1u) << command << "\n" << result.output;
  }
  // One case that runs is enough; the summary line says once why the others were skipped.
  const CommandResult some = run_fluxjac(fmt::format(
      "bench -q --warmup 0 --reps 1 --mesh {} --variant reference --mode full,compute-only", quoted(small_mesh())));
  EXPECT_EQ(some.exit_code, 0) << some.output;
  EXPECT_TRUE(
      contains(some.output, "2 cases: 1 ran, 1 skipped, 0 failed; validation: 1 passed, 0 failed; skipped: " + why))
      << some.output;
}

TEST(CliRun, AllInACpuOnlyBuildSaysItMeansTheReference) {
  if (built_with_cuda()) GTEST_SKIP() << "this fluxjac was built with CUDA";
  const CommandResult result = quick_run("--variant all");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  expect_all(result.output, {"fluxjac: note: 'all' means the variants this build can run: reference", "PASS"});
}

TEST(CliRun, WithoutAGpuAllSkipsTheGpuVariantsSayingWhyOnce) {
  if (!built_with_cuda()) GTEST_SKIP() << "needs a CUDA build (the CPU-only build has no GPU variants)";
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  const GpuUnavailable& no_gpu = gpu_unavailable();
  const TempDir folder;
  const std::string json = folder.file("all.json");
  const CommandResult all = quick_run("--variant all --json " + quoted(json));
  EXPECT_EQ(all.exit_code, 0) << all.output;
  expect_all(all.output, {"reference", "PASS", "skipped: " + no_gpu.brief, "; skipped: " + no_gpu.brief + "\n"});
  // The full reason once (a note), the brief one in each row.
  EXPECT_EQ(count_of(all.output, no_gpu.detail), 1u) << all.output;
  EXPECT_TRUE(contains(read_text(json), "\"status\": \"skipped\"")) << read_text(json);
  EXPECT_TRUE(contains(read_text(json), "\"reason\": \"" + no_gpu.brief + "\"")) << read_text(json);
}

TEST(CliRun, WithoutADriverTheReasonIsNoCudaDevice) {
  if (!built_with_cuda()) GTEST_SKIP() << "needs a CUDA build (the CPU-only build has no GPU variants)";
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  if (std::filesystem::exists("/proc/driver/nvidia/version"))
    GTEST_SKIP() << "an NVIDIA driver is installed: the reason may be the CUDA runtime's";
  // The CUDA runtime says "CUDA driver version is insufficient for CUDA runtime version" where there is no driver.
  EXPECT_EQ(gpu_unavailable().brief, "no CUDA device");
  EXPECT_EQ(gpu_unavailable().detail, "no CUDA device (no NVIDIA driver is installed)");
  EXPECT_FALSE(contains(quick_run("--variant all").output, "insufficient"));
}

TEST(CliSweep, OnlyGpuVariantsWithoutAGpuFailBeforeAnyWorkInRunAndBench) {
  if (!built_with_cuda()) GTEST_SKIP() << "needs a CUDA build (the CPU-only build has no GPU variants)";
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  const TempDir folder;
  const std::string csv = folder.file("runs.csv");
  const std::string why = "needs a GPU: " + gpu_unavailable().detail + "; select CPU variants";
  for (const auto& [command, error] : std::vector<std::pair<std::string, std::string>>{
           {"bench", "fluxjac: error: no case can run here: variant 'hd' " + why},
           {"run", "fluxjac: error: variant 'hd' " + why}}) {
    const CommandResult result = run_fluxjac(fmt::format("{} --warmup 0 --reps 1 --mesh {} --variant hd --csv {}",
                                                         command, quoted(small_mesh()), quoted(csv)));
    EXPECT_EQ(result.exit_code, 3) << command << "\n" << result.output;
    EXPECT_EQ(result.output.rfind(error, 0), 0u) << command << "\n" << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << command << "\n" << result.output;
    expect_no_output(folder, "runs.csv");
  }
  // A dry run lists the cases, each skipped with the brief reason.
  const CommandResult dry = run_fluxjac(fmt::format("bench --dry-run --mesh {} --variant hd", quoted(small_mesh())));
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_TRUE(contains(dry.output, "(skipped: " + gpu_unavailable().brief + ")")) << dry.output;
}

TEST(CliUsage, VariantNotBuiltSaysSoAndExitsThree) {
  if (built_with_cuda()) GTEST_SKIP() << "this fluxjac was built with CUDA: every variant is available";
  const CommandResult result = quick_run("--variant dn_10");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  expect_all(result.output, {"fluxjac: error:", "dn_10", "CUDA"});
}

}  // namespace
}  // namespace fluxjac
