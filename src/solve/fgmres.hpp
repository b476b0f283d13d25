// fluxjac — FGMRES(m), right-preconditioned (Saad 1993; PETSc's KSPFGMRES): restarted every `restart` iterations,
// modified Gram-Schmidt, Givens rotations. The preconditioner may change between iterations (flexible), which the
// Gauss-Seidel sweeps of a many-rank run need.
#pragma once

#include <functional>
#include <vector>

namespace fluxjac {

struct KrylovOptions {
  int restart = 30;           ///< m: basis vectors kept before a restart (1 or more)
  double tolerance = 1e-8;    ///< stop at |b - M x| <= tolerance |b| (relative, in (0, 1))
  int max_iterations = 1000;  ///< iterations over all restarts
};

struct KrylovResult {
  int iterations = 0;
  bool converged = false;
  std::vector<double> history;  ///< the relative residual |b - M x| / |b| after each iteration, as FGMRES estimates it
};

/// y = op(x) for vectors of n values.
using LinearMap = std::function<void(const double* x, double* y)>;

/// \brief Solves M x = b from x = 0: `product` applies M, `precondition` P^-1 (right: M P^-1 u = b, x = P^-1 u).
/// Each restart begins from the true residual b - M x. A zero b gives x = 0 at once.
KrylovResult fgmres(std::size_t n, const LinearMap& product, const LinearMap& precondition, const double* b, double* x,
                    const KrylovOptions& options);

}  // namespace fluxjac
