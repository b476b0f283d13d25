// fluxjac — the place of a node among the nodes a rank holds, for lookups by the hundreds of millions (every end of
// every local edge, when a part is built, generated or partitioned).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fluxjac {

/// \brief The place of global node id `id` among a rank's held ids in ascending order (its owned ids and its ghosts
/// merged), where the owned ids are one range [first, first + count): an id in the range by arithmetic, any other by a
/// search of the ghosts alone. Equals std::lower_bound over the merged list for every id, held or not.
class HeldIds {
 public:
  /// `ghosts`: ascending, none in the owned range; kept by reference.
  HeldIds(std::int64_t first, std::int64_t count, const std::vector<std::int64_t>& ghosts)
      : first_(first),
        count_(count),
        ghosts_(ghosts),
        ghosts_below_(std::lower_bound(ghosts.begin(), ghosts.end(), first) - ghosts.begin()) {}

  std::int64_t operator()(std::int64_t id) const {
    if (id >= first_ && id < first_ + count_) return ghosts_below_ + (id - first_);
    const std::int64_t ghost = std::lower_bound(ghosts_.begin(), ghosts_.end(), id) - ghosts_.begin();
    return ghost < ghosts_below_ ? ghost : ghost + count_;
  }

  /// Whether `id` is one of the owned ids.
  bool owned(std::int64_t id) const { return id >= first_ && id < first_ + count_; }

 private:
  std::int64_t first_, count_;
  const std::vector<std::int64_t>& ghosts_;
  std::int64_t ghosts_below_;
};

/// \brief The place of an id among distinct ids in ascending order, for lookups by the millions (each end of each
/// edge a rank holds): a table over the ids' span where that span is at most 8 times their number (orderings with
/// locality keep a part's ids close; at most 32 bytes per id), else a binary search. `place(id)` is that of a held id.
class SortedIds {
 public:
  /// The most table entries per id: a span beyond this many times the ids' number is searched instead.
  static constexpr std::int64_t kSpanPerId = 8;

  /// `ids`: ascending and distinct; kept by reference.
  explicit SortedIds(const std::vector<std::int64_t>& ids) : ids_(ids) {
    if (ids.empty() || ids.size() >= (std::size_t{1} << 31)) return;
    first_ = ids.front();
    const std::int64_t span = ids.back() - first_ + 1;
    if (span > kSpanPerId * static_cast<std::int64_t>(ids.size())) return;
    table_.assign(static_cast<std::size_t>(span), 0);
    for (std::size_t k = 0; k < ids.size(); ++k)
      table_[static_cast<std::size_t>(ids[k] - first_)] = static_cast<std::int32_t>(k);
  }

  /// Ascending and distinct ids from any list: a mark per id of the span where it is dense, else a sort.
  static std::vector<std::int64_t> distinct(std::vector<std::int64_t> ids) {
    if (ids.empty()) return ids;
    const auto [low, high] = std::minmax_element(ids.begin(), ids.end());
    const std::int64_t first = *low, span = *high - first + 1;
    if (span > kSpanPerId * static_cast<std::int64_t>(ids.size())) {
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      return ids;
    }
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(span), 0);
    for (const std::int64_t id : ids) seen[static_cast<std::size_t>(id - first)] = 1;
    ids.clear();
    for (std::int64_t k = 0; k < span; ++k)
      if (seen[static_cast<std::size_t>(k)]) ids.push_back(first + k);
    return ids;
  }

  std::size_t place(std::int64_t id) const {
    if (!table_.empty()) return static_cast<std::size_t>(table_[static_cast<std::size_t>(id - first_)]);
    return static_cast<std::size_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin());
  }

 private:
  const std::vector<std::int64_t>& ids_;
  std::int64_t first_ = 0;
  std::vector<std::int32_t> table_;
};

}  // namespace fluxjac
