// fluxjac tests — shared helpers: the Fortran reference vectors, temporary folders, running the CLI.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cstring>

#include <gtest/gtest.h>

#include "ad/dual.hpp"
#include "mesh/generator.hpp"
#include "physics/roe_flux.hpp"
#include "reference/reference.hpp"
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

/// \brief Flux and both Jacobian blocks per unit area from Dual<10> (the reference's multivariate dual):
/// jacobian[m][k] = dF_m/dUL_k for k < 5, dF_m/dUR_(k-5) otherwise.
inline void dual10_jacobian(const double left[5], const double right[5], const FaceNormal& n, double flux[5],
                            double jacobian[5][10]) {
  Dual<10> left_dual[5], right_dual[5], flux_dual[5];
  for (int k = 0; k < 5; ++k) {
    left_dual[k] = Dual<10>(left[k]);
    right_dual[k] = Dual<10>(right[k]);
    left_dual[k].d[k] = 1.0;
    right_dual[k].d[5 + k] = 1.0;
  }
  roe_flux_conservative(left_dual, right_dual, n, flux_dual);
  for (int m = 0; m < 5; ++m) {
    flux[m] = flux_dual[m].v;
    for (int k = 0; k < 10; ++k) jacobian[m][k] = flux_dual[m].d[k];
  }
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

/// \brief Generates a box mesh (as generate_mesh) and assembles the reference.
inline AssembledMesh assemble_generated(const std::string& kind, int n, const std::string& order = "natural") {
  AssembledMesh result{generate_mesh(kind, n, order), {}, {}};
  result.pattern = JacobianPattern::build(result.generated.mesh);
  assemble_reference(result.generated.mesh, result.generated.state, result.pattern, result.reference);
  return result;
}

/// Same bytes (so NaNs and signed zeros count too).
template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
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

/// \brief Runs `fluxjac ARGS` (arguments already shell-quoted where needed).
inline CommandResult run_fluxjac(const std::string& args) {
  const std::string command = std::string("'") + FLUXJAC_EXECUTABLE + "' " + args + " 2>&1";
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

}  // namespace fluxjac::test
