#include "parallel/distributed_jacobian.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "util/atomic_output.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// max|a - r| and max|r| (infinite difference when a value is not finite).
template <class T>
std::pair<double, double> maxima(const std::vector<T>& values, const std::vector<T>& reference) {
  double difference = 0.0, largest = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double a = values[i], r = reference[i];
    if (!std::isfinite(a) || !std::isfinite(r)) return {std::numeric_limits<double>::infinity(), largest};
    difference = std::max(difference, std::abs(a - r));
    largest = std::max(largest, std::abs(r));
  }
  return {difference, largest};
}

double relative(double difference, double largest) {
  if (largest == 0.0) return difference == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return difference / largest;
}

/// The first difference between the rows' patterns, empty when they agree.
std::string pattern_difference(const JacobianRows& a, const JacobianRows& b) {
  if (a.rows != b.rows) return fmt::format("the ranks hold different rows ({} vs {})", a.rows.size(), b.rows.size());
  for (std::size_t k = 0; k < a.rows.size(); ++k) {
    const std::int64_t length_a = a.local_ptr[k + 1] - a.local_ptr[k], length_b = b.local_ptr[k + 1] - b.local_ptr[k];
    if (length_a != length_b || a.block_start[k] != b.block_start[k])
      return fmt::format("row {} has {} blocks from {} vs {} from {}", a.rows[k], length_a, a.block_start[k], length_b,
                         b.block_start[k]);
    for (std::int64_t i = 0; i < length_a; ++i)
      if (a.columns[a.local_ptr[k] + i] != b.columns[b.local_ptr[k] + i])
        return fmt::format("row {} has column {} where the reference has {}", a.rows[k], a.columns[a.local_ptr[k] + i],
                           b.columns[b.local_ptr[k] + i]);
  }
  if (a.adiag.size() != b.adiag.size() || a.aoff.size() != b.aoff.size())
    return fmt::format("{} vs {} Adiag and {} vs {} Aoff values", a.adiag.size(), b.adiag.size(), a.aoff.size(),
                       b.aoff.size());
  return {};
}

}  // namespace

JacobianRows owned_rows(const RankLayout& layout, const JacobianPattern& pattern, const Jacobian& jacobian) {
  JacobianRows rows;
  rows.local_ptr = {0};
  for (std::size_t k = 0; k < layout.owned_nodes.size(); ++k) {
    const node_index local = layout.owned_nodes[k];
    rows.rows.push_back(layout.global_node[local]);
    rows.block_start.push_back(layout.owned_row_start[k]);
    rows.adiag.insert(rows.adiag.end(), &jacobian.adiag[static_cast<std::size_t>(local) * kBlockEntries],
                      &jacobian.adiag[static_cast<std::size_t>(local) * kBlockEntries] + kBlockEntries);
    for (block_offset b = pattern.row_ptr[local]; b < pattern.row_ptr[local + 1]; ++b) {
      rows.columns.push_back(static_cast<node_index>(layout.global_node[pattern.col_idx[b]]));
      rows.aoff.insert(rows.aoff.end(), &jacobian.aoff[static_cast<std::size_t>(b) * kBlockEntries],
                       &jacobian.aoff[static_cast<std::size_t>(b) * kBlockEntries] + kBlockEntries);
    }
    rows.local_ptr.push_back(static_cast<std::int64_t>(rows.columns.size()));
  }
  return rows;
}

Comparison compare_rows(const Communicator& comm, const JacobianRows& result, const JacobianRows& reference,
                        const Tolerances& tolerances) {
  Comparison comparison;
  std::string difference = pattern_difference(result, reference);
  // One message for all: the lowest rank that found a difference.
  const std::int64_t first = -comm.max(difference.empty() ? -std::int64_t{comm.size()} : -std::int64_t{comm.rank()});
  if (first < comm.size()) {
    comm.broadcast(difference, static_cast<int>(first));
    comparison.pattern_message = fmt::format("rank {}: {}", first, difference);
    comparison.adiag_error = comparison.aoff_error = std::numeric_limits<double>::infinity();
    return comparison;
  }
  comparison.same_pattern = true;
  const auto [adiag_difference, adiag_largest] = maxima(result.adiag, reference.adiag);
  const auto [aoff_difference, aoff_largest] = maxima(result.aoff, reference.aoff);
  const std::vector<double> global =
      comm.max(std::vector<double>{adiag_difference, adiag_largest, aoff_difference, aoff_largest});
  comparison.adiag_error = relative(global[0], global[1]);
  comparison.aoff_error = relative(global[2], global[3]);
  comparison.passed = comparison.adiag_error <= tolerances.adiag && comparison.aoff_error <= tolerances.aoff;
  return comparison;
}

void write_distributed_jacobian(const Communicator& comm, const std::string& path, std::int64_t n_nodes,
                                const JacobianRows& rows, const JacobianFileInfo& info) {
  const std::int64_t nnz = comm.sum(static_cast<std::int64_t>(rows.columns.size()));
  std::unique_ptr<AtomicOutput> output;
  std::string temporary;
  comm.agree([&] {
    if (!comm.is_root()) return;
    output = std::make_unique<AtomicOutput>(path);
    temporary = output->temporary_path();
    create_jacobian_file(temporary, path, n_nodes, nnz, info);
  });
  comm.broadcast(temporary);
  // One rank at a time: serial HDF5 has one writer.
  for (int writer = 0; writer < comm.size(); ++writer) {
    comm.agree([&] {
      if (comm.rank() == writer) write_jacobian_rows(temporary, path, rows);
    });
  }
  comm.agree([&] {
    if (comm.is_root()) output->commit();
  });
}

}  // namespace fluxjac
