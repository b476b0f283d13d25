#include "solve/device_solve.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_check.hpp"
#include "gpu/device_array.hpp"
#include "gpu/event_timer.hpp"
#include "part/ghost_exchange.hpp"
#include "solve/block_inverse.hpp"
#include "solve/block_system.hpp"
#include "solve/cusparse_product.hpp"
#include "solve/multicolor_gs.hpp"
#include "solve/toolkit_library.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(ExitCode::kRuntime, "{}: cuBLAS status {}", call, static_cast<int>(status));
}

/// \brief The cuBLAS calls of the solve, from the toolkit's library opened on first use rather than linked
/// (toolkit_library.hpp; cuBLAS also loads cuBLASLt).
struct Cublas {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasDscal_v2) scal;
  decltype(&cublasDnrm2_v2) nrm2;
  decltype(&cublasDgemv_v2) gemv;
  decltype(&cublasDaxpy_v2) axpy;

  static const Cublas& get() {
    static const Cublas loaded = load();
    return loaded;
  }

 private:
  static Cublas load() {
    const ToolkitLibrary library("libcublas.so." FLUXJAC_STRINGIFY(CUBLAS_VER_MAJOR), "cuBLAS", "the GPU solve");
    Cublas calls{};
    library.bind(calls.create, "cublasCreate_v2");
    library.bind(calls.destroy, "cublasDestroy_v2");
    library.bind(calls.scal, "cublasDscal_v2");
    library.bind(calls.nrm2, "cublasDnrm2_v2");
    library.bind(calls.gemv, "cublasDgemv_v2");
    library.bind(calls.axpy, "cublasDaxpy_v2");
    return calls;
  }
};

/// Warps per thread block of the product and the Gauss-Seidel kernel.
constexpr int kWarpsPerBlock = 8;
/// \brief A block row of M is a segment of kSegmentLanes lanes, kRowsPerWarp rows per warp (lanes 30 and 31 idle):
/// a warp keeps three rows' loads in flight. A warp per row (600 bytes of Aoff per step) took 0.49 ms on the
/// paper-size mesh, two rows of 15 lanes 0.41 ms, three of 10 lanes 0.40 ms, six of 5 lanes 0.44 ms (docs/tuning.md,
/// "The solve's block product").
constexpr int kSlots = 2, kSegmentLanes = kBlock * kSlots, kRowsPerWarp = 32 / kSegmentLanes;
constexpr int kRowsPerBlock = kWarpsPerBlock * kRowsPerWarp;

/// Aoff's values as the product reads them: float32 as assembled, or bfloat16 (`--aoff-precision bf16`), widened.
__device__ __forceinline__ double widen(float value) { return value; }
__device__ __forceinline__ double widen(__nv_bfloat16 value) { return __bfloat162float(value); }

/// \brief Where a lane works: row t (-1 for none) of the `count` rows of a launch (t = at, or listed[at] with a list),
/// and its lane m of the row's segment.
struct SegmentLane {
  std::int64_t t = -1;
  int m = 0;
  int segment = 0;  ///< the segment's place in the warp
};
__device__ __forceinline__ SegmentLane segment_lane(std::int64_t count, const std::int64_t* __restrict__ listed) {
  const int lane = threadIdx.x % 32;
  SegmentLane at;
  at.segment = lane / kSegmentLanes;
  at.m = lane % kSegmentLanes;
  const std::int64_t row =
      (static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32) * kRowsPerWarp + at.segment;
  if (at.segment < kRowsPerWarp && row < count) at.t = listed ? __ldg(&listed[row]) : row;
  return at;
}

/// The local node of row t: row_nodes[t] on many ranks, t where every node is a row (row_nodes null); -1 for none.
__device__ __forceinline__ std::int64_t row_node(const node_index* __restrict__ row_nodes, std::int64_t t) {
  if (t < 0) return -1;
  return row_nodes ? static_cast<std::int64_t>(__ldg(&row_nodes[t])) : t;
}

/// \brief Row i of Aoff times v (i < 0: none) by its segment, lane m: lane m takes row m % 5 of every kSlots-th block
/// of the row and starts from `own`, its own part of the sum (0, or D's row for lanes 0-4 of the product). The
/// segment's lanes r, r + 5, ... are summed in a fixed order, so results are bitwise reproducible; lanes 0-4 return
/// component m of the row. Every lane of the warp calls it (shuffles).
template <class T>
__device__ __forceinline__ double segment_row_sum(std::int64_t i, int m, const block_offset* __restrict__ row_ptr,
                                                  const node_index* __restrict__ col_idx, const T* __restrict__ aoff,
                                                  const double* v, double own) {
  const int slot = m / kBlock, row = m % kBlock;
  double sum = own;
  if (i >= 0) {
    const block_offset end = __ldg(&row_ptr[i + 1]);
    for (block_offset k = __ldg(&row_ptr[i]) + slot; k < end; k += kSlots) {
      const double* vj = v + kBlock * static_cast<std::int64_t>(__ldg(&col_idx[k]));
      const T* block_row = aoff + k * kBlockEntries + kBlock * row;
      for (int c = 0; c < kBlock; ++c) sum += widen(__ldg(&block_row[c])) * vj[c];
    }
  }
  double total = sum;
#pragma unroll
  for (int s = 1; s < kSlots; ++s) total += __shfl_down_sync(0xffffffffu, sum, kBlock * s);
  return total;
}

/// \brief y = M x, a segment per block row t of node i (segment_row_sum): D_t x_i (D = Adiag + s I, float64, by row)
/// plus the row's Aoff blocks (float32 or bfloat16, widened) times x_j; x over every local node, y over the rows.
/// Every row t < n, or with a list the n rows of `listed` (the rows without a ghost column, or those with one).
template <class T>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    block_product_kernel(std::int64_t n, const std::int64_t* __restrict__ listed,
                         const node_index* __restrict__ row_nodes, const block_offset* __restrict__ row_ptr,
                         const node_index* __restrict__ col_idx, const double* __restrict__ diagonal,
                         const T* __restrict__ aoff, const double* __restrict__ x, double* __restrict__ y) {
  const SegmentLane at = segment_lane(n, listed);
  if (__all_sync(0xffffffffu, at.t < 0)) return;
  const std::int64_t i = row_node(row_nodes, at.t);
  double own = 0.0;
  if (at.t >= 0 && at.m < kBlock) {
    const double* row = diagonal + at.t * kBlockEntries + kBlock * at.m;
    for (int c = 0; c < kBlock; ++c) own += __ldg(&row[c]) * __ldg(&x[kBlock * i + c]);
  }
  const double sum = segment_row_sum(i, at.m, row_ptr, col_idx, aoff, x, own);
  if (at.t >= 0 && at.m < kBlock) y[kBlock * at.t + at.m] = sum;
}

/// to[row_nodes[t]] = from[t] (spread: rows to local nodes), or from[row_nodes[t]] into to[t] (gather), a thread per
/// value.
__global__ void move_rows_kernel(std::int64_t n, const node_index* __restrict__ row_nodes, bool spread,
                                 const double* __restrict__ from, double* __restrict__ to) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= n * kBlock) return;
  const std::int64_t t = item / kBlock, node = kBlock * static_cast<std::int64_t>(row_nodes[t]) + item % kBlock;
  if (spread)
    to[node] = from[item];
  else
    to[item] = from[node];
}

/// \brief One color of a Gauss-Seidel sweep: for each row t of the color's list (node i), its segment forms
/// r_t - sum_j Aoff_ij z_j (segment_row_sum) and lanes 0-4 write z_i = D_t^-1 of it; z over every local node. Nodes
/// of one color share no edge, so each reads only z of other colors.
template <class T>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gauss_seidel_color_kernel(std::int64_t count, const std::int64_t* __restrict__ rows,
                              const node_index* __restrict__ row_nodes, const block_offset* __restrict__ row_ptr,
                              const node_index* __restrict__ col_idx, const T* __restrict__ aoff,
                              const double* __restrict__ inverse, const double* __restrict__ r, double* z) {
  const SegmentLane at = segment_lane(count, rows);
  if (__all_sync(0xffffffffu, at.t < 0)) return;
  const std::int64_t i = row_node(row_nodes, at.t);
  const double sum = segment_row_sum(i, at.m, row_ptr, col_idx, aoff, z, 0.0);
  const bool own = at.t >= 0 && at.m < kBlock;
  const double rest = own ? __ldg(&r[kBlock * at.t + at.m]) - sum : 0.0;
  const int first = at.segment * kSegmentLanes;  // the segment's lane 0
  double value = 0.0;
  for (int c = 0; c < kBlock; ++c)
    value += (own ? __ldg(&inverse[at.t * kBlockEntries + kBlock * at.m + c]) : 0.0) *
             __shfl_sync(0xffffffffu, rest, first + c);
  if (own) z[kBlock * i + at.m] = value;
}

/// z_i = D_i^-1 r_i, a thread per (node, row).
__global__ void block_jacobi_kernel(std::int64_t n, const double* __restrict__ inverse, const double* __restrict__ r,
                                    double* __restrict__ z) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= n * kBlock) return;
  const std::int64_t i = item / kBlock;
  const double* row = inverse + i * kBlockEntries + kBlock * (item - i * kBlock);
  double sum = 0.0;
  for (int c = 0; c < kBlock; ++c) sum += row[c] * r[kBlock * i + c];
  z[item] = sum;
}

/// D_t = Adiag_i + s_i I for row t (node i), and its inverse (a thread per row); singular[0] = the first row whose
/// D is singular + 1.
__global__ void diagonal_kernel(std::int64_t n, const node_index* __restrict__ row_nodes,
                                const double* __restrict__ adiag, const double* __restrict__ shift,
                                double* __restrict__ diagonal, double* __restrict__ inverse,
                                unsigned long long* singular) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const std::int64_t i = row_node(row_nodes, t);
  double block[kBlockEntries];
  for (int k = 0; k < kBlockEntries; ++k) block[k] = adiag[i * kBlockEntries + k];
  for (int r = 0; r < kBlock; ++r) block[kBlock * r + r] += shift[i];
  for (int k = 0; k < kBlockEntries; ++k) diagonal[t * kBlockEntries + k] = block[k];
  double inverted[kBlockEntries];
  if (!invert_block(block, inverted)) atomicMin(singular, static_cast<unsigned long long>(t) + 1);
  for (int k = 0; k < kBlockEntries; ++k) inverse[t * kBlockEntries + k] = inverted[k];
}

unsigned grid(std::int64_t items, int per_block) { return static_cast<unsigned>((items + per_block - 1) / per_block); }

/// \brief Vectors of n doubles in device memory, cuBLAS for the basis work (fgmres.hpp's HostSpace says what a space
/// provides); scalars come back to the host, where on many ranks they are summed over the ranks (comm).
class DeviceSpace {
 public:
  /// `columns` device vectors, column-major (shared: the arrays themselves do not move).
  struct Basis {
    std::shared_ptr<DeviceArray<double>> array;
    double* data() const { return array->data(); }
  };
  DeviceSpace(std::size_t n, const Communicator* comm) : n_(n), sums_(comm) {
    check_cublas(Cublas::get().create(&handle_), "cublasCreate");
    coefficients_.allocate(1024);
    FLUXJAC_CUDA_CHECK(cudaMallocHost(&staged_, 1024 * sizeof(double)));
    FLUXJAC_CUDA_CHECK(cudaEventCreateWithFlags(&staged_sent_, cudaEventDisableTiming));
  }
  ~DeviceSpace() {
    cudaEventDestroy(staged_sent_);
    cudaFreeHost(staged_);
    Cublas::get().destroy(handle_);
  }
  DeviceSpace(const DeviceSpace&) = delete;
  DeviceSpace& operator=(const DeviceSpace&) = delete;

  Basis basis(std::size_t columns) const { return Basis{std::make_shared<DeviceArray<double>>(n_ * columns)}; }
  double* column(Basis& basis, std::size_t j) const { return basis.data() + n_ * j; }
  void fill(double* x, double value) const {
    if (value != 0.0) fail(ExitCode::kRuntime, "DeviceSpace::fill: only zeros");
    FLUXJAC_CUDA_CHECK(cudaMemsetAsync(x, 0, n_ * sizeof(double)));
  }
  void copy(const double* from, double* to) const {
    FLUXJAC_CUDA_CHECK(cudaMemcpyAsync(to, from, n_ * sizeof(double), cudaMemcpyDeviceToDevice));
  }
  void scale(double alpha, double* x) const {
    check_cublas(Cublas::get().scal(handle_, length(), &alpha, x, 1), "cublasDscal");
  }
  double norm(const double* x) const {
    double result = 0.0;
    check_cublas(Cublas::get().nrm2(handle_, length(), x, 1, &result), "cublasDnrm2");
    return sums_.distributed() ? std::sqrt(sums_.sum(result * result)) : result;
  }
  void project(const Basis& basis, std::size_t count, const double* w, double* h) const {
    const double one = 1.0, zero = 0.0;
    check_cublas(Cublas::get().gemv(handle_, CUBLAS_OP_T, length(), static_cast<int>(count), &one, basis.data(),
                                    length(), w, 1, &zero, coefficients_.data(), 1),
                 "cublasDgemv");
    FLUXJAC_CUDA_CHECK(cudaMemcpy(h, coefficients_.data(), count * sizeof(double), cudaMemcpyDeviceToHost));
    sums_.sum(h, count);
  }
  /// The host time of the sums over the ranks so far.
  double reduction_ms() const { return sums_.milliseconds(); }
  void subtract(const Basis& basis, std::size_t count, const double* h, double* w) const {
    combine(basis, count, h, w, -1.0);
  }
  void add(const Basis& basis, std::size_t count, const double* y, double* x) const {
    combine(basis, count, y, x, 1.0);
  }
  void difference(const double* b, const double* a, double* r) const {
    const double minus_one = -1.0;
    copy(b, r);
    check_cublas(Cublas::get().axpy(handle_, length(), &minus_one, a, 1, r, 1), "cublasDaxpy");
  }

 private:
  int length() const { return static_cast<int>(n_); }
  /// x += sign * sum_i c[i] V_i
  void combine(const Basis& basis, std::size_t count, const double* c, double* x, double sign) const {
    if (count == 0) return;
    // Through pinned memory, so that the host does not wait for the device here (the copy before has ended).
    FLUXJAC_CUDA_CHECK(cudaEventSynchronize(staged_sent_));
    std::memcpy(staged_, c, count * sizeof(double));
    FLUXJAC_CUDA_CHECK(
        cudaMemcpyAsync(coefficients_.data(), staged_, count * sizeof(double), cudaMemcpyHostToDevice, nullptr));
    FLUXJAC_CUDA_CHECK(cudaEventRecord(staged_sent_, nullptr));
    const double one = 1.0;
    check_cublas(Cublas::get().gemv(handle_, CUBLAS_OP_N, length(), static_cast<int>(count), &sign, basis.data(),
                                    length(), coefficients_.data(), 1, &one, x, 1),
                 "cublasDgemv");
  }
  std::size_t n_;
  RankSums sums_;
  cublasHandle_t handle_ = nullptr;
  DeviceArray<double> coefficients_;
  double* staged_ = nullptr;           ///< pinned host copy of the coefficients combine uploads
  cudaEvent_t staged_sent_ = nullptr;  ///< the end of its last upload
};

}  // namespace

SolveOutcome solve_step_on_device(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern,
                                  const Jacobian& jacobian, Orientation orientation, const SolveOptions& options,
                                  const SolveRanks& ranks) {
  const RankLayout* layout = ranks.distributed() ? ranks.layout : nullptr;
  check_solve_inputs(pattern, jacobian, orientation, options, layout);
  const std::int64_t local_nodes = pattern.n_nodes, n = layout ? layout->owned_count() : local_nodes;
  const auto values = static_cast<std::size_t>(n) * kBlock;
  if (values > static_cast<std::size_t>(INT32_MAX) / static_cast<std::size_t>(options.krylov.restart + 1))
    fail(ExitCode::kUsage, "{} unknowns times {} basis vectors exceed cuBLAS's 32-bit sizes: lower --restart", values,
         options.krylov.restart + 1);
  if (options.krylov.restart + 1 > 1024)
    fail(ExitCode::kUsage, "--restart {}: at most 1023 on the GPU", options.krylov.restart);

  SolveOutcome outcome;
  EventTimer setup;
  setup.start();
  const std::vector<double> shift_local = local_time_step_shift(mesh, state, options.cfl);
  // The rows: every node on one process; the owned nodes (local ids) on many ranks, whose x first spreads over the
  // local nodes and has its ghost rows refreshed by the halo exchange.
  DeviceArray<node_index> row_nodes;
  DeviceArray<block_offset> row_ptr;
  DeviceArray<node_index> col_idx;
  // Aoff as the solve holds it: float32, or bfloat16 (the values already rounded: apply_aoff_precision), whose bits
  // are a float32's high half.
  DeviceArray<float> aoff;
  DeviceArray<std::uint16_t> aoff_bf16;
  const bool bf16 = options.aoff_precision == AoffPrecision::kBf16;
  DeviceArray<double> adiag, shift, diagonal, inverse, rhs, delta, local;
  DeviceArray<unsigned long long> singular;
  if (layout) row_nodes.upload(layout->owned_nodes.data(), layout->owned_nodes.size());
  const node_index* const rows = layout ? row_nodes.data() : nullptr;
  row_ptr.upload(pattern.row_ptr.data(), pattern.row_ptr.size());
  col_idx.upload(pattern.col_idx.data(), pattern.col_idx.size());
  if (bf16) {
    std::vector<std::uint16_t> halves(jacobian.aoff.size());
    std::transform(jacobian.aoff.begin(), jacobian.aoff.end(), halves.begin(), bf16_bits);
    aoff_bf16.upload(halves.data(), halves.size());
  } else {
    aoff.upload(jacobian.aoff.data(), jacobian.aoff.size());
  }
  // Runs launch(Aoff on the device) with Aoff's element type.
  const auto with_aoff = [&](const auto& launch) {
    if (bf16)
      launch(reinterpret_cast<const __nv_bfloat16*>(aoff_bf16.data()));
    else
      launch(static_cast<const float*>(aoff.data()));
  };
  adiag.upload(jacobian.adiag.data(), jacobian.adiag.size());
  shift.upload(shift_local.data(), shift_local.size());
  diagonal.allocate(static_cast<std::size_t>(n) * kBlockEntries);
  inverse.allocate(static_cast<std::size_t>(n) * kBlockEntries);
  const unsigned long long none = ~0ull;
  singular.upload(&none, 1);
  diagonal_kernel<<<grid(n, 128), 128>>>(n, rows, adiag.data(), shift.data(), diagonal.data(), inverse.data(),
                                         singular.data());
  FLUXJAC_CUDA_CHECK_LAUNCH();
  unsigned long long first_singular = 0;
  singular.download(&first_singular);
  if (first_singular != none) {
    const auto t = static_cast<std::int64_t>(first_singular - 1);
    fail(ExitCode::kInvalidInput,
         "node {}: the diagonal block of M (Adiag + V/dt I) is singular: block Jacobi cannot invert it (a smaller "
         "--cfl adds more of the time term)",
         layout ? layout->global_id(layout->owned_node(t)) : t);
  }
  adiag.allocate(0);
  std::vector<double> minus_r(values);
  outcome.shift.resize(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int64_t i = layout ? layout->owned_node(t) : t;
    outcome.shift[t] = shift_local[i];
    for (int r = 0; r < kBlock; ++r) minus_r[kBlock * t + r] = -jacobian.residual[kBlock * i + r];
  }
  rhs.upload(minus_r.data(), values);
  delta.allocate(values);
  std::optional<GhostExchange> exchange;
  // Many ranks: the rows whose Aoff blocks read no ghost column are multiplied while the ghost rows travel, the others
  // after them.
  DeviceArray<std::int64_t> inner, outer;
  if (layout) {
    local.allocate(static_cast<std::size_t>(local_nodes) * kBlock);
    FLUXJAC_CUDA_CHECK(cudaMemset(local.data(), 0, local.size() * sizeof(double)));
    exchange.emplace(*ranks.comm, layout->halo);
    exchange->prepare(StateBuffer{local.data(), local_nodes, true});
    const std::vector<std::uint8_t> owned = layout->owned_mask();
    std::vector<std::int64_t> inner_rows, ghost_rows;
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t i = layout->owned_node(t);
      bool reads_ghost = false;
      for (block_offset k = pattern.row_ptr[i]; k < pattern.row_ptr[i + 1] && !reads_ghost; ++k)
        reads_ghost = owned[pattern.col_idx[k]] == 0;
      (reads_ghost ? ghost_rows : inner_rows).push_back(t);
    }
    inner.upload(inner_rows.data(), inner_rows.size());
    outer.upload(ghost_rows.data(), ghost_rows.size());
  }
  // Multicolor Gauss-Seidel: the colors of the node graph (the row nodes), each a range of one list of rows.
  NodeColoring coloring;
  DeviceArray<std::int64_t> colored_rows;
  if (options.preconditioner == kMulticolorGaussSeidel) {
    coloring = color_nodes(pattern, layout);
    colored_rows.upload(coloring.nodes.data(), coloring.nodes.size());
  }
  double exchange_ms = 0.0;
  const auto launch_product = [&](std::int64_t count, const std::int64_t* listed, const double* x, double* y) {
    if (count == 0) return;
    with_aoff([&](const auto* a) {
      block_product_kernel<<<grid(count, kRowsPerBlock), 32 * kWarpsPerBlock>>>(
          count, listed, rows, row_ptr.data(), col_idx.data(), diagonal.data(), a, x, y);
    });
  };
  const auto listed_product = [&](const DeviceArray<std::int64_t>& listed, const double* x, double* y) {
    launch_product(static_cast<std::int64_t>(listed.size()), listed.data(), x, y);
  };
  const auto product = [&](const double* x, double* y) {
    if (!layout) {
      launch_product(n, nullptr, x, y);
      return;
    }
    move_rows_kernel<<<grid(n * kBlock, 256), 256>>>(n, rows, true, x, local.data());
    exchange_ms += exchange->refresh_overlapped(StateBuffer{local.data(), local_nodes, true},
                                                [&] { listed_product(inner, local.data(), y); });
    listed_product(outer, local.data(), y);
  };
  const auto precondition = [&](const double* r, double* z) {
    if (options.preconditioner != kMulticolorGaussSeidel) {
      block_jacobi_kernel<<<grid(n * kBlock, 256), 256>>>(n, inverse.data(), r, z);
      return;
    }
    // Many ranks: the sweeps run on every local node's z (ghosts 0: the rank's own sweeps), then the rows are z.
    double* const swept = layout ? local.data() : z;
    FLUXJAC_CUDA_CHECK(cudaMemsetAsync(swept, 0, (layout ? local.size() : values) * sizeof(double)));
    for (int sweep = 0; sweep < options.sweeps; ++sweep)
      for (int c = 0; c < coloring.colors(); ++c) {
        const std::int64_t first = coloring.color_start[c], count = coloring.color_start[c + 1] - first;
        with_aoff([&](const auto* a) {
          gauss_seidel_color_kernel<<<grid(count, kRowsPerBlock), 32 * kWarpsPerBlock>>>(
              count, colored_rows.data() + first, rows, row_ptr.data(), col_idx.data(), a, inverse.data(), r, swept);
        });
      }
    if (layout) move_rows_kernel<<<grid(n * kBlock, 256), 256>>>(n, rows, false, swept, z);
  };
  DeviceSpace space(values, ranks.comm);
  // One untimed restart cycle (m + 1 iterations) launches every kernel the solve does, cuBLAS's for each basis size
  // included, so that CUDA has loaded their modules (it loads one on its first launch: about 80 ms of the first solve
  // in a process on an H200) and NCCL has connected the ranks (about 200 ms at the first exchange of a GPU pair):
  // part of the set-up, and the solve's time is its iterations' alone.
  const KrylovOptions warm_up{options.krylov.restart, options.krylov.tolerance,
                              std::min(options.krylov.restart + 1, options.krylov.max_iterations)};
  fgmres(space, product, precondition, rhs.data(), delta.data(), warm_up);
  setup.stop();
  outcome.setup_ms = setup.elapsed_ms();
  exchange_ms = 0.0;
  const double reductions_before = space.reduction_ms();

  EventTimer solve;
  solve.start();
  outcome.krylov = fgmres(space, product, precondition, rhs.data(), delta.data(), options.krylov);
  solve.stop();
  outcome.solve_ms = solve.elapsed_ms();
  outcome.exchange_ms = exchange_ms;
  outcome.reduction_ms = space.reduction_ms() - reductions_before;
  FLUXJAC_CUDA_CHECK_LAUNCH();
  outcome.relative_residual = true_relative_residual(space, product, delta.data(), rhs.data());

  // The product's time, into a scratch vector; cuSPARSE's product of the same M compared with it and timed alike.
  DeviceArray<double> scratch;
  scratch.allocate(values);
  outcome.product_ms = median_event_ms([&] { product(delta.data(), scratch.data()); });
  FLUXJAC_CUDA_CHECK_LAUNCH();
  if (options.cusparse) {
    if (layout) fail(ExitCode::kUsage, "--cusparse times one GPU's product of the whole M: run it without mpirun");
    inverse.allocate(0);  // the preconditioner's blocks: room for cuSPARSE's matrices
    if (bf16) {           // cuSPARSE takes no bfloat16 blocks: it multiplies the same values in float32
      aoff_bf16.allocate(0);
      aoff.upload(jacobian.aoff.data(), jacobian.aoff.size());
    }
    const DeviceBlockMatrix matrix{n, pattern.nnz(), row_ptr.data(), col_idx.data(), diagonal.data(), aoff.data()};
    outcome.cusparse = time_cusparse_products(matrix, delta.data(), scratch.data());
  }

  outcome.delta.resize(values);
  delta.download(outcome.delta.data());
  return outcome;
}

}  // namespace fluxjac
