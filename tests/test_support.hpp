// fluxjac tests — shared helpers: the Fortran reference vectors, the registry's GPU variants as test
// parameters, temporary folders, running the CLI.
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cstring>

#include <gtest/gtest.h>

#include "jacobian/jacobian_io.hpp"
#include "mesh/generator.hpp"
#include "physics/roe_flux.hpp"
#include "reference/reference.hpp"
#include "registry/registry.hpp"
#include "util/error.hpp"

namespace fluxjac::test {

/// One line of tests/data/roe_flux_vectors.txt: UL[5] UR[5] n[3] F[5] J[5][10] (per unit area).
struct FluxCase {
  std::array<double, 5> left, right;
  std::array<double, 3> normal;
  std::array<double, 5> flux;
  double jacobian[5][10];  ///< row m: dF_m/dUL (cols 0-4), dF_m/dUR (cols 5-9)
};

inline std::vector<FluxCase> load_flux_cases() {
  std::ifstream in(std::string(FLUXJAC_TEST_DATA_DIR) + "/roe_flux_vectors.txt");
  std::vector<FluxCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<double> v;
    double x;
    while (fields >> x) v.push_back(x);
    if (v.empty()) continue;
    if (v.size() != 68) ADD_FAILURE() << "reference line with " << v.size() << " numbers";
    FluxCase c{};
    for (int i = 0; i < 5; ++i) c.left[i] = v[i], c.right[i] = v[5 + i], c.flux[i] = v[13 + i];
    for (int i = 0; i < 3; ++i) c.normal[i] = v[10 + i];
    for (int m = 0; m < 5; ++m)
      for (int k = 0; k < 10; ++k) c.jacobian[m][k] = v[18 + 10 * m + k];
    cases.push_back(c);
  }
  return cases;
}

/// \brief Both Jacobian blocks of one face per unit area, from the frozen reference (reference_local_jacobian, its
/// Dual<10> seeded on both states): jacobian[m][k] = dF_m/dUL_k for k < 5, dF_m/dUR_(k-5) otherwise.
inline void reference_face_jacobian(const double left[5], const double right[5], const FaceNormal& n,
                                    double jacobian[5][10]) {
  EdgeInput edge{};
  for (int k = 0; k < kBlock; ++k) edge.left[k] = left[k], edge.right[k] = right[k];
  edge.normal = n;
  edge.area = 1.0;  // exact: the entries are the per-unit-area derivatives
  double local[kLocalJacobianEntries], flux[kBlock];
  reference_local_jacobian(edge, local, flux);
  for (int side = 0; side < 2; ++side)
    for (int m = 0; m < kBlock; ++m)
      for (int k = 0; k < kBlock; ++k) jacobian[m][side * kBlock + k] = local[local_entry(side, m, k)];
}

/// \brief One GPU variant of the registry with one assembly strategy: the parameter of the per-variant tests,
/// named "<variant>_<strategy>" (hd_node), so that `ctest -R hd_node` runs one.
struct VariantStrategy {
  std::string variant;
  AssemblyStrategy strategy;
};

/// \brief Every registered GPU variant, with the edge and the node strategy. CUDA variants are registered in
/// CPU-only builds too (unavailable), so the test names are the same in every build.
inline std::vector<VariantStrategy> gpu_variant_strategies() {
  std::vector<VariantStrategy> cases;
  for (const VariantInfo& info : Registry::instance().list())
    if (info.backend == Backend::kCuda)
      for (AssemblyStrategy strategy : {AssemblyStrategy::kEdge, AssemblyStrategy::kNode})
        cases.push_back({info.name, strategy});
  return cases;
}

inline std::string name_of(const VariantStrategy& c) { return c.variant + "_" + to_string(c.strategy); }
inline void PrintTo(const VariantStrategy& c, std::ostream* out) { *out << name_of(c); }
/// The test-name suffix for INSTANTIATE_TEST_SUITE_P.
inline std::string variant_strategy_name(const ::testing::TestParamInfo<VariantStrategy>& info) {
  return name_of(info.param);
}

/// \brief The registry's description of a variant (fails the test if there is none).
inline VariantInfo variant_info(const std::string& name) {
  for (const VariantInfo& info : Registry::instance().list())
    if (info.name == name) return info;
  ADD_FAILURE() << "no registered variant '" << name << "'";
  return {};
}

/// A generated box mesh with its pattern and CPU reference Jacobian.
struct AssembledMesh {
  GeneratedMesh generated;
  JacobianPattern pattern;
  Jacobian reference;
};

/// \brief Generates a box mesh: kind tet|prism|mixed, n cells per direction, node order natural|random|rcm.
inline GeneratedMesh generate_mesh(const std::string& kind, int n, const std::string& order = "natural") {
  BoxMeshSpec spec;
  spec.kind = parse_mesh_kind(kind);
  spec.n = n;
  spec.order = parse_node_ordering(order);
  return generate_box_mesh(spec);
}

/// \brief Appends `second` to `first` as a piece no edge joins to it: its nodes numbered after first's, its edges,
/// metrics and states with them (a mesh of disconnected pieces).
inline void append_piece(GeneratedMesh& first, const GeneratedMesh& second) {
  const auto offset = static_cast<node_index>(first.mesh.n_nodes);
  for (const node_index node : second.mesh.edges) first.mesh.edges.push_back(node + offset);
  first.mesh.normals.insert(first.mesh.normals.end(), second.mesh.normals.begin(), second.mesh.normals.end());
  first.mesh.areas.insert(first.mesh.areas.end(), second.mesh.areas.begin(), second.mesh.areas.end());
  first.mesh.coords.insert(first.mesh.coords.end(), second.mesh.coords.begin(), second.mesh.coords.end());
  first.mesh.volumes.insert(first.mesh.volumes.end(), second.mesh.volumes.begin(), second.mesh.volumes.end());
  first.state.Q.insert(first.state.Q.end(), second.state.Q.begin(), second.state.Q.end());
  first.mesh.n_nodes += second.mesh.n_nodes;
}

/// \brief Generates a box mesh (as generate_mesh) and assembles the reference.
inline AssembledMesh assemble_generated(const std::string& kind, int n, const std::string& order = "natural") {
  AssembledMesh result{generate_mesh(kind, n, order), {}, {}};
  result.pattern = JacobianPattern::build(result.generated.mesh);
  assemble_reference(result.generated.mesh, result.generated.state, result.pattern, result.reference);
  return result;
}

/// \brief The transpose of a Jacobian on a structurally symmetric pattern, written out here independently of the
/// assembly rules: block (i, j) of the result is block (j, i) of `a` with its rows and columns swapped.
inline Jacobian transposed(const JacobianPattern& pattern, const Jacobian& a) {
  Jacobian t;
  t.resize(pattern, !a.residual.empty());
  t.residual = a.residual;  // R does not depend on the orientation
  const auto swap_block = [](const auto* from, auto* to) {
    for (int m = 0; m < kBlock; ++m)
      for (int k = 0; k < kBlock; ++k) to[m * kBlock + k] = from[k * kBlock + m];
  };
  for (std::int64_t i = 0; i < pattern.n_nodes; ++i) {
    swap_block(&a.adiag[i * kBlockEntries], &t.adiag[i * kBlockEntries]);
    for (block_offset p = pattern.row_ptr[i]; p < pattern.row_ptr[i + 1]; ++p) {
      const node_index j = pattern.col_idx[p];
      const auto first = pattern.col_idx.begin() + pattern.row_ptr[j],
                 last = pattern.col_idx.begin() + pattern.row_ptr[j + 1];
      const auto at = std::lower_bound(first, last, static_cast<node_index>(i));
      if (at == last || *at != i) {
        ADD_FAILURE() << "the pattern has (" << i << ", " << j << ") but not (" << j << ", " << i << ")";
        return t;
      }
      swap_block(&a.aoff[(at - pattern.col_idx.begin()) * kBlockEntries], &t.aoff[p * kBlockEntries]);
    }
  }
  return t;
}

/// Same bytes (so NaNs and signed zeros count too).
template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Lines of output that contain fragment.
inline std::size_t count_lines(const std::string& output, const std::string& fragment) {
  std::size_t count = 0;
  for (std::size_t at = output.find(fragment); at != std::string::npos; at = output.find(fragment, at + 1)) ++count;
  return count;
}

/// Expects two Jacobian files to hold the same pattern and the same Adiag and Aoff bytes.
inline void expect_same_file(const std::string& serial_path, const std::string& many_path) {
  const StoredJacobian serial = read_jacobian(serial_path);
  const StoredJacobian many = read_jacobian(many_path);
  EXPECT_EQ(serial.pattern.row_ptr, many.pattern.row_ptr);
  EXPECT_EQ(serial.pattern.col_idx, many.pattern.col_idx);
  EXPECT_TRUE(bitwise_equal(serial.jacobian.adiag, many.jacobian.adiag)) << many_path << ": Adiag differs";
  EXPECT_TRUE(bitwise_equal(serial.jacobian.aoff, many.jacobian.aoff)) << many_path << ": Aoff differs";
}

/// \brief Expects read() to throw Error(kInvalidInput) with a one-line message containing every fragment.
template <class Read>
void expect_invalid(Read&& read, const std::vector<std::string>& fragments) {
  try {
    read();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.code(), ExitCode::kInvalidInput) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << fragment << "\" missing in: " << message;
    return;
  }
  ADD_FAILURE() << "no Error thrown; expected one mentioning " << fragments.front();
}

/// A fresh folder under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() / ("fluxjac-test-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Result of running the fluxjac executable.
struct CommandResult {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr together
};

#ifdef FLUXJAC_EXECUTABLE
/// \brief Runs a shell command line, collecting stdout and stderr.
inline CommandResult run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// \brief Runs `fluxjac ARGS` (arguments already shell-quoted where needed).
inline CommandResult run_fluxjac(const std::string& args) {
  return run_command(std::string("'") + FLUXJAC_EXECUTABLE + "' " + args);
}

/// \brief Why `mpirun fluxjac` cannot be tested here (a build without MPI); empty when it can.
inline std::string mpi_unavailable_reason() {
#ifdef FLUXJAC_MPIEXEC
  return {};
#else
  return "this build has no MPI (install libopenmpi-dev and openmpi-bin, and rebuild): skipped";
#endif
}

/// Skips the test, saying why, where mpirun cannot run it (mpi_unavailable_reason).
#define SKIP_WITHOUT_MPI()                                     \
  do {                                                         \
    const std::string reason = test::mpi_unavailable_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;               \
  } while (0)

/// \brief The mpirun of this build's MPI; empty without MPI.
inline std::string mpiexec_path() {
#ifdef FLUXJAC_MPIEXEC
  return FLUXJAC_MPIEXEC;
#else
  return {};
#endif
}

/// \brief The environment of every mpirun a test starts, as `NAME=VALUE` words: oversubscribed (more ranks than cores
/// is fine for tests), as root too, with Open MPI's single-copy shared memory off (containers often forbid the ptrace
/// it needs), and ranks that yield their core while they wait instead of polling (ctest runs many jobs at once).
inline const std::vector<std::string>& mpirun_environment() {
  static const std::vector<std::string> words{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                              "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                                              "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_mpi_yield_when_idle=1"};
  return words;
}

/// \brief mpirun_environment() as a shell prefix, ending in a space.
inline std::string mpirun_environment_prefix() {
  std::string prefix;
  for (const std::string& word : mpirun_environment()) prefix += word + " ";
  return prefix;
}

/// \brief Runs `mpirun -np RANKS fluxjac ARGS` in mpirun_environment().
inline CommandResult run_fluxjac_mpi(int ranks, const std::string& args) {
#ifdef FLUXJAC_MPIEXEC
  const std::string launcher = mpirun_environment_prefix() + "'" FLUXJAC_MPIEXEC "' -np " + std::to_string(ranks) +
                               " '" + FLUXJAC_EXECUTABLE + "' ";
  return run_command(launcher + args);
#else
  (void)ranks;
  (void)args;
  return {};
#endif
}
#else
// Only the cli and gpu test binaries know the executable (tests/CMakeLists.txt): a file that declares itself unit
// and runs it does not compile.
template <class Args>
CommandResult run_fluxjac(const Args&) {
  static_assert(sizeof(Args) == 0,
                "this file runs the fluxjac executable: make its first line `// ctest-label: cli` "
                "(tests/CMakeLists.txt)");
  return {};
}
#endif

/// The whole of a text file (empty when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace fluxjac::test
