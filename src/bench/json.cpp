#include "bench/json.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "util/error.hpp"

namespace fluxjac {
namespace {

const char* type_name(Json::Type type) {
  switch (type) {
    case Json::Type::kNull:
      return "null";
    case Json::Type::kBool:
      return "a boolean";
    case Json::Type::kNumber:
      return "a number";
    case Json::Type::kString:
      return "a string";
    case Json::Type::kArray:
      return "an array";
    case Json::Type::kObject:
      return "an object";
  }
  return "?";
}

void expect_type(const Json& value, Json::Type type) {
  if (value.type() != type)
    fail(ExitCode::kInvalidInput, "JSON: expected {}, found {}", type_name(type), type_name(value.type()));
}

/// Integers (exact in a double) without a fraction, others with 9 significant digits; non-finite as null.
std::string number_text(double x) {
  if (!std::isfinite(x)) return "null";
  if (x == std::floor(x) && std::abs(x) < 9.0e15) return fmt::format("{:.0f}", x);
  return fmt::format("{:.9g}", x);
}

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

/// Recursive-descent reader of one JSON document (RFC 8259).
class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  Json document() {
    Json value = parse_value(0);
    skip_space();
    if (at_ < text_.size()) error("unexpected text after the document");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 200;

  [[noreturn]] void error(const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < at_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    fail(ExitCode::kInvalidInput, "{}: invalid JSON at line {}, column {}: {}", source_, line, column, what);
  }

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t'))
      ++at_;
  }

  char peek() {
    skip_space();
    if (at_ >= text_.size()) error("unexpected end of the text");
    return text_[at_];
  }

  void expect(char c) {
    if (peek() != c) error(fmt::format("expected '{}'", c));
    ++at_;
  }

  bool consume_word(const char* word) {
    const std::size_t n = std::char_traits<char>::length(word);
    if (text_.compare(at_, n, word) != 0) return false;
    at_ += n;
    return true;
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    const char c = peek();
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return Json(parse_string());
    if (consume_word("true")) return Json(true);
    if (consume_word("false")) return Json(false);
    if (consume_word("null")) return Json();
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    error(fmt::format("unexpected character '{}'", c));
  }

  Json parse_object(int depth) {
    expect('{');
    Json object = Json::object();
    if (peek() == '}') {
      ++at_;
      return object;
    }
    while (true) {
      if (peek() != '"') error("expected a member name in quotes");
      std::string key = parse_string();
      expect(':');
      object.set(key, parse_value(depth + 1));
      if (peek() == ',') {
        ++at_;
        continue;
      }
      expect('}');
      return object;
    }
  }

  Json parse_array(int depth) {
    expect('[');
    Json array = Json::array();
    if (peek() == ']') {
      ++at_;
      return array;
    }
    while (true) {
      array.push(parse_value(depth + 1));
      if (peek() == ',') {
        ++at_;
        continue;
      }
      expect(']');
      return array;
    }
  }

  unsigned parse_hex4() {
    if (at_ + 4 > text_.size()) error("short \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_++];
      code <<= 4;
      if (h >= '0' && h <= '9')
        code |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f')
        code |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        code |= unsigned(h - 'A' + 10);
      else
        error("bad hex digit in a \\u escape");
    }
    return code;
  }

  std::string parse_string() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= text_.size()) error("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) error("unterminated escape");
      const char e = text_[at_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = parse_hex4();
          if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            const unsigned low = parse_hex4();
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          error(fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  Json parse_number() {
    const std::size_t start = at_;
    if (text_[at_] == '-') ++at_;
    auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      if (at_ == from) error("malformed number");
    };
    digits();
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      digits();
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      digits();
    }
    return Json(std::strtod(text_.substr(start, at_ - start).c_str(), nullptr));
  }

  const std::string& text_;
  const std::string& source_;
  std::size_t at_ = 0;
};

}  // namespace

Json& Json::push(Json value) {
  expect_type(*this, Type::kArray);
  items_.push_back(std::move(value));
  return *this;
}

Json& Json::set(const std::string& key, Json value) {
  expect_type(*this, Type::kObject);
  for (Member& member : members_)
    if (member.first == key) {
      member.second = std::move(value);
      return *this;
    }
  members_.emplace_back(key, std::move(value));
  return *this;
}

bool Json::as_bool() const {
  expect_type(*this, Type::kBool);
  return bool_;
}

double Json::as_number() const {
  expect_type(*this, Type::kNumber);
  return number_;
}

const std::string& Json::as_string() const {
  expect_type(*this, Type::kString);
  return string_;
}

const std::vector<Json>& Json::items() const {
  expect_type(*this, Type::kArray);
  return items_;
}

std::vector<Json>& Json::items() {
  expect_type(*this, Type::kArray);
  return items_;
}

const std::vector<Json::Member>& Json::members() const {
  expect_type(*this, Type::kObject);
  return members_;
}

const Json* Json::find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const Member& member : members_)
    if (member.first == key) return &member.second;
  return nullptr;
}

Json* Json::find(const std::string& key) { return const_cast<Json*>(static_cast<const Json&>(*this).find(key)); }

double Json::number_or(const std::string& key, double fallback) const {
  const Json* value = find(key);
  return value && value->is_number() ? value->number_ : fallback;
}

std::string Json::string_or(const std::string& key, const std::string& fallback) const {
  const Json* value = find(key);
  return value && value->is_string() ? value->string_ : fallback;
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

void Json::dump_to(std::string& out, int depth, int expand_depth) const {
  switch (type_) {
    case Type::kNull:
      out += "null";
      return;
    case Type::kBool:
      out += bool_ ? "true" : "false";
      return;
    case Type::kNumber:
      out += number_text(number_);
      return;
    case Type::kString:
      out += json_quote(string_);
      return;
    case Type::kArray:
    case Type::kObject:
      break;
  }
  const bool is_array = type_ == Type::kArray;
  const std::size_t count = is_array ? items_.size() : members_.size();
  const bool expanded = depth < expand_depth && count > 0;
  const std::string inner(expanded ? 2 * (depth + 1) : 0, ' ');
  out += is_array ? '[' : '{';
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += expanded ? "," : ", ";
    if (expanded) out += "\n" + inner;
    if (is_array) {
      items_[i].dump_to(out, depth + 1, expand_depth);
    } else {
      out += json_quote(members_[i].first) + ": ";
      members_[i].second.dump_to(out, depth + 1, expand_depth);
    }
  }
  if (expanded) out += "\n" + std::string(2 * depth, ' ');
  out += is_array ? ']' : '}';
}

std::string Json::dump(int expand_depth) const {
  std::string out;
  dump_to(out, 0, expand_depth);
  return out + "\n";
}

Json Json::parse(const std::string& text, const std::string& source) { return Parser(text, source).document(); }

}  // namespace fluxjac
