// fluxjac — the place of a node among the nodes a rank holds, for lookups by the hundreds of millions (every end of
// every local edge, when a part is built or generated).
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

}  // namespace fluxjac
