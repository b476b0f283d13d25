// fluxjac — validation of an assembled Jacobian against a reference (docs/design.md, "Validation").
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "jacobian/aoff_precision.hpp"
#include "jacobian/jacobian.hpp"

namespace fluxjac {

/// \brief Pass/fail tolerances on max|A - R| / max|R| per matrix.
///
/// Adiag (float64): atomics reorder the sums and the GPU contracts multiply-adds, so results differ from
/// the reference by a few ulps of the largest entries; 1e-12 leaves three orders of margin.
/// Aoff (float32): each entry is rounded to float once, so the error is at most one float ulp
/// (6e-8 relative to the entry); 1e-6 leaves an order of margin.
/// The residual (float64) is a sum of the edges' fluxes in another order (node assembly sums each row, the reference
/// in edge order): a few ulps of its terms, relative to the largest R; 1e-10 leaves margin where R is small beside
/// its terms (a state near a steady one).
/// Aoff in bfloat16 (`--aoff-precision bf16`) is compared with the float32 reference at no less than
/// kBf16AoffTolerance (validation_tolerances).
struct Tolerances {
  double adiag = 1e-12;
  double aoff = 1e-6;
  double residual = 1e-10;
};

/// The least Aoff tolerance of a bfloat16 Aoff, 2^-8. A bfloat16 keeps 8 significant bits: rounding an entry x with
/// 2^e <= |x| < 2^(e + 1) to the nearest moves it by at most half its spacing, 2^(e - 8), which is at most
/// 2^-8 / (1 + 2^-8) of |x| (the worst case is just above 2^e). So max|A - R| / max|R| stays below 2^-8, with a margin
/// of about 2^-16 for the float32 rounding both sides already carry (about 6e-8).
inline constexpr double kBf16AoffTolerance = 1.0 / 256.0;

/// \brief The tolerances a case of Aoff in `precision` is validated with: `asked`, the Aoff one raised to at least
/// kBf16AoffTolerance for bf16.
Tolerances validation_tolerances(const Tolerances& asked, AoffPrecision precision);

struct Comparison {
  bool same_pattern = false;
  /// First difference of the patterns, or why the matrices do not cover their pattern; empty when neither.
  std::string pattern_message;
  double adiag_error = 0.0;  ///< max|A - R| / max|R| over Adiag
  double aoff_error = 0.0;   ///< max|A - R| / max|R| over Aoff
  /// max|R - R_ref| / max|R_ref| over the residual; NaN where the reference has none (a stored reference of file
  /// version 1 or 2), which then does not count
  double residual_error = 0.0;
  bool passed = false;
};

/// \brief Pattern first (row_ptr, col_idx), then relative max-norm errors of Adiag, Aoff and the residual.
/// Non-finite entries fail. A pattern mismatch, or a result or reference whose matrices do not have the sizes
/// of their pattern (e.g. nothing was assembled), fails without value errors.
Comparison compare_jacobians(const JacobianPattern& pattern, const Jacobian& result,
                             const JacobianPattern& reference_pattern, const Jacobian& reference,
                             const Tolerances& tolerances = {});

/// \brief max|a - r| and max|r| over count values: a part's share of a relative max-norm error. The difference is
/// infinite when a value is not finite.
template <class T>
std::pair<double, double> difference_maxima(const T* values, const T* reference, std::size_t count) {
  double max_difference = 0.0, max_reference = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double a = values[i], r = reference[i];
    if (!std::isfinite(a) || !std::isfinite(r)) return {std::numeric_limits<double>::infinity(), max_reference};
    max_difference = std::max(max_difference, std::abs(a - r));
    max_reference = std::max(max_reference, std::abs(r));
  }
  return {max_difference, max_reference};
}

/// \brief max|A - R| / max|R| from the two maxima: 0 for two zero matrices, infinite for a difference to zero.
double relative_error(double max_difference, double max_reference);

/// \brief Why `jacobian` does not hold one value per entry of `pattern` ("the result has 0 Adiag values, its pattern
/// needs 675"), naming it `what`; empty if it does.
std::string size_mismatch(const char* what, const JacobianPattern& pattern, const Jacobian& jacobian);

/// \brief The first difference between two patterns ("node counts differ (27 vs 64)"); empty if they are equal.
std::string pattern_difference(const JacobianPattern& a, const JacobianPattern& b);

/// \brief y = J x with J = Adiag + Aoff in block-CSR (x, y of length 5 n_nodes).
std::vector<double> block_csr_multiply(const JacobianPattern& pattern, const Jacobian& jacobian,
                                       const std::vector<double>& x);

}  // namespace fluxjac
