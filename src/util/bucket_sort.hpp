// fluxjac — grouping items by a small integer key into CSR form (a counting sort): node -> cells, node ->
// neighbours, rows of the block-CSR pattern, faces by their lowest node. One home for the algorithm.
#pragma once

#include <cstdint>
#include <vector>

namespace fluxjac {

/// Items grouped by key: those of key k are values[start[k]] .. values[start[k + 1] - 1], in the order they
/// were added (the sort is stable).
template <class Value>
struct Buckets {
  std::vector<std::int64_t> start;  ///< [n_keys + 1], start[0] = 0, start[n_keys] = values.size()
  std::vector<Value> values;

  std::int64_t n_keys() const { return static_cast<std::int64_t>(start.size()) - 1; }
  typename std::vector<Value>::iterator begin(std::int64_t key) { return values.begin() + start[key]; }
  typename std::vector<Value>::iterator end(std::int64_t key) { return values.begin() + start[key + 1]; }
  typename std::vector<Value>::const_iterator begin(std::int64_t key) const { return values.begin() + start[key]; }
  typename std::vector<Value>::const_iterator end(std::int64_t key) const { return values.begin() + start[key + 1]; }
};

/// \brief Counting sort of the items that `emit` produces into n_keys buckets.
///
/// emit(add) must call add(key, value) for every item, keys in [0, n_keys); it is called twice (once to
/// count, once to place), so it must produce the same items in the same order both times. Two passes over
/// the source instead of a stored (key, value) list keep the peak memory at the result plus one cursor per key.
template <class Value, class Emit>
Buckets<Value> bucket_by_key(std::int64_t n_keys, Emit&& emit) {
  Buckets<Value> buckets;
  buckets.start.assign(static_cast<std::size_t>(n_keys) + 1, 0);
  emit([&](std::int64_t key, const auto&) { ++buckets.start[static_cast<std::size_t>(key) + 1]; });
  for (std::int64_t key = 0; key < n_keys; ++key) buckets.start[key + 1] += buckets.start[key];
  buckets.values.resize(static_cast<std::size_t>(buckets.start.back()));
  std::vector<std::int64_t> cursor(buckets.start.begin(), buckets.start.end() - 1);
  emit([&](std::int64_t key, const auto& value) { buckets.values[static_cast<std::size_t>(cursor[key]++)] = value; });
  return buckets;
}

}  // namespace fluxjac
