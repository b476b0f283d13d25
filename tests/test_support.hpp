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

#include <gtest/gtest.h>

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
