// fluxjac — block Jacobi, PETSc's pbjacobi: the 5x5 diagonal blocks of M (Adiag + s I) inverted once, in float64,
// applied as z_i = D_i^-1 r_i.
#pragma once

#include <vector>

#include "solve/block_system.hpp"

namespace fluxjac {

class BlockJacobi {
 public:
  /// Inverts the diagonal block of every row node (Gaussian elimination with partial pivoting). Error(kInvalidInput)
  /// naming the node (the file's id) when one is singular to working precision (a larger shift, a smaller CFL, makes
  /// it regular).
  explicit BlockJacobi(const BlockSystem& system);
  /// z = D^-1 r for node-major vectors of system.rows() values.
  void apply(const double* r, double* z) const;
  /// The inverted blocks D_i^-1 of the row nodes, [row nodes][5][5] row-major, in row order.
  const std::vector<double>& inverse() const { return inverse_; }

 private:
  std::vector<double> inverse_;  ///< [row nodes][5][5], row-major
};

}  // namespace fluxjac
