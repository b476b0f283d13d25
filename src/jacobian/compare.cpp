#include "jacobian/compare.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace fluxjac {
namespace {

/// max|a - r| / max|r|; infinity if any entry is not finite.
template <class T>
double relative_max_error(const std::vector<T>& values, const std::vector<T>& reference) {
  const auto [difference, largest] = difference_maxima(values.data(), reference.data(), values.size());
  return relative_error(difference, largest);
}

}  // namespace

Tolerances validation_tolerances(const Tolerances& asked, AoffPrecision precision) {
  Tolerances tolerances = asked;
  if (precision == AoffPrecision::kBf16) tolerances.aoff = std::max(asked.aoff, kBf16AoffTolerance);
  return tolerances;
}

double relative_error(double max_difference, double max_reference) {
  if (max_reference == 0.0) return max_difference == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return max_difference / max_reference;
}

std::string size_mismatch(const char* what, const JacobianPattern& pattern, const Jacobian& jacobian) {
  const auto adiag = static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries;
  const auto aoff = static_cast<std::size_t>(pattern.nnz()) * kBlockEntries;
  if (jacobian.adiag.size() != adiag)
    return fmt::format("the {} has {} Adiag values, its pattern needs {}", what, jacobian.adiag.size(), adiag);
  if (jacobian.aoff.size() != aoff)
    return fmt::format("the {} has {} Aoff values, its pattern needs {}", what, jacobian.aoff.size(), aoff);
  const auto residual = static_cast<std::size_t>(pattern.n_nodes) * kBlock;
  if (!jacobian.residual.empty() && jacobian.residual.size() != residual)
    return fmt::format("the {} has {} residual values, its pattern needs {}", what, jacobian.residual.size(), residual);
  return {};
}

std::string pattern_difference(const JacobianPattern& a, const JacobianPattern& b) {
  if (a.n_nodes != b.n_nodes) return fmt::format("node counts differ ({} vs {})", a.n_nodes, b.n_nodes);
  if (a.nnz() != b.nnz()) return fmt::format("block counts differ ({} vs {})", a.nnz(), b.nnz());
  for (std::size_t i = 0; i < a.row_ptr.size(); ++i)
    if (a.row_ptr[i] != b.row_ptr[i])
      return fmt::format("row_ptr[{}] differs ({} vs {})", i, a.row_ptr[i], b.row_ptr[i]);
  for (std::size_t i = 0; i < a.col_idx.size(); ++i)
    if (a.col_idx[i] != b.col_idx[i])
      return fmt::format("col_idx[{}] differs ({} vs {})", i, a.col_idx[i], b.col_idx[i]);
  return {};
}

Comparison compare_jacobians(const JacobianPattern& pattern, const Jacobian& result,
                             const JacobianPattern& reference_pattern, const Jacobian& reference,
                             const Tolerances& tolerances) {
  Comparison comparison;
  comparison.pattern_message = pattern_difference(pattern, reference_pattern);
  comparison.same_pattern = comparison.pattern_message.empty();
  // The error loops walk the values; a result that covers less than its pattern must not pass by being short.
  if (comparison.same_pattern) {
    comparison.pattern_message = size_mismatch("result", pattern, result);
    if (comparison.pattern_message.empty())
      comparison.pattern_message = size_mismatch("reference", reference_pattern, reference);
  }
  if (!comparison.pattern_message.empty()) {
    comparison.adiag_error = comparison.aoff_error = comparison.residual_error =
        std::numeric_limits<double>::infinity();
    return comparison;
  }
  comparison.adiag_error = relative_max_error(result.adiag, reference.adiag);
  comparison.aoff_error = relative_max_error(result.aoff, reference.aoff);
  comparison.residual_error = result.residual.empty() || reference.residual.empty()
                                  ? std::numeric_limits<double>::quiet_NaN()
                                  : relative_max_error(result.residual, reference.residual);
  comparison.passed = comparison.adiag_error <= tolerances.adiag && comparison.aoff_error <= tolerances.aoff &&
                      !(comparison.residual_error > tolerances.residual);
  return comparison;
}

std::vector<double> block_csr_multiply(const JacobianPattern& pattern, const Jacobian& jacobian,
                                       const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(pattern.n_nodes) * kBlock, 0.0);
  for (std::int64_t row = 0; row < pattern.n_nodes; ++row) {
    double* out = &y[row * kBlock];
    const double* diagonal = &jacobian.adiag[row * kBlockEntries];
    for (int r = 0; r < kBlock; ++r)
      for (int c = 0; c < kBlock; ++c) out[r] += diagonal[block_entry(r, c)] * x[row * kBlock + c];
    for (block_offset k = pattern.row_ptr[row]; k < pattern.row_ptr[row + 1]; ++k) {
      const float* block = &jacobian.aoff[k * kBlockEntries];
      const double* in = &x[static_cast<std::size_t>(pattern.col_idx[k]) * kBlock];
      for (int r = 0; r < kBlock; ++r)
        for (int c = 0; c < kBlock; ++c) out[r] += block[block_entry(r, c)] * in[c];
    }
  }
  return y;
}

}  // namespace fluxjac
