// fluxjac — the Jacobian rows a rank owns (docs/design.md, "Many GPUs"): validated together, one verdict for all
// ranks, and written into one file in the whole mesh's numbering. One process owns every row (RankLayout::whole_mesh)
// and goes through the same functions; only reading and writing the file differ, inside them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "jacobian/compare.hpp"
#include "jacobian/jacobian.hpp"
#include "jacobian/jacobian_io.hpp"
#include "part/local_part.hpp"
#include "ranks/communicator.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// \brief The owned rows of a Jacobian assembled on a rank's local mesh (pattern and jacobian in local ids), with
/// file node ids for rows and columns.
JacobianRows owned_rows(const RankLayout& layout, const JacobianPattern& pattern, const Jacobian& jacobian);

/// \brief Compares the owned rows of result with those of reference, both on the rank's pattern: max|A - R| / max|R|
/// with both maxima taken over all ranks, so every rank reports the same errors and verdict as a comparison of the
/// whole matrices. A result or reference that does not cover the pattern (e.g. nothing was assembled) fails without
/// value errors, with the message of the lowest such rank.
Comparison compare_owned_rows(const Communicator& comm, const RankLayout& layout, const JacobianPattern& pattern,
                              const Jacobian& result, const Jacobian& reference, const Tolerances& tolerances);

/// \brief A stored Jacobian's values on a rank's pattern, and the first difference of its pattern.
struct StoredRows {
  Jacobian jacobian;               ///< the owned rows' values (zero in ghost rows); empty when the patterns differ
  std::string pattern_difference;  ///< mesh vs stored; empty when the owned rows match; the same on every rank
};

/// \brief Reads the owned rows of a Jacobian file (written by `run --output`) onto the rank's pattern: one process
/// reads the whole file (read_jacobian's checks), many ranks read their own rows (read_jacobian_rows). Collective;
/// an unreadable file throws the same Error on every rank. `note` receives one progress line (rank 0).
StoredRows read_owned_rows(const Communicator& comm, const std::string& path, const RankLayout& layout,
                           const JacobianPattern& pattern, const Note& note);

/// \brief What a file of Jacobian rows carries besides them (the solve's /solve): `create` makes it in the new file,
/// sized for the whole mesh (n_nodes rows, nnz blocks); `write` writes this rank's rows and blocks of it, at the
/// file's row and block ranges of the owned rows (in owned order).
struct RowExtras {
  std::function<void(const h5::File& file, std::int64_t n_nodes, std::int64_t nnz)> create;
  std::function<void(const h5::File& file, const std::vector<h5::RowRange>& rows,
                     const std::vector<h5::RowRange>& blocks)>
      write;
};

/// \brief Writes one Jacobian file of every rank's owned rows, in the whole mesh's numbering, with `extras` when
/// given: one process writes it whole (write_jacobian); on many ranks rank 0 creates it under a temporary name beside
/// path, the ranks write their rows in turn, and rank 0 moves it into place. Collective; on an error on any rank,
/// every rank throws it and no file appears.
void write_owned_rows(const Communicator& comm, const std::string& path, const RankLayout& layout,
                      const JacobianPattern& pattern, const Jacobian& jacobian, const JacobianFileInfo& info,
                      const RowExtras& extras = {});

}  // namespace fluxjac
