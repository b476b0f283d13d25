#include "util/nearest_name.hpp"

#include <algorithm>
#include <cctype>

namespace fluxjac {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  // Optimal string alignment: three rows of the Levenshtein table, plus the swap of neighbours.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      current[j] =
          std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::string nearest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t letters = name.size() - std::min(name.find_first_not_of('-'), name.size());
  const std::size_t most = std::max<std::size_t>(1, letters / 3);
  std::string nearest;
  std::size_t nearest_distance = most + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < nearest_distance) nearest = candidate, nearest_distance = distance;
  }
  return nearest;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string nearest = nearest_name(name, candidates);
  return nearest.empty() ? std::string() : "; did you mean '" + nearest + "'?";
}

}  // namespace fluxjac
