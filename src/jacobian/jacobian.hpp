// fluxjac — block-CSR sparsity pattern with the edge-to-slot map, and the assembled Jacobian.
#pragma once

#include <vector>

#include "mesh/edge_mesh.hpp"
#include "types.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// \brief Block-CSR pattern of the off-diagonal part plus, per edge, the positions of its two blocks.
///
/// Built once per mesh (SU2 habit: per-edge block offsets computed once and reused by every assembly).
struct JacobianPattern {
  std::int64_t n_nodes = 0;
  std::vector<block_offset> row_ptr;  ///< [n_nodes + 1]
  std::vector<node_index> col_idx;    ///< [nnz], ascending within a row, no diagonal
  std::vector<block_offset> slot_lr;  ///< [n_edges]: block index of Aoff[L, R]
  std::vector<block_offset> slot_rl;  ///< [n_edges]: block index of Aoff[R, L]

  block_offset nnz() const { return static_cast<block_offset>(col_idx.size()); }

  /// \brief Builds the pattern of a mesh (rows sorted, duplicate edges rejected by the mesh reader).
  static JacobianPattern build(const EdgeMesh& mesh);
};

/// \brief Which matrix a Jacobian holds (docs/design.md, "The adjoint orientation"): A = dR/dQ, or its transpose
/// A^T in the same block-CSR layout (the pattern is structurally symmetric; block (i, j) of A^T is (A[j, i])^T).
enum class Orientation { kA, kTransposed };

/// "A" or "A^T": the names the Jacobian file, the bench records and the messages use.
inline constexpr NamedValue<Orientation> kOrientationNames[] = {{Orientation::kA, "A"},
                                                                {Orientation::kTransposed, "A^T"}};
constexpr const auto& names_of(Orientation) { return kOrientationNames; }

/// \brief Node assembly: per pattern entry (i, j), the slot its computed block goes to: the slot of (j, i) in A (the
/// block belongs to column i of A), the entry's own slot in A^T (kernels/assembly/orientation.hpp has the rest of
/// the rules).
std::vector<block_offset> node_entry_targets(const JacobianPattern& pattern, Orientation orientation);

/// \brief The assembled Jacobian dR/dQ (or its transpose): Adiag in float64, Aoff in float32 (docs/design.md, "Jacobian
/// output").
struct Jacobian {
  std::vector<double> adiag;     ///< [n_nodes][5][5], row-major blocks
  std::vector<float> aoff;       ///< [nnz][5][5], row-major blocks, in pattern order
  std::vector<double> residual;  ///< [n_nodes][5]: R at the state, from the same pass (docs/design.md, "Residual, sign
                                 ///< convention and the four blocks"); empty where it was not assembled
  /// [nnz][5][5]: Aoff before its rounding to float32, where asked for (the CPU reference only: the solve's study of
  /// Aoff's precision, docs/design.md "The solve"); else empty.
  std::vector<double> aoff_f64;

  /// Zeros of the pattern's sizes, with a residual and a float64 Aoff when asked.
  void resize(const JacobianPattern& pattern, bool with_residual, bool with_aoff_f64 = false) {
    adiag.assign(static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries, 0.0);
    aoff.assign(static_cast<std::size_t>(pattern.nnz()) * kBlockEntries, 0.0f);
    residual.assign(with_residual ? static_cast<std::size_t>(pattern.n_nodes) * kBlock : 0, 0.0);
    aoff_f64.assign(with_aoff_f64 ? static_cast<std::size_t>(pattern.nnz()) * kBlockEntries : 0, 0.0);
  }
};

}  // namespace fluxjac
