#include "jacobian/jacobian_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/text.hpp"

namespace fluxjac {
namespace {

constexpr const char* kGroup = "/jacobian";
constexpr const char* kAdiag = "/jacobian/adiag";
constexpr const char* kRowPtr = "/jacobian/row_ptr";
constexpr const char* kColIdx = "/jacobian/col_idx";
constexpr const char* kAoff = "/jacobian/aoff";
constexpr const char* kResidual = "/residual";

void check_writable(const std::string& path, const JacobianPattern& pattern, const Jacobian& jacobian) {
  const std::int64_t n_nodes = pattern.n_nodes;
  const std::size_t nodes = n_nodes > 0 ? static_cast<std::size_t>(n_nodes) : 0;
  const std::size_t nnz = pattern.col_idx.size();
  const bool consistent =
      n_nodes > 0 && pattern.row_ptr.size() == nodes + 1 && pattern.row_ptr.back() == static_cast<block_offset>(nnz) &&
      jacobian.adiag.size() == nodes * kBlockEntries && jacobian.aoff.size() == nnz * kBlockEntries &&
      (jacobian.residual.empty() || jacobian.residual.size() == nodes * kBlock);
  if (!consistent)
    fail(ExitCode::kRuntime,
         "{}: cannot write an inconsistent Jacobian: n_nodes {}, {} row_ptr entries, {} col_idx entries, {} Adiag "
         "values, {} Aoff values, {} residual values",
         path, n_nodes, pattern.row_ptr.size(), nnz, jacobian.adiag.size(), jacobian.aoff.size(),
         jacobian.residual.size());
}

/// The index of the first non-finite value, or values.size().
template <class Real>
std::size_t first_non_finite(const std::vector<Real>& values) {
  return static_cast<std::size_t>(std::find_if(values.begin(), values.end(), [](Real x) { return !std::isfinite(x); }) -
                                  values.begin());
}

/// Finite entries of [blocks, 5, 5] values, naming the block (its index in the file: blocks read by rows are those of
/// `rows`, in order) and the entry (row, column) in it.
template <class Real>
void check_finite_blocks(const std::string& file, const char* path, const std::vector<Real>& values,
                         const std::vector<h5::RowRange>* rows = nullptr) {
  const std::size_t i = first_non_finite(values);
  if (i == values.size()) return;
  const std::size_t entry = i % kBlockEntries;
  const auto block = static_cast<std::int64_t>(i / kBlockEntries);
  fail(ExitCode::kInvalidInput, "{}: {}[{}]: entry ({}, {}) is {}, expected a finite number", file, path,
       rows ? h5::row_in_file(*rows, block) : block, entry / kBlock, entry % kBlock, values[i]);
}

/// Finite residual values [rows, 5], naming the row (its index in the file, as for check_finite_blocks) and component.
void check_finite_residual(const std::string& file, const std::vector<double>& values,
                           const std::vector<h5::RowRange>* rows = nullptr) {
  const std::size_t i = first_non_finite(values);
  if (i == values.size()) return;
  const auto row = static_cast<std::int64_t>(i / kBlock);
  fail(ExitCode::kInvalidInput, "{}: {}[{}]: component {} is {}, expected a finite number", file, kResidual,
       rows ? h5::row_in_file(*rows, row) : row, i % kBlock, values[i]);
}

/// Why block `block` (its index in the file) cannot be written: its entry `entry` is not finite. A file holding it
/// would be refused by every reader, fluxjac's own included, so the Jacobian is refused before the file exists.
template <class Real>
std::string unwritable_block(const std::string& file, const char* path, std::int64_t block, std::size_t entry,
                             Real value, const char* type_name) {
  if (std::isnan(value))  // an invalid operation, not one value too large: typically inf - inf from a density near 0
    return fmt::format(
        "{}: cannot write {}[{}]: entry ({}, {}) is NaN, not a finite number: the flux's arithmetic overflowed; a "
        "density near 0 in the state (or mesh areas or a state too large in magnitude) does that",
        file, path, block, entry / kBlock, entry % kBlock);
  return fmt::format(
      "{}: cannot write {}[{}]: entry ({}, {}) is {}, not a finite number: the Jacobian exceeds the range of {} "
      "(largest {:.3g}); a density near 0 in the state (the Jacobian grows as 1 / density), or mesh areas or a state "
      "too large in magnitude, does that",
      file, path, block, entry / kBlock, entry % kBlock, value, type_name,
      static_cast<double>(std::numeric_limits<Real>::max()));
}

/// The first value of a Jacobian that its file cannot hold (Adiag's, then Aoff's, then the residual's), with its
/// index in the file: rows and blocks held by rows are those of `rows` and `blocks`, in order (null: all, from 0).
std::optional<UnwritableValue> find_unwritable(const std::string& file, const std::vector<double>& adiag,
                                               const std::vector<float>& aoff, const std::vector<double>& residual,
                                               const std::vector<h5::RowRange>* rows = nullptr,
                                               const std::vector<h5::RowRange>* blocks = nullptr) {
  const auto in_file = [](const std::vector<h5::RowRange>* ranges, std::size_t k) {
    return ranges ? h5::row_in_file(*ranges, static_cast<std::int64_t>(k)) : static_cast<std::int64_t>(k);
  };
  // Datasets in the order one process checks them, so that the lowest order of any rank count is the same value.
  constexpr std::int64_t kDatasetStride = std::int64_t{1} << 60;  // past any index a file can hold
  if (const std::size_t i = first_non_finite(adiag); i < adiag.size()) {
    const std::int64_t block = in_file(rows, i / kBlockEntries);
    return UnwritableValue{block, unwritable_block(file, kAdiag, block, i % kBlockEntries, adiag[i], "float64")};
  }
  if (const std::size_t i = first_non_finite(aoff); i < aoff.size()) {
    const std::int64_t block = in_file(blocks, i / kBlockEntries);
    return UnwritableValue{kDatasetStride + block,
                           unwritable_block(file, kAoff, block, i % kBlockEntries, aoff[i], "float32")};
  }
  if (const std::size_t i = first_non_finite(residual); i < residual.size()) {
    const std::int64_t row = in_file(rows, i / kBlock);
    return UnwritableValue{2 * kDatasetStride + row,
                           fmt::format("{}: cannot write {}[{}]: component {} is {}, not a finite number", file,
                                       kResidual, row, i % kBlock, residual[i])};
  }
  return std::nullopt;
}

void check_row_ptr(const std::string& file, const std::vector<block_offset>& row_ptr, std::int64_t nnz) {
  if (row_ptr[0] != 0) fail(ExitCode::kInvalidInput, "{}: {}[0]: is {}, expected 0", file, kRowPtr, row_ptr[0]);
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    if (row_ptr[i] < row_ptr[i - 1])
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: is {}, less than the {} before it (row_ptr must not decrease)", file,
           kRowPtr, i, row_ptr[i], row_ptr[i - 1]);
  if (row_ptr.back() != nnz)
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: is {}, expected nnz = {} (the length of {})", file, kRowPtr,
         row_ptr.size() - 1, row_ptr.back(), nnz, kColIdx);
}

/// One column of a row: block `block` of col_idx holds `column`; previous is the column before it in the row (null
/// for the row's first).
void check_column(const std::string& file, std::int64_t block, std::int64_t column, const std::int64_t* previous,
                  std::int64_t row, std::int64_t n_nodes) {
  if (column < 0 || column >= n_nodes)
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: column {} of row {} is out of range [0, {})", file, kColIdx, block,
         column, row, n_nodes);
  if (column == row)
    fail(ExitCode::kInvalidInput, "{}: {}[{}]: column {} is the diagonal of row {} (it belongs in {})", file, kColIdx,
         block, column, row, kAdiag);
  if (previous && column <= *previous)
    fail(ExitCode::kInvalidInput,
         "{}: {}[{}]: column {} follows column {} in row {} (columns must be strictly ascending within a row)", file,
         kColIdx, block, column, *previous, row);
}

std::vector<node_index> read_columns(const h5::File& file, const h5::DatasetInfo& info,
                                     const std::vector<block_offset>& row_ptr) {
  const std::vector<std::int64_t> columns = h5::read<std::int64_t>(file, info);
  const std::int64_t n_nodes = static_cast<std::int64_t>(row_ptr.size()) - 1;
  for (std::int64_t row = 0; row < n_nodes; ++row)
    for (block_offset k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
      check_column(file.name(), k, columns[k], k > row_ptr[row] ? &columns[k - 1] : nullptr, row, n_nodes);
  return std::vector<node_index>(columns.begin(), columns.end());
}

std::string string_attribute_or_empty(const h5::File& file, const char* name) {
  return h5::read_string_attribute(file, kGroup, name).value_or(std::string());
}

/// The four datasets of a Jacobian file, their types and shapes checked against each other (nothing read yet).
struct JacobianDatasets {
  h5::DatasetInfo adiag, row_ptr, col_idx, aoff;
  std::optional<h5::DatasetInfo> residual;  ///< version 3 on
  std::int64_t n_nodes = 0, nnz = 0;
};

JacobianDatasets describe_jacobian(const h5::File& file, const std::string& path) {
  const std::int64_t version =
      h5::require_format(file, kJacobianFormat, kJacobianOldestFormatVersion, kJacobianFormatVersion);
  if (!h5::exists(file, kGroup)) fail(ExitCode::kInvalidInput, "{}: {}: group not found", path, kGroup);
  JacobianDatasets d;
  d.adiag = h5::describe_dataset(file, kAdiag);
  h5::require_type(d.adiag, {h5::kFloat64});
  h5::require_shape(d.adiag, {h5::kAnyExtent, kBlock, kBlock}, "[n_nodes, 5, 5]");
  d.n_nodes = d.adiag.shape[0];
  if (d.n_nodes == 0) fail(ExitCode::kInvalidInput, "{}: {}: the Jacobian has no rows", path, kAdiag);
  if (d.n_nodes > std::numeric_limits<node_index>::max())
    fail(ExitCode::kInvalidInput, "{}: {}: {} rows, more than int32 column indices can address", path, kAdiag,
         d.n_nodes);
  d.row_ptr = h5::describe_dataset(file, kRowPtr);
  h5::require_type(d.row_ptr, {h5::kInt64, h5::kInt32});
  h5::require_shape(d.row_ptr, {d.n_nodes + 1}, fmt::format("[n_nodes + 1], n_nodes = {} from {}", d.n_nodes, kAdiag));
  d.col_idx = h5::describe_dataset(file, kColIdx);
  h5::require_type(d.col_idx, {h5::kInt32, h5::kInt64});
  h5::require_shape(d.col_idx, {h5::kAnyExtent}, "[nnz]");
  d.nnz = d.col_idx.shape[0];
  d.aoff = h5::describe_dataset(file, kAoff);
  h5::require_type(d.aoff, {h5::kFloat32});
  h5::require_shape(d.aoff, {d.nnz, kBlock, kBlock}, fmt::format("[nnz, 5, 5], nnz = {} from {}", d.nnz, kColIdx));
  if (version >= 3 && h5::exists(file, kResidual)) {  // version 3 on: where the assembly summed it
    d.residual = h5::describe_dataset(file, kResidual);
    h5::require_type(*d.residual, {h5::kFloat64});
    h5::require_shape(*d.residual, {d.n_nodes, kBlock},
                      fmt::format("[n_nodes, 5], n_nodes = {} from {}", d.n_nodes, kAdiag));
  }
  return d;
}

void write_attributes(const h5::File& file, const JacobianFileInfo& info) {
  h5::write_format(file, kJacobianFormat, kJacobianFormatVersion);
  h5::create_group(file, kGroup);
  h5::write_attribute(file, kGroup, "variant", info.variant);
  h5::write_attribute(file, kGroup, "mesh_file", info.mesh_file);
  h5::write_attribute(file, kGroup, "state_file", info.state_file);
  h5::write_attribute(file, kGroup, "fluxjac_version", info.version);
  h5::write_attribute(file, kGroup, "orientation", std::string(to_string(info.orientation)));
  h5::write_attribute(file, kGroup, "aoff_precision", std::string(to_string(info.aoff_precision)));
}

/// The attributes of an open Jacobian file whose format is checked.
JacobianFileInfo read_attributes(const h5::File& file, int format_version) {
  JacobianFileInfo info;
  info.format_version = format_version;
  info.variant = string_attribute_or_empty(file, "variant");
  info.mesh_file = string_attribute_or_empty(file, "mesh_file");
  info.state_file = string_attribute_or_empty(file, "state_file");
  info.version = string_attribute_or_empty(file, "fluxjac_version");
  const std::optional<std::string> orientation = h5::read_string_attribute(file, kGroup, "orientation");
  if (!orientation && format_version >= 2)
    fail(ExitCode::kInvalidInput,
         "{}: {}: attribute \"orientation\" is missing (version {} files record \"A\" or "
         "\"A^T\")",
         file.name(), kGroup, format_version);
  if (orientation) {
    const std::optional<Orientation> parsed = find_named<Orientation>(*orientation);
    if (!parsed)
      fail(ExitCode::kInvalidInput, "{}: {}: attribute \"orientation\" is \"{}\", expected \"A\" or \"A^T\"",
           file.name(), kGroup, quoted_file_text(*orientation));
    info.orientation = *parsed;
  }
  // Files written before Aoff could be assembled in bfloat16 have no such attribute: float32.
  if (const std::optional<std::string> precision = h5::read_string_attribute(file, kGroup, "aoff_precision")) {
    const std::optional<AoffPrecision> parsed = find_named<AoffPrecision>(*precision);
    if (!parsed || *parsed == AoffPrecision::kF64)
      fail(ExitCode::kInvalidInput, "{}: {}: attribute \"aoff_precision\" is \"{}\", expected \"f32\" or \"bf16\"",
           file.name(), kGroup, quoted_file_text(*precision));
    info.aoff_precision = *parsed;
  }
  return info;
}

}  // namespace

std::vector<h5::RowRange> block_ranges(const JacobianRows& rows) {
  std::vector<h5::RowRange> ranges;
  for (std::size_t k = 0; k < rows.rows.size(); ++k) {
    const std::int64_t begin = rows.block_start[k], end = begin + rows.local_ptr[k + 1] - rows.local_ptr[k];
    if (begin == end) continue;
    if (!ranges.empty() && ranges.back().end == begin)
      ranges.back().end = end;
    else
      ranges.push_back({begin, end});
  }
  return ranges;
}

void write_jacobian(const std::string& path, const JacobianPattern& pattern, const Jacobian& jacobian,
                    const JacobianFileInfo& info, const std::function<void(const h5::File&)>& add_more) {
  check_writable(path, pattern, jacobian);
  if (const auto unwritable = find_unwritable(path, jacobian.adiag, jacobian.aoff, jacobian.residual))
    throw Error(unwritable->message, ExitCode::kInvalidInput);
  const std::int64_t n_nodes = pattern.n_nodes;
  const std::int64_t nnz = pattern.nnz();
  AtomicOutput output(path);
  {
    h5::File file = h5::File::create(output.temporary_path(), path);
    write_attributes(file, info);
    h5::write(file, kAdiag, jacobian.adiag, {n_nodes, kBlock, kBlock});
    h5::write(file, kRowPtr, pattern.row_ptr, {n_nodes + 1});
    h5::write(file, kColIdx, pattern.col_idx, {nnz});
    h5::write(file, kAoff, jacobian.aoff, {nnz, kBlock, kBlock});
    if (!jacobian.residual.empty()) h5::write(file, kResidual, jacobian.residual, {n_nodes, kBlock});
    if (add_more) add_more(file);  // in the same temporary: committed together or not at all
    file.close();
  }
  output.commit();
}

void create_jacobian_file(const std::string& file_path, const std::string& display_name, std::int64_t n_nodes,
                          std::int64_t nnz, bool with_residual, const JacobianFileInfo& info) {
  h5::File file = h5::File::create(file_path, display_name);
  write_attributes(file, info);
  h5::create_dataset<double>(file, kAdiag, {n_nodes, kBlock, kBlock});
  h5::create_dataset<block_offset>(file, kRowPtr, {n_nodes + 1});
  h5::create_dataset<node_index>(file, kColIdx, {nnz});
  h5::create_dataset<float>(file, kAoff, {nnz, kBlock, kBlock});
  if (with_residual) h5::create_dataset<double>(file, kResidual, {n_nodes, kBlock});
  h5::write_rows<block_offset>(file, kRowPtr, {{n_nodes, n_nodes + 1}}, {nnz});
  file.close();
}

std::optional<UnwritableValue> first_unwritable_value(const std::string& display_name, const JacobianRows& rows) {
  const std::vector<h5::RowRange> row_ranges = h5::row_ranges(rows.rows), blocks = block_ranges(rows);
  return find_unwritable(display_name, rows.adiag, rows.aoff, rows.residual, &row_ranges, &blocks);
}

void write_jacobian_rows(const std::string& file_path, const std::string& display_name, const JacobianRows& rows) {
  if (const auto unwritable = first_unwritable_value(display_name, rows))
    throw Error(unwritable->message, ExitCode::kInvalidInput);
  h5::File file = h5::File::open(file_path, h5::File::Mode::kReadWrite, display_name);
  const std::vector<h5::RowRange> row_ranges = h5::row_ranges(rows.rows);
  h5::write_rows(file, kAdiag, row_ranges, rows.adiag);
  if (!rows.residual.empty()) h5::write_rows(file, kResidual, row_ranges, rows.residual);
  h5::write_rows(file, kRowPtr, row_ranges, rows.block_start);
  const std::vector<h5::RowRange> blocks = block_ranges(rows);
  h5::write_rows(file, kColIdx, blocks, rows.columns);
  h5::write_rows(file, kAoff, blocks, rows.aoff);
  file.close();
}

JacobianRows read_jacobian_rows(const std::string& path, const std::vector<std::int64_t>& wanted) {
  const h5::File file = h5::File::open(path);
  const JacobianDatasets datasets = describe_jacobian(file, path);
  const h5::DatasetInfo &adiag = datasets.adiag, &row_ptr = datasets.row_ptr, &col_idx = datasets.col_idx,
                        &aoff = datasets.aoff;
  const std::int64_t n_nodes = datasets.n_nodes, nnz = datasets.nnz;
  if (!wanted.empty() && (wanted.front() < 0 || wanted.back() >= n_nodes))
    fail(ExitCode::kInvalidInput, "{}: {}: has {} rows, rows up to {} are needed (a Jacobian of another mesh?)", path,
         kAdiag, n_nodes, wanted.back());

  JacobianRows rows;
  rows.rows = wanted;
  const std::vector<h5::RowRange> row_ranges = h5::row_ranges(wanted);
  // Each row's start and end: row_ptr over every range extended by one.
  std::vector<h5::RowRange> pointer_ranges;
  for (const h5::RowRange& range : row_ranges) {
    if (!pointer_ranges.empty() && pointer_ranges.back().end >= range.begin)
      pointer_ranges.back().end = range.end + 1;
    else
      pointer_ranges.push_back({range.begin, range.end + 1});
  }
  const std::vector<block_offset> pointers = h5::read_rows<block_offset>(file, row_ptr, pointer_ranges);
  std::vector<std::int64_t> pointer_row;
  for (const h5::RowRange& range : pointer_ranges)
    for (std::int64_t row = range.begin; row < range.end; ++row) pointer_row.push_back(row);
  rows.local_ptr = {0};
  std::size_t at = 0;
  for (const std::int64_t row : wanted) {
    while (pointer_row[at] != row) ++at;
    const block_offset begin = pointers[at], end = pointers[at + 1];
    if (begin < 0 || end < begin || end > nnz)
      fail(ExitCode::kInvalidInput, "{}: {}[{}]: row {} spans blocks [{}, {}), outside [0, {}]", path, kRowPtr, row,
           row, begin, end, nnz);
    rows.block_start.push_back(begin);
    rows.local_ptr.push_back(rows.local_ptr.back() + (end - begin));
  }
  const std::vector<h5::RowRange> blocks = block_ranges(rows);
  const std::vector<std::int64_t> columns = h5::read_rows<std::int64_t>(file, col_idx, blocks);
  for (std::size_t k = 0; k < wanted.size(); ++k)
    for (std::int64_t b = rows.local_ptr[k]; b < rows.local_ptr[k + 1]; ++b)
      check_column(path, rows.block_start[k] + (b - rows.local_ptr[k]), columns[b],
                   b > rows.local_ptr[k] ? &columns[b - 1] : nullptr, wanted[k], n_nodes);
  rows.columns.assign(columns.begin(), columns.end());
  rows.adiag = h5::read_rows<double>(file, adiag, row_ranges);
  check_finite_blocks(path, kAdiag, rows.adiag, &row_ranges);
  rows.aoff = h5::read_rows<float>(file, aoff, blocks);
  check_finite_blocks(path, kAoff, rows.aoff, &blocks);
  if (datasets.residual) {
    rows.residual = h5::read_rows<double>(file, *datasets.residual, row_ranges);
    check_finite_residual(path, rows.residual, &row_ranges);
  }
  return rows;
}

StoredJacobian read_jacobian(const std::string& path) {
  const h5::File file = h5::File::open(path);
  // Types and shapes of everything first, then the values.
  const JacobianDatasets datasets = describe_jacobian(file, path);
  const h5::DatasetInfo &adiag = datasets.adiag, &row_ptr = datasets.row_ptr, &col_idx = datasets.col_idx,
                        &aoff = datasets.aoff;
  const std::int64_t n_nodes = datasets.n_nodes, nnz = datasets.nnz;

  StoredJacobian stored;
  JacobianPattern& pattern = stored.pattern;
  pattern.n_nodes = n_nodes;
  pattern.row_ptr = h5::read<block_offset>(file, row_ptr);
  check_row_ptr(path, pattern.row_ptr, nnz);
  pattern.col_idx = read_columns(file, col_idx, pattern.row_ptr);
  stored.jacobian.adiag = h5::read<double>(file, adiag);
  check_finite_blocks(path, kAdiag, stored.jacobian.adiag);
  stored.jacobian.aoff = h5::read<float>(file, aoff);
  check_finite_blocks(path, kAoff, stored.jacobian.aoff);
  if (datasets.residual) {
    stored.jacobian.residual = h5::read<double>(file, *datasets.residual);
    check_finite_residual(path, stored.jacobian.residual);
  }

  stored.info = read_attributes(file, static_cast<int>(*h5::read_integer_attribute(file, "/", "version")));
  return stored;
}

JacobianFileInfo read_jacobian_info(const std::string& path) {
  const h5::File file = h5::File::open(path);
  const std::int64_t version =
      h5::require_format(file, kJacobianFormat, kJacobianOldestFormatVersion, kJacobianFormatVersion);
  if (!h5::exists(file, kGroup)) fail(ExitCode::kInvalidInput, "{}: {}: group not found", path, kGroup);
  return read_attributes(file, static_cast<int>(version));
}

}  // namespace fluxjac
