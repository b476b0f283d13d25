// fluxjac — FGMRES(m), right-preconditioned (Saad 1993; PETSc's KSPFGMRES): restarted every `restart` iterations,
// classical Gram-Schmidt (PETSc's default, and two matrix-vector products over the basis instead of one reduction
// per basis vector), Givens rotations on the host. The preconditioner may change between iterations (flexible).
//
// One algorithm for the host and the device: it runs over a Space that owns the vectors (host memory with OpenMP, or
// device memory with cuBLAS) and moves only the small Hessenberg column and scalars to the host.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

#include "ranks/communicator.hpp"

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

/// y = op(x) for vectors of the space's length (host or device pointers, as the space keeps them).
using LinearMap = std::function<void(const double* x, double* y)>;

/// \brief Solves M x = b from x = 0 in `space` (see HostSpace for what a space provides): `product` applies M,
/// `precondition` P^-1 (right: M P^-1 u = b, x = P^-1 u). Each restart begins from the true residual b - M x. A zero
/// b gives x = 0 at once.
template <class Space>
KrylovResult fgmres(Space& space, const LinearMap& product, const LinearMap& precondition, const double* b, double* x,
                    const KrylovOptions& options) {
  KrylovResult result;
  space.fill(x, 0.0);
  const double b_norm = space.norm(b);
  if (b_norm == 0.0) {
    result.converged = true;
    return result;
  }
  const auto m = static_cast<std::size_t>(options.restart);
  auto v = space.basis(m + 1), z = space.basis(m);
  auto w = space.basis(1);
  double* const work = space.column(w, 0);
  std::vector<double> h((m + 1) * m), cosine(m), sine(m), g(m + 1), y(m), column(m + 1);
  const auto H = [&](std::size_t row, std::size_t j) -> double& { return h[row * m + j]; };

  space.copy(b, space.column(v, 0));  // r = b - M 0
  double residual = b_norm;
  while (result.iterations < options.max_iterations) {
    space.scale(1.0 / residual, space.column(v, 0));
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = residual;
    std::size_t j = 0;
    for (; j < m && result.iterations < options.max_iterations; ++j) {
      precondition(space.column(v, j), space.column(z, j));
      double* const next = space.column(v, j + 1);  // w, orthogonalized and scaled in place: v_{j+1}
      product(space.column(z, j), next);
      space.project(v, j + 1, next, column.data());   // h = V^T w
      space.subtract(v, j + 1, column.data(), next);  // w -= V h
      for (std::size_t i = 0; i <= j; ++i) H(i, j) = column[i];
      H(j + 1, j) = space.norm(next);
      if (H(j + 1, j) > 0.0) space.scale(1.0 / H(j + 1, j), next);
      for (std::size_t i = 0; i < j; ++i) {  // the earlier rotations on the new column
        const double upper = cosine[i] * H(i, j) + sine[i] * H(i + 1, j);
        H(i + 1, j) = -sine[i] * H(i, j) + cosine[i] * H(i + 1, j);
        H(i, j) = upper;
      }
      const double radius = std::hypot(H(j, j), H(j + 1, j));
      cosine[j] = radius > 0.0 ? H(j, j) / radius : 1.0;
      sine[j] = radius > 0.0 ? H(j + 1, j) / radius : 0.0;
      H(j, j) = radius;
      H(j + 1, j) = 0.0;
      g[j + 1] = -sine[j] * g[j];
      g[j] *= cosine[j];
      ++result.iterations;
      result.history.push_back(std::abs(g[j + 1]) / b_norm);
      if (std::abs(g[j + 1]) <= options.tolerance * b_norm) {
        ++j;
        break;
      }
    }
    // x += Z y with H y = g (upper triangular, j columns)
    for (std::size_t i = j; i-- > 0;) {
      double sum = g[i];
      for (std::size_t k = i + 1; k < j; ++k) sum -= H(i, k) * y[k];
      y[i] = H(i, i) != 0.0 ? sum / H(i, i) : 0.0;
    }
    space.add(z, j, y.data(), x);
    // The true residual for the test and the next cycle.
    product(x, work);
    space.difference(b, work, space.column(v, 0));
    residual = space.norm(space.column(v, 0));
    if (residual <= options.tolerance * b_norm) {
      result.converged = true;
      break;
    }
  }
  return result;
}

/// \brief A space's sums over the ranks (a distributed solve's dot products; nothing on one process), and the host
/// time they took: the reduction and the wait for the slowest rank.
class RankSums {
 public:
  explicit RankSums(const Communicator* comm) : comm_(comm != nullptr && comm->distributed() ? comm : nullptr) {}
  double sum(double value) const;
  /// values[0..count) summed element-wise over the ranks, in place.
  void sum(double* values, std::size_t count) const;
  double milliseconds() const { return milliseconds_; }
  bool distributed() const { return comm_ != nullptr; }

 private:
  const Communicator* comm_;
  mutable double milliseconds_ = 0.0;
};

/// \brief |b - M x| / |b| (|M x| where b = 0) in `space`, with its own product: the true residual of a solution,
/// recomputed in float64.
template <class Space>
double true_relative_residual(Space& space, const LinearMap& product, const double* x, const double* b) {
  auto scratch = space.basis(2);
  double *const y = space.column(scratch, 0), *const r = space.column(scratch, 1);
  product(x, y);
  const double b_norm = space.norm(b);
  if (b_norm == 0.0) return space.norm(y);
  space.difference(b, y, r);
  return space.norm(r) / b_norm;
}

/// \brief Vectors of n doubles in host memory, loops over them with OpenMP: the space of the CPU solve, and what a
/// space provides. A basis is `columns` vectors of n values, column-major. On many ranks each holds its rows of every
/// vector, and norms and projections sum over the ranks (comm).
class HostSpace {
 public:
  using Basis = std::vector<double>;
  explicit HostSpace(std::size_t n, const Communicator* comm = nullptr) : n_(n), sums_(comm) {}
  /// The host time of the sums over the ranks so far.
  double reduction_ms() const { return sums_.milliseconds(); }
  std::size_t size() const { return n_; }
  Basis basis(std::size_t columns) const { return Basis(n_ * columns); }
  double* column(Basis& basis, std::size_t j) const { return basis.data() + n_ * j; }
  const double* column(const Basis& basis, std::size_t j) const { return basis.data() + n_ * j; }
  void fill(double* x, double value) const;
  void copy(const double* from, double* to) const;
  void scale(double alpha, double* x) const;
  double norm(const double* x) const;
  /// h[i] = (V_i, w) for the first `count` columns (classical Gram-Schmidt's projection).
  void project(const Basis& basis, std::size_t count, const double* w, double* h) const;
  /// w -= sum_i h[i] V_i over the first `count` columns.
  void subtract(const Basis& basis, std::size_t count, const double* h, double* w) const;
  /// x += sum_i y[i] Z_i over the first `count` columns.
  void add(const Basis& basis, std::size_t count, const double* y, double* x) const;
  /// r = b - a
  void difference(const double* b, const double* a, double* r) const;

 private:
  std::size_t n_;
  RankSums sums_;
};

}  // namespace fluxjac
