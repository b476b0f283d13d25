#include "cli/config_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/mesh_source.hpp"
#include "cli/commands.hpp"
#include "util/error.hpp"
#include "util/input_path.hpp"
#include "util/nearest_name.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

/// Reads one config file's text from start to end, keeping the line number for every message.
class ConfigReader {
 public:
  ConfigReader(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}

  std::vector<ConfigEntry> entries() {
    std::vector<ConfigEntry> entries;
    std::map<std::string, int> first_line;
    while (true) {
      skip_blank_and_comments();
      if (at_end()) break;
      if (peek() == '[')
        error("tables ([...]) are not supported: write `key = value` lines whose keys are the long options");
      ConfigEntry entry;
      entry.line = line_;
      entry.key = read_key();
      skip_spaces();
      if (peek() != '=') error("expected '=' after the key '{}'", entry.key);
      ++pos_;
      skip_spaces();
      if (at_line_end()) error("the key '{}' has no value", entry.key);
      if (peek() == '[') {
        entry.is_list = true;
        entry.values = read_array();
      } else {
        entry.values.push_back(read_value());
      }
      expect_line_end();
      const auto [previous, inserted] = first_line.emplace(entry.key, entry.line);
      if (!inserted) error_at(entry.line, "the key '{}' is set twice (first on line {})", entry.key, previous->second);
      entries.push_back(std::move(entry));
    }
    return entries;
  }

 private:
  template <class... Args>
  [[noreturn]] void error_at(int line, fmt::format_string<Args...> format, Args&&... args) const {
    fail(ExitCode::kUsage, "{}:{}: {}", path_, line, fmt::format(format, std::forward<Args>(args)...));
  }
  template <class... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    error_at(line_, format, std::forward<Args>(args)...);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool at_line_end() const {
    return at_end() || peek() == '\n' || peek() == '#' || text_.compare(pos_, 2, "\r\n") == 0;
  }

  void skip_spaces() {
    while (!at_end() && (peek() == ' ' || peek() == '\t')) ++pos_;
  }
  void skip_comment() {
    if (peek() == '#')
      while (!at_end() && peek() != '\n') ++pos_;
  }
  /// Past one line end ("\n" or "\r\n"); false if there is none here.
  bool skip_newline() {
    if (text_.compare(pos_, 2, "\r\n") == 0) ++pos_;
    if (peek() != '\n') return false;
    ++pos_;
    ++line_;
    return true;
  }
  void skip_blank_and_comments() {
    do {
      skip_spaces();
      skip_comment();
    } while (skip_newline());
  }
  void expect_line_end() {
    skip_spaces();
    skip_comment();
    if (!at_end() && !skip_newline()) error("unexpected '{}' after the value (one `key = value` per line)", peek());
  }

  std::string read_key() {
    const std::size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '-' || peek() == '_')) ++pos_;
    if (pos_ == start) error("expected a key (letters, digits, '-' and '_'), found '{}'", peek());
    if (peek() == '.') error("dotted keys are not supported: the keys are the long option names");
    return text_.substr(start, pos_ - start);
  }

  std::vector<std::string> read_array() {
    const int open_line = line_;
    ++pos_;  // '['
    std::vector<std::string> values;
    while (true) {
      skip_blank_and_comments();
      if (at_end()) error_at(open_line, "unterminated array (no closing ']')");
      if (peek() == ']') break;
      if (peek() == '[') error("nested arrays are not supported");
      values.push_back(read_value());
      skip_blank_and_comments();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ']') {
        if (at_end()) error_at(open_line, "unterminated array (no closing ']')");
        error("expected ',' or ']' in the array, found '{}'", peek());
      }
    }
    ++pos_;  // ']'
    return values;
  }

  std::string read_value() {
    if (peek() == '"' || peek() == '\'') return read_string();
    if (peek() == '{') error("inline tables are not supported");
    const std::size_t start = pos_;
    while (!at_end() && !std::isspace(static_cast<unsigned char>(peek())) && peek() != ',' && peek() != ']' &&
           peek() != '#')
      ++pos_;
    const std::string word = text_.substr(start, pos_ - start);
    if (word == "true" || word == "false") return word;
    // TOML integers and floats (underscores between digits), and inf / nan, which the options then refuse.
    static const std::regex number(R"([+-]?(\d(_?\d)*)(\.\d(_?\d)*)?([eE][+-]?\d(_?\d)*)?|[+-]?(inf|nan))");
    if (std::regex_match(word, number)) {
      std::string digits = word;
      digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
      return digits;
    }
    if (word.empty()) error("expected a value, found '{}'", peek());
    error("'{}' is not a value: write strings in quotes (\"{}\"), numbers, true or false", word, word);
  }

  std::string read_string() {
    const char quote = peek();
    if (text_.compare(pos_, 3, std::string(3, quote)) == 0) error("multi-line strings are not supported");
    ++pos_;
    std::string value;
    while (true) {
      if (at_end() || peek() == '\n' || peek() == '\r')
        error("unterminated string (no closing {} on this line)", quote);
      const char c = text_[pos_++];
      if (c == quote) return value;
      if (c == '\\' && quote == '"') {
        value += read_escape();
      } else {
        value += c;
      }
    }
  }

  std::string read_escape() {
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"':
        return "\"";
      case '\\':
        return "\\";
      case 'b':
        return "\b";
      case 't':
        return "\t";
      case 'n':
        return "\n";
      case 'f':
        return "\f";
      case 'r':
        return "\r";
      default:
        break;
    }
    error("unsupported escape '\\{}' in a string (use \\\\ for a backslash, or a 'literal string')", c);
  }

  std::string path_;
  std::string text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<ConfigEntry> read_config_file(const std::string& path) {
  switch (input_path_kind(path)) {
    case InputPathKind::kFile:
      break;
    case InputPathKind::kMissing:
      fail(ExitCode::kUsage, "{}: config file not found", path);
    case InputPathKind::kDirectory:
      fail(ExitCode::kUsage, "{}: is a folder, not a config file", path);
    case InputPathKind::kOther:
      fail(ExitCode::kUsage, "{}: is not a regular file (a FIFO, device or socket), expected a TOML config file", path);
  }
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.good() && !in.eof()) fail(ExitCode::kUsage, "{}: cannot read the config file", path);
  return ConfigReader(path, std::move(text)).entries();
}

void add_config_option(CLI::App& subcommand) {
  subcommand.add_option("--config",
                        "TOML file of option values (keys are the long option names, e.g. "
                        "mesh = \"box.h5\"); options given on the command line override it");
}

std::string config_file_path(const CLI::App& subcommand) {
  const CLI::Option* config = subcommand.get_option_no_throw("--config");
  return config && config->count() > 0 ? config->as<std::string>() : std::string();
}

namespace {

/// The option named `name` (with its dashes) in app or in one of its subcommands; nullptr where none is.
const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  if (const CLI::Option* option = app.get_option_no_throw(name)) return option;
  for (const CLI::App* subcommand : app.get_subcommands([](const CLI::App*) { return true; }))
    if (const CLI::Option* option = find_option(*subcommand, name)) return option;
  return nullptr;
}

/// Whether option's values name files or folders (a mesh, a state, a reference, an output, the mesh cache).
bool names_paths(const CLI::Option& option) {
  for (const std::string& name : option.get_lnames())
    for (const char* path_option : {"mesh", "state", "reference", "output", "json", "csv", "cache"})
      if (name == path_option) return true;
  return false;
}

/// A path a config file gives, from the config file's folder (as CMake presets resolve theirs): unchanged when it is
/// absolute, standard output ("-") or a generator spec, or when the config file is in the current folder.
std::string from_config_folder(const std::string& config, const std::string& value) {
  const std::filesystem::path folder = std::filesystem::path(config).parent_path();
  if (value.empty() || value == kStandardOutput || folder.empty() || std::filesystem::path(value).is_absolute() ||
      looks_like_mesh_spec(value))
    return value;
  return (folder / value).lexically_normal().string();
}

/// What an option's values must be, for the message about one that is not: "a whole number", "a number".
std::string wanted_kind(const CLI::Option* option) {
  const std::string type = option ? option->get_type_name() : std::string();
  if (type.rfind("UINT", 0) == 0 || type.rfind("INT", 0) == 0) return "a whole number";
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  return "a value of another kind";
}

}  // namespace

std::string plain_conversion_message(const CLI::App& app, const std::string& message) {
  static const std::regex kCouldNotConvert(R"(Could not convert: (--[A-Za-z0-9-]+) = (.*))");
  std::smatch match;
  if (!std::regex_match(message, match, kCouldNotConvert)) return message;
  return fmt::format("{} {}: not {}", match[1].str(), match[2].str(), wanted_kind(find_option(app, match[1].str())));
}

void apply_config_file(CLI::App& subcommand) {
  const std::string path = config_file_path(subcommand);
  if (path.empty()) return;
  std::map<const CLI::Option*, const ConfigEntry*> set_by;
  const std::vector<ConfigEntry> entries = read_config_file(path);
  for (const ConfigEntry& entry : entries) {
    std::string key = entry.key;  // TOML style edges_per_block and option style edges-per-block both work
    std::replace(key.begin(), key.end(), '_', '-');
    CLI::Option* option = subcommand.get_option_no_throw("--" + key);
    if (!option || key == "config") {
      std::vector<std::string> keys;
      for (const std::string& name : option_names(subcommand))
        if (name.rfind("--", 0) == 0 && name != "--config" && name != "--help") keys.push_back(name.substr(2));
      fail(ExitCode::kUsage, "{}:{}: unknown key '{}'{} (keys are the long options of 'fluxjac {}')", path, entry.line,
           entry.key, did_you_mean(key, keys), subcommand.get_name());
    }
    const auto [other, first] = set_by.emplace(option, &entry);
    if (!first)
      fail(ExitCode::kUsage, "{}:{}: '{}' sets the same option as '{}' on line {}", path, entry.line, entry.key,
           other->second->key, other->second->line);

    const int most = option->get_items_expected_max();
    std::vector<std::string> inputs = entry.values;
    if (most == 0) {
      // A flag: its value says whether the flag's own name holds, so `no-validate = true` turns validation off.
      if (inputs.size() != 1 || (inputs[0] != "true" && inputs[0] != "false"))
        fail(ExitCode::kUsage, "{}:{}: '{}' is a flag: give true or false", path, entry.line, entry.key);
      inputs[0] = option->get_flag_value(key, inputs[0]);
    } else if (most == 1 && (entry.is_list || inputs.size() != 1)) {
      fail(ExitCode::kUsage, "{}:{}: '{}' takes one value, not a list", path, entry.line, entry.key);
    }
    if (most != 0 && names_paths(*option))
      for (std::string& input : inputs) input = from_config_folder(path, input);
    if (option->count() > 0) continue;  // the command line wins
    try {
      option->add_result(inputs);
      option->run_callback();
    } catch (const CLI::ConversionError&) {  // "reps = three: not a whole number"
      fail(ExitCode::kUsage, "{}:{}: {} = {}: not {}", path, entry.line, entry.key, fmt::join(entry.values, ", "),
           wanted_kind(option));
    } catch (const CLI::Error& e) {
      fail(ExitCode::kUsage, "{}:{}: key '{}': {}", path, entry.line, entry.key, e.what());
    }
  }
}

}  // namespace fluxjac
