#include "part/owned_rows.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "ranks/write_in_turn.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// The message of the lowest rank that has one (with its rank when there are many), the same on every rank; empty
/// when no rank has one.
std::string lowest_rank_message(const Communicator& comm, std::string message) {
  const std::int64_t first = -comm.max(message.empty() ? -std::int64_t{comm.size()} : -std::int64_t{comm.rank()});
  if (first >= comm.size()) return {};
  comm.broadcast(message, static_cast<int>(first));
  return comm.distributed() ? fmt::format("rank {}: {}", first, message) : message;
}

/// Where the k-th owned row starts in the whole mesh's Aoff: the whole mesh's rows start where its pattern says.
std::int64_t file_row_start(const RankLayout& layout, const JacobianPattern& pattern, std::int64_t k) {
  return layout.is_whole_mesh() ? pattern.row_ptr[k] : layout.owned_row_start[k];
}

/// The first difference between the owned rows of the rank's pattern and the rows read from a file (the same rows,
/// in file numbering), empty when they agree.
std::string stored_pattern_difference(const RankLayout& layout, const JacobianPattern& pattern,
                                      const JacobianRows& stored) {
  for (std::int64_t k = 0; k < layout.owned_count(); ++k) {
    const node_index local = layout.owned_node(k);
    const std::int64_t row = layout.global_id(local), start = file_row_start(layout, pattern, k);
    const std::int64_t length = pattern.row_ptr[local + 1] - pattern.row_ptr[local];
    const std::int64_t stored_length = stored.local_ptr[k + 1] - stored.local_ptr[k];
    if (length != stored_length || start != stored.block_start[k])
      return fmt::format("row {} has {} blocks from {} vs {} from {}", row, length, start, stored_length,
                         stored.block_start[k]);
    for (std::int64_t i = 0; i < length; ++i) {
      const std::int64_t column = layout.global_id(pattern.col_idx[pattern.row_ptr[local] + i]);
      const std::int64_t stored_column = stored.columns[stored.local_ptr[k] + i];
      if (column != stored_column)
        return fmt::format("row {} has column {} where the reference has {}", row, column, stored_column);
    }
  }
  return {};
}

/// Writes the rows of every rank into one file: rank 0 creates it, the ranks write in turn, rank 0 commits it.
void write_rows_in_turn(const Communicator& comm, const std::string& path, std::int64_t n_nodes,
                        const JacobianRows& rows, const JacobianFileInfo& info, const RowExtras& extras) {
  // A value the file cannot hold is refused before the file exists, on every rank, as one process names it: the
  // lowest in the file's order over the ranks (each rank's rows lie anywhere in the file).
  const std::optional<UnwritableValue> unwritable = first_unwritable_value(path, rows);
  const std::vector<std::int64_t> orders =
      comm.all_gather(unwritable ? unwritable->order : std::numeric_limits<std::int64_t>::max());
  const auto first = std::min_element(orders.begin(), orders.end());
  if (*first != std::numeric_limits<std::int64_t>::max()) {
    std::string message = unwritable ? unwritable->message : std::string();
    comm.broadcast(message, static_cast<int>(first - orders.begin()));
    throw Error(message, ExitCode::kInvalidInput);
  }
  const std::int64_t nnz = comm.sum(static_cast<std::int64_t>(rows.columns.size()));
  // Every rank's case asked for the residual or none did (one configuration): the ranks with rows say.
  const bool with_residual = comm.max(std::int64_t{!rows.residual.empty()}) > 0;
  write_in_turn(
      comm, path,
      [&](const std::string& temporary) {
        create_jacobian_file(temporary, path, n_nodes, nnz, with_residual, info);
        if (!extras.create) return;
        h5::File file = h5::File::open(temporary, h5::File::Mode::kReadWrite, path);
        extras.create(file, n_nodes, nnz);
        file.close();
      },
      [&](const std::string& temporary) {
        write_jacobian_rows(temporary, path, rows);
        if (!extras.write) return;
        h5::File file = h5::File::open(temporary, h5::File::Mode::kReadWrite, path);
        extras.write(file, h5::row_ranges(rows.rows), block_ranges(rows));
        file.close();
      });
}

}  // namespace

JacobianRows owned_rows(const RankLayout& layout, const JacobianPattern& pattern, const Jacobian& jacobian) {
  JacobianRows rows;
  rows.local_ptr = {0};
  for (std::int64_t k = 0; k < layout.owned_count(); ++k) {
    const node_index local = layout.owned_node(k);
    rows.rows.push_back(layout.global_id(local));
    rows.block_start.push_back(file_row_start(layout, pattern, k));
    rows.adiag.insert(rows.adiag.end(), &jacobian.adiag[static_cast<std::size_t>(local) * kBlockEntries],
                      &jacobian.adiag[static_cast<std::size_t>(local) * kBlockEntries] + kBlockEntries);
    if (!jacobian.residual.empty())
      rows.residual.insert(rows.residual.end(), &jacobian.residual[static_cast<std::size_t>(local) * kBlock],
                           &jacobian.residual[static_cast<std::size_t>(local) * kBlock] + kBlock);
    for (block_offset b = pattern.row_ptr[local]; b < pattern.row_ptr[local + 1]; ++b) {
      rows.columns.push_back(static_cast<node_index>(layout.global_id(pattern.col_idx[b])));
      rows.aoff.insert(rows.aoff.end(), &jacobian.aoff[static_cast<std::size_t>(b) * kBlockEntries],
                       &jacobian.aoff[static_cast<std::size_t>(b) * kBlockEntries] + kBlockEntries);
    }
    rows.local_ptr.push_back(static_cast<std::int64_t>(rows.columns.size()));
  }
  return rows;
}

Comparison compare_owned_rows(const Communicator& comm, const RankLayout& layout, const JacobianPattern& pattern,
                              const Jacobian& result, const Jacobian& reference, const Tolerances& tolerances) {
  Comparison comparison;
  comparison.same_pattern = true;  // both on the rank's pattern
  // The error loops walk the values; a result that covers less than its pattern must not pass by being short.
  std::string mismatch = size_mismatch("result", pattern, result);
  if (mismatch.empty()) mismatch = size_mismatch("reference", pattern, reference);
  comparison.pattern_message = lowest_rank_message(comm, std::move(mismatch));
  if (!comparison.pattern_message.empty()) {
    comparison.adiag_error = comparison.aoff_error = comparison.residual_error =
        std::numeric_limits<double>::infinity();
    return comparison;
  }
  // Per rank: max|A - R| and max|R| of Adiag, of Aoff, then of the residual, over the owned rows.
  const bool both_residuals = !result.residual.empty() && !reference.residual.empty();
  std::vector<double> maxima(6, 0.0);
  const auto add = [&maxima](int at, std::pair<double, double> part) {
    maxima[at] = std::max(maxima[at], part.first);
    maxima[at + 1] = std::max(maxima[at + 1], part.second);
  };
  for (const auto& [first, end] : layout.owned_runs()) {
    const auto adiag_at = static_cast<std::size_t>(first) * kBlockEntries;
    add(0, difference_maxima(result.adiag.data() + adiag_at, reference.adiag.data() + adiag_at,
                             static_cast<std::size_t>(end - first) * kBlockEntries));
    const auto aoff_at = static_cast<std::size_t>(pattern.row_ptr[first]) * kBlockEntries;
    add(2, difference_maxima(result.aoff.data() + aoff_at, reference.aoff.data() + aoff_at,
                             static_cast<std::size_t>(pattern.row_ptr[end] - pattern.row_ptr[first]) * kBlockEntries));
    if (both_residuals)
      add(4, difference_maxima(result.residual.data() + static_cast<std::size_t>(first) * kBlock,
                               reference.residual.data() + static_cast<std::size_t>(first) * kBlock,
                               static_cast<std::size_t>(end - first) * kBlock));
  }
  const std::vector<double> global = comm.max(maxima);
  comparison.adiag_error = relative_error(global[0], global[1]);
  comparison.aoff_error = relative_error(global[2], global[3]);
  // One configuration and one reference for every rank: residuals on all ranks or on none (but those without rows).
  comparison.residual_error = comm.max(std::int64_t{both_residuals}) > 0 ? relative_error(global[4], global[5])
                                                                         : std::numeric_limits<double>::quiet_NaN();
  comparison.passed = comparison.adiag_error <= tolerances.adiag && comparison.aoff_error <= tolerances.aoff &&
                      !(comparison.residual_error > tolerances.residual);
  return comparison;
}

StoredRows read_owned_rows(const Communicator& comm, const std::string& path, const RankLayout& layout,
                           const JacobianPattern& pattern, const Note& note) {
  const auto start = std::chrono::steady_clock::now();
  StoredRows stored;
  if (layout.is_whole_mesh()) {
    StoredJacobian file = read_jacobian(path);
    say(note, fmt::format("reference: {} ({:.2f} s)", path, seconds_since(start)));
    stored.pattern_difference = pattern_difference(pattern, file.pattern);
    if (stored.pattern_difference.empty()) stored.jacobian = std::move(file.jacobian);
    return stored;
  }
  std::vector<std::int64_t> wanted(static_cast<std::size_t>(layout.owned_count()));
  for (std::size_t k = 0; k < wanted.size(); ++k) wanted[k] = layout.global_id(layout.owned_node(k));
  const JacobianRows rows = read_jacobian_rows(path, wanted);

  if (comm.is_root())
    say(note, fmt::format("reference: {}, each rank its own rows ({:.2f} s)", path, seconds_since(start)));
  stored.pattern_difference = lowest_rank_message(comm, stored_pattern_difference(layout, pattern, rows));
  if (!stored.pattern_difference.empty()) return stored;
  // The whole part's Jacobian (memory may run out on one rank); no residual where the file has none (version 1-2).
  stored.jacobian.resize(pattern, !rows.residual.empty());
  for (std::int64_t k = 0; k < layout.owned_count(); ++k) {
    const node_index local = layout.owned_node(k);
    if (!rows.residual.empty())
      std::copy_n(rows.residual.data() + static_cast<std::size_t>(k) * kBlock, kBlock,
                  stored.jacobian.residual.data() + static_cast<std::size_t>(local) * kBlock);
    std::copy_n(rows.adiag.data() + static_cast<std::size_t>(k) * kBlockEntries, kBlockEntries,
                stored.jacobian.adiag.data() + static_cast<std::size_t>(local) * kBlockEntries);
    std::copy_n(rows.aoff.data() + static_cast<std::size_t>(rows.local_ptr[k]) * kBlockEntries,
                (rows.local_ptr[k + 1] - rows.local_ptr[k]) * kBlockEntries,
                stored.jacobian.aoff.data() + static_cast<std::size_t>(pattern.row_ptr[local]) * kBlockEntries);
  }

  return stored;
}

void write_owned_rows(const Communicator& comm, const std::string& path, const RankLayout& layout,
                      const JacobianPattern& pattern, const Jacobian& jacobian, const JacobianFileInfo& info,
                      const RowExtras& extras) {
  if (layout.is_whole_mesh()) {
    std::function<void(const h5::File&)> add_extras;
    if (extras.create)
      add_extras = [&](const h5::File& file) {
        extras.create(file, pattern.n_nodes, pattern.nnz());
        if (extras.write) extras.write(file, {{0, pattern.n_nodes}}, {{0, pattern.nnz()}});
      };
    write_jacobian(path, pattern, jacobian, info, add_extras);
  } else {
    JacobianRows rows = owned_rows(layout, pattern, jacobian);  // a copy of the part's rows: memory may run out
    write_rows_in_turn(comm, path, layout.global_nodes, rows, info, extras);
  }
}

}  // namespace fluxjac
