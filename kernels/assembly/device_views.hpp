// fluxjac — what the assembly kernels read and write: plain views of device arrays, filled by the host side.
#pragma once

#include <cstddef>
#include <cstdint>

#include "types.hpp"

namespace fluxjac {

/// Kernel inputs, read-only during assembly.
struct DeviceEdges {
  const node_index* edges;    ///< [n_edges][2] (L, R)
  const double* normals;      ///< [n_edges][3]
  const double* areas;        ///< [n_edges]
  const std::int32_t* slots;  ///< [n_edges][2]: block index of Aoff[L,R] and Aoff[R,L]
  const double* state;        ///< [n_nodes][5] conservative
  edge_index n_edges;
};

/// \brief One tile of the node strategy, i.e. one thread block's work: rows [first_row, first_row + rows) of the
/// visiting order and their entries [first_entry, first_entry + entries). A block reads it in one 16-byte load, so
/// that all its index loads can start at once instead of waiting on its row starts (docs/tuning.md, "The node
/// kernel's load chain").
struct alignas(16) NodeTile {
  std::int32_t first_row, rows, first_entry, entries;
};
static_assert(sizeof(NodeTile) == 16 && offsetof(NodeTile, first_row) == 0 && offsetof(NodeTile, rows) == 4 &&
                  offsetof(NodeTile, first_entry) == 8 && offsetof(NodeTile, entries) == 12,
              "the node kernel reads a NodeTile as one int4 (x, y, z, w in this order)");

/// Node-based assembly: the block-CSR rows in the order the kernel visits them; per entry (i, j) of row i the
/// column j, the slot its block goes to (entry_target) and the face of the edge joining i and j as seen from i
/// (outward unit normal and area, one 32-byte record, so that a block reads its faces contiguously); and the rows of
/// each thread block (whole rows packed to a capacity of entries at setup, one NodeTile each). Visited row r is node
/// row_node[r] (a traversal that keeps neighbours close in time, e.g. RCM, for meshes whose own order scatters them);
/// without row_node it is node r. Columns and the state the kernel reads are in visit ids, so that neighbours' states
/// lie close in memory too (the host copies the state into visit order before each assembly). Entries keep the
/// pattern's order within a row, so each Adiag sum is the same whatever the traversal, and the outputs (Adiag at
/// row_node[r], Aoff at the target slots) keep the pattern's layout. The target of entry (i, j) is the slot of
/// (j, i) for A, and its own slot for A^T (docs/design.md, "The adjoint orientation"): without a visit order the
/// entries of A^T go to their own positions, first_entry + k, and entry_target is nullptr.

struct DeviceNodeMap {
  const std::int32_t* row_ptr;       ///< [n_nodes + 1], in visiting order
  const node_index* col_idx;         ///< [nnz]: j, as a visit id
  const std::int32_t* entry_target;  ///< [nnz]: block index the entry's block goes to, or nullptr: its own
  const double* entry_face;          ///< [nnz][4]: n_x, n_y, n_z (pointing away from i), area
  const NodeTile* tiles;             ///< [blocks]: block b takes tile b
  const node_index* row_node;        ///< [n_nodes]: the node of each visited row, or nullptr (row r is node r)
};

/// Kernel outputs. Aoff goes to one of two arrays: float32 (aoff) or, when aoff_bf16 is set, bfloat16 (the bits of
/// __nv_bfloat16, rounded from the float32 value to the nearest, ties to even): a run-time choice, the same for every
/// thread, so that no kernel is instantiated twice for it.
struct DeviceJacobian {
  double* adiag;             ///< [n_nodes][25]: the edge strategy accumulates with atomics (zeroed before each
                             ///< assembly), the node strategy stores each block once
  float* aoff;               ///< [nnz][25], each block written by exactly one edge; null when aoff_bf16 is set
  double* residual;          ///< [n_nodes][5]: R at the state, summed as Adiag is; null when not assembled
  std::uint16_t* aoff_bf16;  ///< [nnz][25]: Aoff in bfloat16 instead of aoff; null for float32
};

/// Dynamic shared memory of one edge-strategy block: the staged local Jacobians (two blocks of 25 doubles per edge),
/// then, with a residual, the staged fluxes (5 doubles per edge).
inline std::size_t edge_block_shared_bytes(int edges_per_block, bool residual) {
  return static_cast<std::size_t>(edges_per_block) * (2 * kBlockEntries + (residual ? kBlock : 0)) * sizeof(double);
}

/// Dynamic shared memory of one block of the node strategy's one-tile-per-block kernel: the staged blocks (and fluxes,
/// with a residual), per entry the target slot, own row and other node, and the row starts.
inline std::size_t node_block_shared_bytes(int max_entries, int max_rows, bool residual) {
  return static_cast<std::size_t>(max_entries) *
             ((kBlockEntries + (residual ? kBlock : 0)) * sizeof(double) + 3 * sizeof(std::int32_t)) +
         static_cast<std::size_t>(max_rows + 1) * sizeof(std::int32_t);
}

/// Run-time stage switches: not compile-time constants, so the compiler cannot fold either stage away. kStageTranspose
/// stores A^T instead of A (kernels/assembly/orientation.hpp): the edge kernel's run-time switch; the node strategy
/// launches its kernel of that orientation instead.
enum StageFlags : int { kStageCompute = 1, kStageScatter = 2, kStageTranspose = 4 };

}  // namespace fluxjac
