// CLI integration tests: run the real `fluxjac` executable on tiny meshes made by `fluxjac mesh gen` — help
// texts, the registry listing, mesh generation and `info`, reference runs with table/CSV/JSON output, stored
// references (exact and perturbed), TOML configs, and every invalid input of DESIGN.md 3.1 and usage error as
// the user sees it: exit code, one `fluxjac: error:` line naming file, dataset and index, no partial output.
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

#include "test_support.hpp"
#include "util/hdf5.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

using test::CommandResult;
using test::run_fluxjac;
using test::TempDir;

/// Every name the registry must show (DESIGN.md 2).
const std::vector<std::string> kVariantNames = {"reference", "dn_10", "dn_5", "dn_2", "dn5_2", "edn_5", "edn5_2", "hd"};

/// Repetitions kept to one: these tests check behaviour, not timings.
constexpr const char* kQuickRun = "run -q --warmup 0 --reps 1";

/// \brief A path quoted for the shell that run_fluxjac goes through.
std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

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
      {"mesh", "mesh", {"gen"}},
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

// ---- TOML configs -----------------------------------------------------------------------------------------------

TEST(CliConfig, FileSetsOptionsAndTheCommandLineOverridesThem) {
  const TempDir folder;
  const std::string config = folder.file("run.toml"), csv = folder.file("runs.csv");
  std::ofstream(config) << fmt::format("mesh = \"{}\"\nvariant = \"reference\"\nreps = 3\nwarmup = 0\n", small_mesh());
  auto reps_column = [&](const std::string& extra) -> std::string {
    const CommandResult result =
        run_fluxjac(fmt::format("run -q --config {} --csv {} {}", quoted(config), quoted(csv), extra));
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return column(first_csv_row(csv), "reps");
  };
  EXPECT_EQ(reps_column(""), "3") << "reps from the config file";
  EXPECT_EQ(reps_column("--reps 2"), "2") << "--reps on the command line overrides the config file";
}

// ---- invalid input (DESIGN.md 3.1): exit 2, one line naming file, dataset and index, no output file -----------

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
      {"output_with_two_variants", "--variant reference,hd", {"fluxjac: error:", "--output"}},
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

TEST(CliUsage, VariantNotBuiltSaysSoAndExitsThree) {
  if (built_with_cuda()) GTEST_SKIP() << "this fluxjac was built with CUDA: every variant is available";
  const CommandResult result = quick_run("--variant dn_10");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  expect_all(result.output, {"fluxjac: error:", "dn_10", "CUDA"});
}

}  // namespace
}  // namespace fluxjac
