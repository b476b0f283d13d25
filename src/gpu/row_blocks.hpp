// fluxjac — how the node-based assembly groups rows into thread blocks (host code, tested on the CPU).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "assembly/device_views.hpp"

namespace fluxjac {

/// Rows of the block-CSR pattern grouped into thread blocks of the node-based assembly.
struct RowBlocks {
  std::vector<std::int32_t> first_row;  ///< [blocks + 1]: block b holds rows [first_row[b], first_row[b + 1])
  int max_entries = 0;                  ///< most entries (incident edges) in one block
  int max_rows = 0;                     ///< most rows in one block
  std::int64_t blocks() const { return static_cast<std::int64_t>(first_row.size()) - 1; }
};

/// \brief Packs whole rows, in order, into blocks of at most `capacity` entries and at most `capacity` rows:
/// greedy, each block takes rows while the next one still fits; a row longer than `capacity` gets a block
/// of its own. `row_ptr` has n_rows + 1 entries.
inline RowBlocks pack_rows(const std::vector<std::int32_t>& row_ptr, int capacity) {
  RowBlocks packed;
  packed.first_row.assign(1, 0);
  const std::int64_t n_rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  for (std::int64_t row = 0; row < n_rows;) {
    const std::int64_t first = row;
    const std::int64_t first_entry = row_ptr[first];
    ++row;
    while (row < n_rows && row - first < capacity && row_ptr[row + 1] - first_entry <= capacity) ++row;
    packed.max_entries = std::max(packed.max_entries, static_cast<int>(row_ptr[row] - first_entry));
    packed.max_rows = std::max(packed.max_rows, static_cast<int>(row - first));
    packed.first_row.push_back(static_cast<std::int32_t>(row));
  }
  return packed;
}

/// The tiles of packed rows as the node kernel reads them: each block's rows and entries.
inline std::vector<NodeTile> node_tiles(const RowBlocks& packed, const std::vector<std::int32_t>& row_ptr) {
  std::vector<NodeTile> tiles(static_cast<std::size_t>(packed.blocks()));
  for (std::size_t b = 0; b < tiles.size(); ++b) {
    const std::int32_t first = packed.first_row[b], end = packed.first_row[b + 1];
    tiles[b] = {first, end - first, row_ptr[first], row_ptr[end] - row_ptr[first]};
  }
  return tiles;
}

}  // namespace fluxjac
