#include "solve/fgmres.hpp"

#include <algorithm>
#include <cmath>

namespace fluxjac {
namespace {

double dot(std::size_t n, const double* a, const double* b) {
  double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::size_t k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

/// y += alpha x
void axpy(std::size_t n, double alpha, const double* x, double* y) {
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < n; ++k) y[k] += alpha * x[k];
}

}  // namespace

KrylovResult fgmres(std::size_t n, const LinearMap& product, const LinearMap& precondition, const double* b, double* x,
                    const KrylovOptions& options) {
  KrylovResult result;
  std::fill(x, x + n, 0.0);
  const double b_norm = std::sqrt(dot(n, b, b));
  if (b_norm == 0.0) {
    result.converged = true;
    return result;
  }
  const auto m = static_cast<std::size_t>(options.restart);
  std::vector<std::vector<double>> v(m + 1, std::vector<double>(n)), z(m, std::vector<double>(n));
  std::vector<double> h((m + 1) * m), cosine(m), sine(m), g(m + 1), y(m), w(n);
  const auto H = [&](std::size_t row, std::size_t column) -> double& { return h[row * m + column]; };

  std::copy(b, b + n, v[0].begin());  // r = b - M 0
  double residual = b_norm;
  while (result.iterations < options.max_iterations) {
    // v_0 = r / |r|, g = |r| e_1
    for (double& value : v[0]) value /= residual;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = residual;
    std::size_t j = 0;
    for (; j < m && result.iterations < options.max_iterations; ++j) {
      precondition(v[j].data(), z[j].data());
      product(z[j].data(), w.data());
      for (std::size_t i = 0; i <= j; ++i) {  // modified Gram-Schmidt
        H(i, j) = dot(n, w.data(), v[i].data());
        axpy(n, -H(i, j), v[i].data(), w.data());
      }
      H(j + 1, j) = std::sqrt(dot(n, w.data(), w.data()));
      if (H(j + 1, j) > 0.0)
        for (std::size_t k = 0; k < n; ++k) v[j + 1][k] = w[k] / H(j + 1, j);
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
    for (std::size_t i = 0; i < j; ++i) axpy(n, y[i], z[i].data(), x);
    // The true residual for the test and the next cycle.
    product(x, w.data());
    for (std::size_t k = 0; k < n; ++k) v[0][k] = b[k] - w[k];
    residual = std::sqrt(dot(n, v[0].data(), v[0].data()));
    if (residual <= options.tolerance * b_norm) {
      result.converged = true;
      break;
    }
  }
  return result;
}

}  // namespace fluxjac
