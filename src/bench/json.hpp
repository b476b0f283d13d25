// fluxjac — a small JSON value: built and written for result files, parsed back by `fluxjac compare`.
//
// Only what result files need: objects keep their insertion order, numbers are doubles (integers are exact
// up to 2^53 and written without a fraction), strings are UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fluxjac {

class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Member = std::pair<std::string, Json>;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : type_(Type::kBool), bool_(value) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Json(T value) : type_(Type::kNumber), number_(static_cast<double>(value)) {}
  Json(std::string value) : type_(Type::kString), string_(std::move(value)) {}
  Json(const char* value) : type_(Type::kString), string_(value) {}

  static Json array() { return Json(Type::kArray); }
  static Json object() { return Json(Type::kObject); }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }

  /// \brief Appends to an array.
  Json& push(Json value);
  /// \brief Adds (or replaces) an object member; returns *this for chaining.
  Json& set(const std::string& key, Json value);

  /// Values; a type mismatch throws Error(kInvalidInput) naming the expected type.
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;
  const std::vector<Json>& items() const;
  std::vector<Json>& items();
  const std::vector<Member>& members() const;

  /// \brief The member `key` of an object, or nullptr when absent (or when this is not an object).
  const Json* find(const std::string& key) const;
  Json* find(const std::string& key);
  /// \brief Member lookups with a fallback for absent or null members.
  double number_or(const std::string& key, double fallback) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;

  /// \brief Text with two-space indentation; containers nested deeper than expand_depth stay on one line
  /// (so a result file shows one run per line).
  std::string dump(int expand_depth = 2) const;

  /// \brief Parses a whole document; Error(kInvalidInput) naming `source` (a file name), line and column.
  static Json parse(const std::string& text, const std::string& source);

 private:
  explicit Json(Type type) : type_(type) {}
  void dump_to(std::string& out, int depth, int expand_depth) const;

  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<Member> members_;
};

/// \brief A string as a JSON string literal (quotes and escapes).
std::string json_quote(const std::string& text);

}  // namespace fluxjac
