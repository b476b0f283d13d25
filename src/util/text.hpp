// fluxjac — small text helpers shared by the command line and the registry.
#pragma once

#include <algorithm>
#include <cstdio>
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

/// \brief text with its control characters escaped: \n, \r, \t and \e by name, the other C0 controls, DEL and bytes
/// that are not UTF-8 as \xHH, the C1 controls (U+0080 to U+009F) as \u0080 to \u009f; every other character as it
/// is. A file name or value quoted in an error line then can neither split the line nor send the terminal an escape
/// sequence.
inline std::string printable(const std::string& text) {
  std::string shown;
  shown.reserve(text.size());
  char escape[8] = {};
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || byte == '\r' || byte == '\t' || byte == 0x1b) {
      shown += byte == '\n' ? "\\n" : byte == '\r' ? "\\r" : byte == '\t' ? "\\t" : "\\e";
      ++i;
      continue;
    }
    if (byte >= 0x20 && byte < 0x7f) {
      shown += static_cast<char>(byte);
      ++i;
      continue;
    }
    // A UTF-8 sequence: a lead byte C2..F4 and its 1 to 3 continuation bytes 80..BF.
    const std::size_t length = byte >= 0xc2 && byte <= 0xdf   ? 2
                               : byte >= 0xe0 && byte <= 0xef ? 3
                               : byte >= 0xf0 && byte <= 0xf4 ? 4
                                                              : 0;
    bool whole = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; whole && k < length; ++k) whole = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (whole && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      shown += escape;
      i += 2;
    } else if (whole) {
      shown.append(text, i, length);
      i += length;
    } else {
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      shown += escape;
      ++i;
    }
  }
  return shown;
}

}  // namespace fluxjac
