// fluxjac — writing and reading assembled Jacobians in block-CSR form (docs/design.md, "Jacobian output").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jacobian/aoff_precision.hpp"
#include "jacobian/jacobian.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {

/// Root attribute `format` of Jacobian files.
inline constexpr const char* kJacobianFormat = "fluxjac-jacobian";
/// Root attribute `version` of the Jacobian files written: 2 records the orientation, 3 adds /residual
/// (docs/formats.md, "Jacobian").
inline constexpr int kJacobianFormatVersion = 3;
/// The oldest version read: version 1 files have no orientation and hold A; versions 1 and 2 have no residual.
inline constexpr int kJacobianOldestFormatVersion = 1;

/// \brief Provenance stored as string attributes of /jacobian (variant, mesh_file, state_file, fluxjac_version), the
/// matrix the file holds (attribute orientation: "A" or "A^T") and Aoff's precision (attribute aoff_precision).
struct JacobianFileInfo {
  std::string variant;     ///< registry name of the variant that assembled it
  std::string mesh_file;   ///< input mesh path
  std::string state_file;  ///< input state path (the mesh file when the state was in it)
  std::string version;     ///< fluxjac version and git revision
  Orientation orientation = Orientation::kA;
  int format_version = kJacobianFormatVersion;  ///< read from the file; files are written in kJacobianFormatVersion
  /// The precision Aoff was assembled in (attribute aoff_precision: "f32", or "bf16" where each float32 of
  /// /jacobian/aoff is a bfloat16 widened exactly); a file without the attribute holds f32.
  AoffPrecision aoff_precision = AoffPrecision::kF32;
};

/// \brief A Jacobian read back from a file (e.g. a stored reference).
struct StoredJacobian {
  JacobianPattern pattern;  ///< n_nodes, row_ptr, col_idx; slot_lr/slot_rl are empty (not stored)
  Jacobian jacobian;
  JacobianFileInfo info;  ///< empty strings for attributes the file lacks
};

/// \brief Writes the pattern and values atomically: /jacobian/adiag float64 [N,5,5], row_ptr int64 [N+1],
/// col_idx int32 [nnz], aoff float32 [nnz,5,5], /residual float64 [N,5], with info as attributes. Error(kRuntime) on
/// inconsistent array sizes or I/O failure, Error(kInvalidInput) when a value is not finite (e.g. beyond float32 in
/// Aoff); no file appears then.
void write_jacobian(const std::string& path, const JacobianPattern& pattern, const Jacobian& jacobian,
                    const JacobianFileInfo& info, const std::function<void(const h5::File&)>& add_more = {});

/// \brief The format version and attributes of a Jacobian file, without reading its datasets: Error(kInvalidInput)
/// when it is not a Jacobian file of a version this fluxjac reads, its orientation is not "A" or "A^T", or its
/// aoff_precision not "f32" or "bf16".
JacobianFileInfo read_jacobian_info(const std::string& path);

/// \brief Reads and validates a Jacobian file: types, consistent shapes, row_ptr from 0 to nnz and
/// non-decreasing, col_idx in range, strictly ascending within a row, no diagonal, finite values; the residual of a
/// version 3 file (none before: Jacobian::residual is then empty).
/// Throws Error(kInvalidInput) naming the file, dataset and first offending index.
StoredJacobian read_jacobian(const std::string& path);

/// \brief Some rows of a Jacobian in the whole mesh's numbering: what one rank of a many-GPU run holds, writes and
/// validates (docs/design.md, "Many GPUs").
struct JacobianRows {
  std::vector<std::int64_t> rows;         ///< ascending row ids
  std::vector<std::int64_t> block_start;  ///< [rows]: where each row's blocks start in the whole Aoff
  std::vector<std::int64_t> local_ptr;    ///< [rows + 1]: each row's blocks in columns and aoff below
  std::vector<node_index> columns;        ///< ascending within a row
  std::vector<double> adiag;              ///< [rows][5][5]
  std::vector<float> aoff;                ///< [blocks][5][5]
  std::vector<double> residual;           ///< [rows][5]; read from a file of version 1-2: empty
};

/// \brief The blocks of rows in the file's Aoff (block_start and each row's count), as maximal runs.
std::vector<h5::RowRange> block_ranges(const JacobianRows& rows);

/// \brief Creates a Jacobian file (at file_path; messages name display_name) with the attributes of info and
/// empty datasets for n_nodes rows and nnz blocks (and the residual's, when asked), for write_jacobian_rows to fill;
/// row_ptr[n_nodes] = nnz is written here.
void create_jacobian_file(const std::string& file_path, const std::string& display_name, std::int64_t n_nodes,
                          std::int64_t nnz, bool with_residual, const JacobianFileInfo& info);

/// \brief A value that a Jacobian file cannot hold: not finite, or past float32 in Aoff.
struct UnwritableValue {
  /// Orders such values as one process meets them (Adiag before Aoff before the residual, then by index in the
  /// file): the lowest over the ranks is the value one process names.
  std::int64_t order = 0;
  std::string message;  ///< the error line: file, dataset, index in the file, entry, value and why
};

/// \brief The first value of rows that its file cannot hold, named by its index in the file; none when every value
/// can be written.
std::optional<UnwritableValue> first_unwritable_value(const std::string& display_name, const JacobianRows& rows);

/// \brief Writes rows into a file made by create_jacobian_file (one process at a time). Error(kInvalidInput),
/// before anything is written, when a value is not finite or exceeds float32 in Aoff (first_unwritable_value).
void write_jacobian_rows(const std::string& file_path, const std::string& display_name, const JacobianRows& rows);

/// \brief Reads the given rows (ascending) of a Jacobian file, with read_jacobian's checks on what it reads.
JacobianRows read_jacobian_rows(const std::string& path, const std::vector<std::int64_t>& rows);

}  // namespace fluxjac
