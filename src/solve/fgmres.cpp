#include "solve/fgmres.hpp"

#include <algorithm>
#include <chrono>

namespace fluxjac {

namespace {
/// Vectors shorter than this are walked by one thread: a parallel region costs more than it saves there, and far
/// more where the cores are oversubscribed (an FGMRES iteration opens tens of regions).
constexpr std::size_t kParallelLength = std::size_t{1} << 15;
}  // namespace

double RankSums::sum(double value) const {
  if (comm_ == nullptr) return value;
  const auto start = std::chrono::steady_clock::now();
  const double total = comm_->sum(value);
  milliseconds_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return total;
}

void RankSums::sum(double* values, std::size_t count) const {
  if (comm_ == nullptr) return;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> totals = comm_->sum(std::vector<double>(values, values + count));
  std::copy(totals.begin(), totals.end(), values);
  milliseconds_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void HostSpace::fill(double* x, double value) const { std::fill(x, x + n_, value); }

void HostSpace::copy(const double* from, double* to) const { std::copy(from, from + n_, to); }

void HostSpace::scale(double alpha, double* x) const {
#pragma omp parallel for schedule(static) if (n_ >= kParallelLength)
  for (std::size_t k = 0; k < n_; ++k) x[k] *= alpha;
}

double HostSpace::norm(const double* x) const {
  double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (n_ >= kParallelLength)
  for (std::size_t k = 0; k < n_; ++k) sum += x[k] * x[k];
  return std::sqrt(sums_.sum(sum));
}

void HostSpace::project(const Basis& basis, std::size_t count, const double* w, double* h) const {
  for (std::size_t i = 0; i < count; ++i) {
    const double* v = column(basis, i);
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (n_ >= kParallelLength)
    for (std::size_t k = 0; k < n_; ++k) sum += v[k] * w[k];
    h[i] = sum;
  }
  sums_.sum(h, count);
}

void HostSpace::subtract(const Basis& basis, std::size_t count, const double* h, double* w) const {
#pragma omp parallel for schedule(static) if (n_ >= kParallelLength)
  for (std::size_t k = 0; k < n_; ++k) {
    double sum = w[k];
    for (std::size_t i = 0; i < count; ++i) sum -= h[i] * basis[n_ * i + k];
    w[k] = sum;
  }
}

void HostSpace::add(const Basis& basis, std::size_t count, const double* y, double* x) const {
#pragma omp parallel for schedule(static) if (n_ >= kParallelLength)
  for (std::size_t k = 0; k < n_; ++k) {
    double sum = x[k];
    for (std::size_t i = 0; i < count; ++i) sum += y[i] * basis[n_ * i + k];
    x[k] = sum;
  }
}

void HostSpace::difference(const double* b, const double* a, double* r) const {
#pragma omp parallel for schedule(static) if (n_ >= kParallelLength)
  for (std::size_t k = 0; k < n_; ++k) r[k] = b[k] - a[k];
}

}  // namespace fluxjac
