// fluxjac tests — the fixture of the CLI tests of options that change what `run` writes: a small box and `run` on it.
// Only for tests labelled cli (tests/CMakeLists.txt): it runs the fluxjac executable.
#pragma once

#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "mesh/mesh_io.hpp"
#include "test_support.hpp"

namespace fluxjac::test {

/// \brief A small mixed box in random order (mixed:3) written to a temporary folder, and `run` on it: the fixture of
/// the CLI tests of options that change what `run` writes (the orientation, Aoff's precision).
class RunOnBox : public ::testing::Test {
 protected:
  void SetUp() override {
    const GeneratedMesh generated = generate_mesh("mixed", 3, "random");
    mesh_ = dir_.file("box.h5");
    write_edge_mesh(mesh_, generated.mesh, &generated.state);
  }
  /// `run` on the mesh with `options`, writing `output`; expects success and PASS.
  void run_to(const std::string& output, const std::string& options = "") const {
    const CommandResult result =
        run_fluxjac(fmt::format("run --mesh '{}' --threads 1 -q -o '{}' {}", mesh_, output, options));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;
  }
  /// `run` on the mesh with a config file holding `text` (and -o `output` when given).
  CommandResult run_with_config(const std::string& text, const std::string& output = "") const {
    const std::string config = dir_.file("run.toml");
    std::ofstream(config) << text;
    return run_fluxjac(fmt::format("run --config '{}' --mesh '{}' -q{}", config, mesh_,
                                   output.empty() ? std::string() : fmt::format(" -o '{}'", output)));
  }
  TempDir dir_;
  std::string mesh_;
};

}  // namespace fluxjac::test
