#include "cli/command_intent.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <exception>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "bench/mesh_source.hpp"
#include "cli/config_file.hpp"
#include "partition/partition_digest.hpp"
#include "ranks/communicator.hpp"
#include "util/error.hpp"
#include "util/input_identity.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

namespace fs = std::filesystem;

/// The options of run and bench that name files they read, and those that name files they write.
const std::vector<std::string> kInputOptions{"--config", "--mesh", "--state", "--reference"};
const std::vector<std::string> kOutputOptions{"--output", "--csv", "--json"};

/// The selected subcommands, outermost first, after the app itself.
std::vector<CLI::App*> selected_subcommands(const CLI::App& app) {
  std::vector<CLI::App*> levels;
  for (const CLI::App* level = &app; !level->get_subcommands().empty(); level = levels.back())
    levels.push_back(level->get_subcommands().front());
  return levels;
}

std::string command_text(const CLI::App& app) {
  std::string text = app.get_name();
  for (const CLI::App* level : selected_subcommands(app)) text += " " + level->get_name();
  return text;
}

/// "--reps"; a flag with a negation by all its long names: "--validate/--no-validate".
std::string option_name(const CLI::Option& option) {
  const std::vector<std::string>& long_names = option.get_lnames();
  if (option.get_items_expected_max() == 0 && long_names.size() > 1) {
    std::string names;
    for (const std::string& name : long_names) names += (names.empty() ? "--" : "/--") + name;
    return names;
  }
  if (!long_names.empty()) return "--" + long_names.front();
  if (!option.get_snames().empty()) return "-" + option.get_snames().front();
  return option.get_name(true);
}

/// Values as the command parsed them, each shown unambiguously, comma-separated.
std::string shown_list(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ",") + shown_value(value);
  return text;
}

/// An option's value as parsed: a flag's last setting, an option's values; an option left unset, its default (in
/// the form a given value has, so `--reps 20` agrees with the default 20), or "not given".
std::string option_value(const CLI::Option& option) {
  const std::vector<std::string>& results = option.results();
  if (option.count() > 0 && !results.empty())
    return option.get_items_expected_max() == 0 ? results.back() : shown_list(results);
  std::string fallback = option.get_default_str();
  if (fallback.empty()) return "not given";
  if (option.get_items_expected_max() > 1 && fallback.size() >= 2 && fallback.front() == '[' &&
      fallback.back() == ']') {
    std::vector<std::string> items;
    const std::string inner = fallback.substr(1, fallback.size() - 2);
    for (std::size_t start = 0; start <= inner.size();) {
      const std::size_t comma = std::min(inner.find(',', start), inner.size());
      items.push_back(inner.substr(start, comma - start));
      start = comma + 1;
    }
    return shown_list(items);
  }
  return shown_value(fallback);
}

bool is_generator_spec(const std::string& mesh) {
  std::error_code error;
  return looks_like_mesh_spec(mesh) && !fs::exists(mesh, error);
}

/// The values of the leaf subcommand's option `name`, when it has one and it was given.
std::vector<std::string> given_values(const CLI::App& leaf, const std::string& name) {
  const CLI::Option* option = leaf.get_option_no_throw(name);
  if (!option || option->count() == 0) return {};
  return option->results();
}

std::string modification_text(const struct stat& status) {
  std::tm utc{};
  const std::time_t seconds = status.st_mtim.tv_sec;
  gmtime_r(&seconds, &utc);
  char date[32] = {};
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &utc);
  return fmt::format("{}.{:09d} UTC", date, status.st_mtim.tv_nsec);
}

/// The inode number where every rank can compare it: all ranks on one machine, or a file on a network file system
/// (one file has one inode number on every client). Ranks on several machines with the file on local disks read
/// copies (`cp -p`), each with its own inode; path, size, time and partition are what they can compare.
std::string inode_text(const std::string& path, const struct stat& status) {
  const Communicator& world = Communicator::world();
  if (world.node_size() == world.size() || shared_file_system(path))
    return fmt::to_string(static_cast<unsigned long long>(status.st_ino));
  return "not compared (ranks on several machines, the file on a local file system)";
}

/// Its full path, its size, time and inode, and a mesh's partition: what tells two files apart without reading them.
/// A file that HDF5 reads later (`pinned`) is pinned first (util/input_identity.hpp), and these are that file's: every
/// later open must find it, so ranks that agree here read one file or refuse.
void add_file_items(std::vector<AgreedItem>& items, const std::string& option, const std::string& path, bool mesh,
                    bool pinned) {
  const std::string named = fmt::format("{} {}", option, shown_value(path));
  std::error_code error;
  const fs::path full = fs::canonical(path, error);
  struct stat status {};
  if (error || ::stat(full.c_str(), &status) != 0) {
    // Not there (its reader says so after the ranks agree) or a generator spec: the name alone, compared as given.
    items.push_back({"the file of " + named,
                     fmt::format("no file ({})", error ? error.message() : std::string("stat failed")),
                     ExitCode::kInvalidInput});
    return;
  }
  if (pinned && S_ISREG(status.st_mode))
    if (const std::optional<struct stat> held = pin_input(path)) status = *held;
  items.push_back({"the file of " + named, shown_value(full.string()), ExitCode::kInvalidInput});
  items.push_back(
      {"the size and modification time of " + named,
       fmt::format("{} bytes, modified {}", static_cast<long long>(status.st_size), modification_text(status)),
       ExitCode::kInvalidInput});
  items.push_back({"the inode of " + named, inode_text(full.string(), status), ExitCode::kInvalidInput});
  if (mesh && S_ISREG(status.st_mode))
    items.push_back({"the partition of " + named, partition_digest(full.string()), ExitCode::kInvalidInput});
}

std::string absolute_text(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  return error ? fmt::format("unknown ({})", error.message()) : shown_value(absolute.lexically_normal().string());
}

void add_file_and_place_items(std::vector<AgreedItem>& items, const CLI::App& leaf) {
  for (const std::string& option : kInputOptions)
    for (const std::string& path : given_values(leaf, option))
      if (!path.empty() && !(option == "--mesh" && is_generator_spec(path)))
        add_file_items(items, option, path, option == "--mesh", option != "--config");
  for (const std::string& option : kOutputOptions)
    for (const std::string& path : given_values(leaf, option))
      if (!path.empty() && path != kStandardOutput)
        items.push_back(
            {fmt::format("where {} {} is written", option, shown_value(path)), absolute_text(path), ExitCode::kUsage});
  const std::vector<std::string> meshes = given_values(leaf, "--mesh");
  if (std::any_of(meshes.begin(), meshes.end(), is_generator_spec)) {
    const std::vector<std::string> cache = given_values(leaf, "--cache");
    items.push_back({"the mesh cache folder (--cache, or from $XDG_CACHE_HOME or $HOME)",
                     absolute_text(cache.empty() || cache.front().empty() ? default_mesh_cache() : cache.front()),
                     ExitCode::kUsage});
  }
}

}  // namespace

RankIntent read_command_intent(CLI::App& app, bool with_files) {
  RankIntent intent;
  std::vector<CLI::App*> levels = selected_subcommands(app);
  levels.insert(levels.begin(), &app);
  CLI::App& leaf = *levels.back();
  try {
    apply_config_file(leaf);
  } catch (const Error& error) {
    intent.failure = error.what();
    intent.failure_code = error.code();
    return intent;
  } catch (const std::exception& error) {
    intent.failure = error.what();
    intent.failure_code = ExitCode::kRuntime;
    return intent;
  }
  intent.items.push_back({"the command", command_text(app), ExitCode::kUsage});
  for (const CLI::App* level : levels)
    for (const CLI::Option* option : level->get_options()) {
      if (option == level->get_help_ptr() || option == level->get_help_all_ptr() || option == level->get_version_ptr())
        continue;
      intent.items.push_back({option_name(*option), option_value(*option), ExitCode::kUsage});
    }
  if (!with_files) return intent;
  try {
    add_file_and_place_items(intent.items, leaf);
  } catch (const std::exception& error) {  // an input found changed, or any failure: every rank learns it next
    const Error failure = as_error(error);
    intent.failure = failure.what();
    intent.failure_code = failure.code();
  }
  return intent;
}

RankIntent request_intent(const CLI::App& app, const std::string& request) {
  RankIntent intent;
  intent.items.push_back({"the command", command_text(app) + " " + request, ExitCode::kUsage});
  return intent;
}

}  // namespace fluxjac
