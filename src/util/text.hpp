// fluxjac — small text helpers shared by the command line and the registry.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace fluxjac {

/// \brief The items of a separated list ("hd,dn_10" gives hd and dn_10), empty items dropped.
inline std::vector<std::string> split_list(const std::string& text, char separator = ',') {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace fluxjac
