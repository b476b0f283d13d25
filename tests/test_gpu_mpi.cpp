// ctest-label: gpu
// Many ranks on the GPU (docs/design.md, "Many GPUs"): for every GPU variant and strategy, `mpirun -np 2 fluxjac run`
// validates against the distributed CPU reference and writes the Jacobian file of one process: Aoff equal, and Adiag
// bit for bit with node assembly (each row summed in the same order on any number of ranks). On a machine with one GPU
// the two ranks share it and the ghost states travel through host memory (NCCL needs a GPU per rank); on more GPUs,
// through NCCL. The solve on two ranks takes one GPU's iterations. Skipped, with the reason, without a GPU, CUDA or
// MPI.
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "bench/device_probe.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/mesh_io.hpp"
#include "partition/partition.hpp"
#include "solve_file.hpp"
#include "test_support.hpp"

namespace fluxjac {
namespace {

/// Why the many-rank GPU tests of `variant` cannot run here: no CUDA variants in this build, no device, no MPI, no
/// METIS; "" when they can.
std::string many_rank_gpu_unavailable(const std::string& variant) {
  if (!test::variant_info(variant).available)
    return "GPU test skipped: this build has no CUDA variants (FLUXJAC_CUDA=OFF or no nvcc)";
  if (!gpu_available()) return "GPU test skipped: no CUDA device";
  if (const std::string no_mpi = test::mpi_unavailable_reason(); !no_mpi.empty()) return "GPU test " + no_mpi;
  if (!metis_available()) return "GPU test skipped: this build has no METIS to partition the mesh";
  return {};
}

/// A generated mesh with its state, written as dir/mesh.h5; its path.
std::string write_mesh(const test::TempDir& dir, const std::string& kind, int n, const std::string& order) {
  const GeneratedMesh generated = test::generate_mesh(kind, n, order);
  const std::string mesh = dir.file("mesh.h5");
  write_edge_mesh(mesh, generated.mesh, &generated.state);
  return mesh;
}

class GpuManyRanks : public ::testing::TestWithParam<test::VariantStrategy> {
 protected:
  void SetUp() override {
    if (const std::string why = many_rank_gpu_unavailable(GetParam().variant); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(GpuManyRanks, TwoRanksWriteTheJacobianOfOneProcess) {
  const test::TempDir dir;
  const std::string mesh = write_mesh(dir, "mixed", 6, "random"), one = dir.file("one.h5"), two = dir.file("two.h5");
  const std::string args = fmt::format("run --mesh '{}' --variant {} --assembly {} --reps 2 --threads 1 -q", mesh,
                                       GetParam().variant, to_string(GetParam().strategy));
  const test::CommandResult serial = test::run_fluxjac(args + fmt::format(" -o '{}'", one));
  ASSERT_EQ(serial.exit_code, 0) << serial.output;
  const test::CommandResult many = test::run_fluxjac_mpi(2, args + fmt::format(" -o '{}'", two));
  ASSERT_EQ(many.exit_code, 0) << many.output;
  EXPECT_NE(many.output.find("PASS"), std::string::npos) << many.output;

  const StoredJacobian a = read_jacobian(one), b = read_jacobian(two);
  EXPECT_EQ(a.pattern.col_idx, b.pattern.col_idx);
  if (GetParam().strategy == AssemblyStrategy::kNode) {
    EXPECT_TRUE(test::bitwise_equal(a.jacobian.adiag, b.jacobian.adiag)) << "node assembly: Adiag bit for bit";
    EXPECT_TRUE(test::bitwise_equal(a.jacobian.aoff, b.jacobian.aoff));
  } else {
    // Edge assembly adds into Adiag with atomics, in no fixed order: equal to the last bits only.
    const Comparison comparison = compare_jacobians(a.pattern, b.jacobian, a.pattern, a.jacobian);
    EXPECT_TRUE(comparison.passed) << comparison.adiag_error << " " << comparison.aoff_error;
  }
}

TEST(GpuManyRanksOutput, SeveralVariantsWriteOneFileEachUnderTheirNames) {
  if (const std::string why = many_rank_gpu_unavailable("hd"); !why.empty()) GTEST_SKIP() << why;
  const test::TempDir dir;
  const std::string mesh = write_mesh(dir, "tet", 4, "rcm");
  const test::CommandResult result = test::run_fluxjac_mpi(
      2, fmt::format("run --mesh '{}' --variant hd,dn_2 --assembly node --reps 1 -q -o '{}'", mesh, dir.file("J.h5")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("J-hd.h5")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("J-dn_2.h5")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("J.h5")));
}

/// `mpirun -np 2 fluxjac solve` with hd (docs/design.md, "The solve", "Many ranks"): each GPU solves for its owned
/// rows; block Jacobi takes one GPU's iterations and gives its dQ to 1e-10, in one file whose Jacobian is one GPU's.
TEST(GpuManyRanksSolve, TwoRanksTakeOneGpusIterationsAndGiveItsStep) {
  if (const std::string why = many_rank_gpu_unavailable("hd"); !why.empty()) GTEST_SKIP() << why;
  const test::TempDir dir;
  const std::string mesh = write_mesh(dir, "mixed", 10, "random");
  for (const char* preconditioner : {"pbjacobi", "mcgs"}) {
    SCOPED_TRACE(preconditioner);
    const std::string args = fmt::format(
        "solve --mesh '{}' --variant hd --cfl 50 --preconditioner {} --tolerance 1e-10 --warmup 0 --reps 1 -q", mesh,
        preconditioner);
    const std::string one = dir.file(fmt::format("one-{}.h5", preconditioner));
    const std::string two = dir.file(fmt::format("two-{}.h5", preconditioner));
    const test::CommandResult serial = test::run_fluxjac(args + fmt::format(" -o '{}'", one));
    ASSERT_EQ(serial.exit_code, 0) << serial.output;
    const test::CommandResult many = test::run_fluxjac_mpi(2, args + fmt::format(" -o '{}'", two));
    ASSERT_EQ(many.exit_code, 0) << many.output;
    const test::SolveFile a = test::read_solve_file(one), b = test::read_solve_file(two);
    EXPECT_TRUE(test::bitwise_equal(a.adiag, b.adiag)) << "node assembly: Adiag bit for bit";
    EXPECT_TRUE(test::bitwise_equal(a.aoff, b.aoff));
    EXPECT_LE(b.relative_residual, 1e-10);
    if (std::string(preconditioner) == "pbjacobi") {
      EXPECT_EQ(a.iterations, b.iterations);
      EXPECT_LE(test::relative_difference(b.delta, a.delta), 1e-10);
    } else {  // each rank sweeps its own nodes: another preconditioner, the same system solved to 1e-10
      EXPECT_LE(test::relative_difference(b.delta, a.delta), 1e-6);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuVariants, GpuManyRanks, ::testing::ValuesIn(test::gpu_variant_strategies()),
                         test::variant_strategy_name);

}  // namespace
}  // namespace fluxjac
