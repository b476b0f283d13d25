// fluxjac — the Jacobian of a many-rank run: each rank's owned rows in the whole mesh's numbering, validated
// together (one verdict for all ranks) and written into one file in the layout of a single-process run.
#pragma once

#include <string>

#include "jacobian/compare.hpp"
#include "jacobian/jacobian.hpp"
#include "jacobian/jacobian_io.hpp"
#include "parallel/communicator.hpp"
#include "parallel/local_part.hpp"

namespace fluxjac {

/// \brief The owned rows of a Jacobian assembled on a rank's local mesh (pattern and jacobian in local ids), with
/// file node ids for rows and columns.
JacobianRows owned_rows(const RankLayout& layout, const JacobianPattern& pattern, const Jacobian& jacobian);

/// \brief Compares every rank's rows with its reference rows: the patterns first (the same rows and columns), then
/// max|A - R| / max|R| with both maxima taken over all ranks, so every rank reports the same errors and verdict
/// as a single-process comparison of the whole matrices.
Comparison compare_rows(const Communicator& comm, const JacobianRows& result, const JacobianRows& reference,
                        const Tolerances& tolerances);

/// \brief Writes one Jacobian file of n_nodes rows from every rank's rows: rank 0 creates it under a temporary name
/// beside path, the ranks write their rows in turn, rank 0 moves it into place. Collective; on an error on any
/// rank, every rank throws it and no file appears.
void write_distributed_jacobian(const Communicator& comm, const std::string& path, std::int64_t n_nodes,
                                const JacobianRows& rows, const JacobianFileInfo& info);

}  // namespace fluxjac
