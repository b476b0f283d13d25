// fluxjac — enums chosen by name on the command line and in configs: one parser and one list of names
// per enum, both derived from its to_string(), so a name is spelled in one place.
#pragma once

#include <initializer_list>
#include <string>

#include "util/error.hpp"

namespace fluxjac {

/// \brief The names of values joined for messages and help texts: "a, b or c".
template <class Enum>
std::string name_list(std::initializer_list<Enum> values) {
  std::string names;
  std::size_t index = 0;
  for (const Enum value : values) {
    names += index == 0 ? "" : index + 1 == values.size() ? " or " : ", ";
    names += to_string(value);
    ++index;
  }
  return names;
}

/// \brief The value whose to_string() is `text`; otherwise Error(kUsage) "unknown WHAT 'TEXT': use a, b or c".
template <class Enum>
Enum parse_named(const std::string& text, std::initializer_list<Enum> values, const char* what) {
  for (const Enum value : values)
    if (text == to_string(value)) return value;
  fail(ExitCode::kUsage, "unknown {} '{}': use {}", what, text, name_list(values));
}

}  // namespace fluxjac
