// fluxjac — enums chosen or printed by name: each spells its names once, in one table of {value, name} pairs
// beside the enum, and to_string, the parsers and the lists of names for help texts all read that table.
//
//   enum class MeshKind { kTet, kPrism, kMixed };
//   inline constexpr NamedValue<MeshKind> kMeshKindNames[] = {
//       {MeshKind::kTet, "tet"}, {MeshKind::kPrism, "prism"}, {MeshKind::kMixed, "mixed"}};
//   constexpr const auto& names_of(MeshKind) { return kMeshKindNames; }
//
// names_of is found by argument-dependent lookup, so it lives in the enum's namespace.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>

#include "util/error.hpp"

namespace fluxjac {

/// One value of an enum and its name.
template <class Enum>
struct NamedValue {
  Enum value;
  const char* name;
};

/// \brief The name of `value` in its enum's table; "?" for a value the table lacks.
template <class Enum, class = std::enable_if_t<std::is_enum_v<Enum>>, class = decltype(names_of(Enum{}))>
constexpr const char* to_string(Enum value) {
  for (const NamedValue<Enum>& named : names_of(value))
    if (named.value == value) return named.name;
  return "?";
}

/// \brief The names of an enum's values in table order, joined for messages and help texts: "a, b or c".
template <class Enum>
std::string name_list() {
  const auto& table = names_of(Enum{});
  const std::size_t count = std::size(table);
  std::string names;
  for (std::size_t index = 0; index < count; ++index) {
    names += index == 0 ? "" : index + 1 == count ? " or " : ", ";
    names += table[index].name;
  }
  return names;
}

/// \brief The value named `text`; nullopt for any other text.
template <class Enum>
std::optional<Enum> find_named(const std::string& text) {
  for (const NamedValue<Enum>& named : names_of(Enum{}))
    if (text == named.name) return named.value;
  return std::nullopt;
}

/// \brief The value named `text`; otherwise Error(kUsage) "unknown WHAT 'TEXT': use a, b or c".
template <class Enum>
Enum parse_named(const std::string& text, const char* what) {
  if (const std::optional<Enum> value = find_named<Enum>(text)) return *value;
  fail(ExitCode::kUsage, "unknown {} '{}': use {}", what, text, name_list<Enum>());
}

}  // namespace fluxjac
