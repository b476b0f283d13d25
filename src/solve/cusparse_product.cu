#include "solve/cusparse_product.hpp"

#include <cusparse.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_check.hpp"
#include "gpu/device_array.hpp"
#include "gpu/event_timer.hpp"
#include "solve/toolkit_library.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// \brief The cuSPARSE calls of `--cusparse` (the generic API), from the toolkit's library opened on first use rather
/// than linked (toolkit_library.hpp).
struct Cusparse {
  decltype(&cusparseCreate) create;
  decltype(&cusparseDestroy) destroy;
  decltype(&cusparseGetErrorName) error_name;
  decltype(&cusparseCreateBsr) create_bsr;
  decltype(&cusparseDestroySpMat) destroy_matrix;
  decltype(&cusparseCreateConstDnVec) create_input_vector;
  decltype(&cusparseCreateDnVec) create_vector;
  decltype(&cusparseDestroyDnVec) destroy_vector;
  decltype(&cusparseSpMV_bufferSize) spmv_buffer_size;
  decltype(&cusparseSpMV_preprocess) spmv_preprocess;
  decltype(&cusparseSpMV) spmv;

  static const Cusparse& get() {
    static const Cusparse loaded = load();
    return loaded;
  }

 private:
  static Cusparse load() {
    const ToolkitLibrary library("libcusparse.so." FLUXJAC_STRINGIFY(CUSPARSE_VER_MAJOR), "cuSPARSE",
                                 "fluxjac solve --cusparse");
    Cusparse calls{};
    library.bind(calls.create, "cusparseCreate");
    library.bind(calls.destroy, "cusparseDestroy");
    library.bind(calls.error_name, "cusparseGetErrorName");
    library.bind(calls.create_bsr, "cusparseCreateBsr");
    library.bind(calls.destroy_matrix, "cusparseDestroySpMat");
    library.bind(calls.create_input_vector, "cusparseCreateConstDnVec");
    library.bind(calls.create_vector, "cusparseCreateDnVec");
    library.bind(calls.destroy_vector, "cusparseDestroyDnVec");
    library.bind(calls.spmv_buffer_size, "cusparseSpMV_bufferSize");
    library.bind(calls.spmv_preprocess, "cusparseSpMV_preprocess");
    library.bind(calls.spmv, "cusparseSpMV");
    return calls;
  }
};

/// "call: CUSPARSE_STATUS_... (code)"
std::string status_text(cusparseStatus_t status, const char* call) {
  return fmt::format("{}: {} ({})", call, Cusparse::get().error_name(status), static_cast<int>(status));
}

void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS) fail(ExitCode::kRuntime, "cuSPARSE: {}", status_text(status, call));
}

/// The types of one cusparseSpMV: the matrix's values, x and y, and the computation.
struct SpmvTypes {
  cudaDataType matrix, vectors, compute;
};

const char* type_name(cudaDataType type) { return type == CUDA_R_32F ? "f32" : "f64"; }

std::string describe(const SpmvTypes& types) {
  return fmt::format("matrix {}, vectors {}, compute {}", type_name(types.matrix), type_name(types.vectors),
                     type_name(types.compute));
}

/// \brief A precision of cuSPARSE's product, with the type combinations tried in turn (the first one cuSPARSE accepts
/// runs). cusparseSpMV's documentation lists uniform float32 and float64 for every format, and a float32 matrix with
/// float64 vectors and computation among its mixed precisions; where BSR refuses that, a float32 matrix with float32
/// vectors and float64 computation is the nearest.
struct Precision {
  const char* name;
  std::vector<SpmvTypes> attempts;
};

const std::vector<Precision>& precisions() {
  static const std::vector<Precision> list = {
      {"f32_matrix_f64_vectors", {{CUDA_R_32F, CUDA_R_64F, CUDA_R_64F}, {CUDA_R_32F, CUDA_R_32F, CUDA_R_64F}}},
      {"f64", {{CUDA_R_64F, CUDA_R_64F, CUDA_R_64F}}},
      {"f32", {{CUDA_R_32F, CUDA_R_32F, CUDA_R_32F}}},
  };
  return list;
}

/// \brief Calls visit(slot, k) for each block of row i of M merged into one BSR matrix (docs/formats.md, "Using the
/// Jacobian"), in column order: slot is the block's position in the BSR arrays, k its Aoff entry in the pattern, or -1
/// for D_i, inserted where column i falls among the row's columns. Row i starts at row_ptr[i] + i.
template <class Visit>
__device__ void visit_bsr_row(std::int64_t i, const block_offset* row_ptr, const node_index* col_idx, Visit&& visit) {
  const block_offset begin = row_ptr[i], end = row_ptr[i + 1];
  block_offset slot = begin + i;
  bool diagonal_placed = false;
  for (block_offset k = begin; k < end; ++k) {
    if (!diagonal_placed && col_idx[k] > i) {
      visit(slot++, block_offset{-1});
      diagonal_placed = true;
    }
    visit(slot++, k);
  }
  if (!diagonal_placed) visit(slot, block_offset{-1});
}

/// The BSR row pointer and column indices of M, a thread per row.
template <class Index>
__global__ void bsr_structure_kernel(std::int64_t n, const block_offset* __restrict__ row_ptr,
                                     const node_index* __restrict__ col_idx, Index* __restrict__ bsr_row_ptr,
                                     Index* __restrict__ bsr_col_idx) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bsr_row_ptr[i] = static_cast<Index>(row_ptr[i] + i);
  if (i == n - 1) bsr_row_ptr[n] = static_cast<Index>(row_ptr[n] + n);
  visit_bsr_row(i, row_ptr, col_idx, [&](block_offset slot, block_offset k) {
    bsr_col_idx[slot] = static_cast<Index>(k < 0 ? i : col_idx[k]);
  });
}

/// \brief The BSR values of M in precision Value, a thread per (row, block entry): the 25 threads of a row write each
/// of its blocks together.
template <class Value>
__global__ void bsr_values_kernel(std::int64_t n, const block_offset* __restrict__ row_ptr,
                                  const node_index* __restrict__ col_idx, const double* __restrict__ diagonal,
                                  const float* __restrict__ aoff, Value* __restrict__ values) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= n * kBlockEntries) return;
  const std::int64_t i = item / kBlockEntries;
  const int entry = static_cast<int>(item - i * kBlockEntries);
  visit_bsr_row(i, row_ptr, col_idx, [&](block_offset slot, block_offset k) {
    values[slot * kBlockEntries + entry] = static_cast<Value>(
        k < 0 ? diagonal[i * kBlockEntries + entry] : static_cast<double>(aoff[k * kBlockEntries + entry]));
  });
}

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t items) { return static_cast<unsigned>((items + kThreads - 1) / kThreads); }

/// A cuSPARSE handle for the products, on the default stream (where the event timers record).
class CusparseHandle {
 public:
  CusparseHandle() { check_cusparse(Cusparse::get().create(&handle_), "cusparseCreate"); }
  ~CusparseHandle() { Cusparse::get().destroy(handle_); }
  CusparseHandle(const CusparseHandle&) = delete;
  CusparseHandle& operator=(const CusparseHandle&) = delete;
  cusparseHandle_t get() const { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
};

/// M's BSR structure in device memory, shared by the precisions' matrices.
template <class Index>
struct BsrStructure {
  std::int64_t n = 0, blocks = 0;
  DeviceArray<Index> row_ptr, col_idx;
  cusparseIndexType_t index_type = sizeof(Index) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
};

/// \brief One product y = M x set up for cusparseSpMV in one type combination, with CUSPARSE_SPMV_BSR_ALG1: the
/// descriptors, the work buffer and its preprocessing, and a first product. refusal() is the call cuSPARSE refused and
/// its status when the set-up failed (empty when it succeeded); multiply() then runs the product again. The
/// preprocessing is optional (cusparseSpMV's documentation names its gain for CSR): where cuSPARSE refuses it, the
/// product runs without and skipped_preprocessing() says why.
class BsrProduct {
 public:
  template <class Index>
  BsrProduct(cusparseHandle_t handle, const BsrStructure<Index>& structure, void* values, const SpmvTypes& types,
             const void* x, void* y)
      : handle_(handle), types_(types) {
    const Cusparse& cusparse = Cusparse::get();
    const std::int64_t rows = structure.n * kBlock;
    if (!accepted(cusparse.create_bsr(&matrix_, structure.n, structure.n, structure.blocks, kBlock, kBlock,
                                      structure.row_ptr.data(), structure.col_idx.data(), values, structure.index_type,
                                      structure.index_type, CUSPARSE_INDEX_BASE_ZERO, types.matrix, CUSPARSE_ORDER_ROW),
                  "cusparseCreateBsr") ||
        !accepted(cusparse.create_input_vector(&x_, rows, x, types.vectors), "cusparseCreateConstDnVec") ||
        !accepted(cusparse.create_vector(&y_, rows, y, types.vectors), "cusparseCreateDnVec"))
      return;
    std::size_t bytes = 0;
    if (!accepted(cusparse.spmv_buffer_size(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, one(), matrix_, x_, zero(), y_,
                                            types.compute, CUSPARSE_SPMV_BSR_ALG1, &bytes),
                  "cusparseSpMV_bufferSize"))
      return;
    buffer_.allocate(bytes);
    const cusparseStatus_t preprocessed =
        cusparse.spmv_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, one(), matrix_, x_, zero(), y_,
                                 types.compute, CUSPARSE_SPMV_BSR_ALG1, buffer_.data());
    if (preprocessed != CUSPARSE_STATUS_SUCCESS)
      skipped_preprocessing_ = fmt::format("{}: {} (optional: the product runs without it)", describe(types_),
                                           status_text(preprocessed, "cusparseSpMV_preprocess"));
    accepted(spmv(), "cusparseSpMV");
  }
  ~BsrProduct() {
    const Cusparse& cusparse = Cusparse::get();
    if (y_) cusparse.destroy_vector(y_);
    if (x_) cusparse.destroy_vector(x_);
    if (matrix_) cusparse.destroy_matrix(matrix_);
  }
  BsrProduct(const BsrProduct&) = delete;
  BsrProduct& operator=(const BsrProduct&) = delete;

  const std::string& refusal() const { return refusal_; }
  const std::string& skipped_preprocessing() const { return skipped_preprocessing_; }
  void multiply() { check_cusparse(spmv(), "cusparseSpMV"); }

 private:
  bool accepted(cusparseStatus_t status, const char* call) {
    if (status == CUSPARSE_STATUS_SUCCESS) return true;
    refusal_ = fmt::format("{}: {}", describe(types_), status_text(status, call));
    return false;
  }
  cusparseStatus_t spmv() {
    return Cusparse::get().spmv(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, one(), matrix_, x_, zero(), y_,
                                types_.compute, CUSPARSE_SPMV_BSR_ALG1, buffer_.data());
  }
  /// alpha = 1 and beta = 0 in the compute type, on the host.
  const void* one() const { return types_.compute == CUDA_R_32F ? static_cast<const void*>(&one_single_) : &one_; }
  const void* zero() const { return types_.compute == CUDA_R_32F ? static_cast<const void*>(&zero_single_) : &zero_; }

  cusparseHandle_t handle_;
  SpmvTypes types_;
  cusparseSpMatDescr_t matrix_ = nullptr;
  cusparseConstDnVecDescr_t x_ = nullptr;
  cusparseDnVecDescr_t y_ = nullptr;
  DeviceArray<unsigned char> buffer_;
  std::string refusal_, skipped_preprocessing_;
  const double one_ = 1.0, zero_ = 0.0;
  const float one_single_ = 1.0f, zero_single_ = 0.0f;
};

/// |y - reference| / |reference| (|reference| = 0: |y|).
double relative_difference(const std::vector<double>& y, const std::vector<double>& reference) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    difference += (y[k] - reference[k]) * (y[k] - reference[k]);
    norm += reference[k] * reference[k];
  }
  return norm > 0.0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

template <class Index>
std::vector<CusparseProduct> time_products(const DeviceBlockMatrix& matrix, const double* x, const double* fused_y) {
  const CusparseHandle handle;
  const std::int64_t n = matrix.n_nodes;
  BsrStructure<Index> structure;
  structure.n = n;
  structure.blocks = matrix.nnz + n;
  structure.row_ptr.allocate(static_cast<std::size_t>(n + 1));
  structure.col_idx.allocate(static_cast<std::size_t>(structure.blocks));
  bsr_structure_kernel<<<blocks_for(n), kThreads>>>(n, matrix.row_ptr, matrix.col_idx, structure.row_ptr.data(),
                                                    structure.col_idx.data());
  FLUXJAC_CUDA_CHECK_LAUNCH();

  // x and y in both precisions; the fused product's y on the host, to compare with.
  const auto values = static_cast<std::size_t>(n) * kBlock;
  std::vector<double> x_wide(values), reference(values), y_wide(values);
  FLUXJAC_CUDA_CHECK(cudaMemcpy(x_wide.data(), x, values * sizeof(double), cudaMemcpyDeviceToHost));
  FLUXJAC_CUDA_CHECK(cudaMemcpy(reference.data(), fused_y, values * sizeof(double), cudaMemcpyDeviceToHost));
  const std::vector<float> x_narrow(x_wide.begin(), x_wide.end());
  std::vector<float> y_narrow(values);
  DeviceArray<float> x_single, y_single(values);
  x_single.upload(x_narrow.data(), values);
  DeviceArray<double> y_double(values);

  std::vector<CusparseProduct> products;
  for (const Precision& precision : precisions()) {
    CusparseProduct result;
    result.precision = precision.name;
    for (const SpmvTypes& types : precision.attempts) {
      // This combination's matrix, freed before the next.
      DeviceArray<float> single_values;
      DeviceArray<double> double_values;
      const auto build = [&](auto& array) {
        array.allocate(static_cast<std::size_t>(structure.blocks) * kBlockEntries);
        bsr_values_kernel<<<blocks_for(n * kBlockEntries), kThreads>>>(n, matrix.row_ptr, matrix.col_idx,
                                                                       matrix.diagonal, matrix.aoff, array.data());
        FLUXJAC_CUDA_CHECK_LAUNCH();
        return static_cast<void*>(array.data());
      };
      void* const bsr_values = types.matrix == CUDA_R_32F ? build(single_values) : build(double_values);
      const bool single_vectors = types.vectors == CUDA_R_32F;
      BsrProduct product(handle.get(), structure, bsr_values, types,
                         single_vectors ? static_cast<const void*>(x_single.data()) : x,
                         single_vectors ? static_cast<void*>(y_single.data()) : y_double.data());
      if (!product.skipped_preprocessing().empty()) result.refused.push_back(product.skipped_preprocessing());
      if (!product.refusal().empty()) {
        result.refused.push_back(product.refusal());
        continue;
      }
      result.product_ms = median_event_ms([&] { product.multiply(); });
      if (single_vectors) {
        y_single.download(y_narrow.data());
        y_wide.assign(y_narrow.begin(), y_narrow.end());
      } else {
        y_double.download(y_wide.data());
      }
      result.relative_difference = relative_difference(y_wide, reference);
      result.matrix = type_name(types.matrix);
      result.vectors = type_name(types.vectors);
      result.compute = type_name(types.compute);
      break;
    }
    products.push_back(std::move(result));
  }
  return products;
}

}  // namespace

std::vector<CusparseProduct> time_cusparse_products(const DeviceBlockMatrix& matrix, const double* x,
                                                    const double* fused_y) {
  // 32-bit indices where every value's offset fits them (the fused product's columns are 32-bit too).
  const std::int64_t entries = (matrix.nnz + matrix.n_nodes) * kBlockEntries;
  if (entries <= INT32_MAX) return time_products<std::int32_t>(matrix, x, fused_y);
  return time_products<std::int64_t>(matrix, x, fused_y);
}

}  // namespace fluxjac
