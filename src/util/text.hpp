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

namespace detail {
/// One escape of printable(): `format` applied to a byte value.
inline std::string hex_escape(const char* format, unsigned value) {
  char escape[8] = {};
  std::snprintf(escape, sizeof escape, format, value);
  return escape;
}
}  // namespace detail

/// \brief Text as one line that a terminal shows as written: control characters (C0, DEL, C1) and bytes that are not
/// well-formed UTF-8 become escapes (\n, \t, \r, \xHH, \u009b); other UTF-8 stays as it is. The escapes are printable
/// ASCII, so escaping twice changes nothing: a message may quote text that was already escaped. Every
/// `fluxjac: error:` line and everything `fluxjac compare` prints from a file pass through it, so a file name or value
/// they quote can neither split the line nor send the terminal an escape sequence.
inline std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          out += c < 0x20 || c == 0x7F ? detail::hex_escape("\\x%02x", c) : std::string(1, static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    }
    bool valid = length > 0 && i + 1 < text.size() && byte(i + 1) >= low && byte(i + 1) <= high;
    for (std::size_t k = 2; valid && k < length; ++k) valid = continuation(i + k);
    if (!valid) {
      out += detail::hex_escape("\\x%02x", c);
      ++i;
      continue;
    }
    if (c == 0xC2 && byte(i + 1) <= 0x9F) {
      out += detail::hex_escape("\\u%04x", byte(i + 1));  // a C1 control character, such as U+009B (CSI)
    } else {
      out.append(text, i, length);
    }
    i += length;
  }
  return out;
}

/// \brief A text read from a file as a message quotes it: printable(), and cut after its first `most` bytes (at a
/// character's start) with its length, so that a huge attribute or JSON value cannot bury the line that names it.
inline std::string quoted_file_text(const std::string& text, std::size_t most = 80) {
  if (text.size() <= most) return printable(text);
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return printable(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace fluxjac
