#include "bench/mesh_source.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mesh/mesh_digest.hpp"
#include "mesh/mesh_io.hpp"
#include "util/atomic_output.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/input_path.hpp"
#include "util/named_enum.hpp"
#include "util/nearest_name.hpp"
#include "util/note.hpp"
#include "util/text.hpp"
#include "version.hpp"

namespace fluxjac {
namespace {

/// The form of a generator spec, for messages.
std::string spec_form() {
  return fmt::format("kind:n:order[:seed] with kind {}, n hexahedra per direction, order {} (e.g. mixed:100:rcm)",
                     name_list<MeshKind>(), name_list<NodeOrdering>());
}

std::vector<std::string> split_fields(const std::string& text) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    fields.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) return fields;
    start = colon + 1;
  }
}

/// A whole field as a non-negative integer, or nullopt.
std::optional<unsigned long long> parse_count(const std::string& field) {
  if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos || field.size() > 19)
    return std::nullopt;
  return std::strtoull(field.c_str(), nullptr, 10);
}

/// The cache file of a spec; the version in the folder name keeps meshes of other generator versions apart.
std::string cache_file(const BoxMeshSpec& spec, const std::string& cache_dir) {
  const std::filesystem::path folder = std::filesystem::path(cache_dir) / fmt::format("meshes-v{}", kVersion);
  return (folder / fmt::format("{}-{}-{}-seed{}.h5", to_string(spec.kind), spec.n, to_string(spec.order), spec.seed))
      .string();
}

/// The cache's own record of what it generated: the content digest of the file it wrote, beside it. A file in its
/// place that records a valid digest of other content (another spec's mesh given this spec's record) differs from it.
std::string cache_digest_file(const std::string& mesh_file) { return mesh_file + ".digest"; }

std::optional<std::string> read_cache_digest(const std::string& mesh_file) {
  std::ifstream in(cache_digest_file(mesh_file));
  std::string text;
  if (!(in >> text)) return std::nullopt;
  return text;
}

}  // namespace

std::string default_mesh_cache() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (std::filesystem::path(xdg) / "fluxjac").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "fluxjac").string();
  return (std::filesystem::temp_directory_path() / "fluxjac-cache").string();
}

bool looks_like_mesh_spec(const std::string& text) {
  const std::size_t colon = text.find(':');
  return colon != std::string::npos && find_named<MeshKind>(text.substr(0, colon));
}

BoxMeshSpec parse_mesh_spec(const std::string& text) {
  const std::vector<std::string> fields = split_fields(text);
  if (fields.size() < 3 || fields.size() > 4) fail(ExitCode::kUsage, "mesh spec '{}': expected {}", text, spec_form());
  BoxMeshSpec spec;
  try {
    spec.kind = parse_mesh_kind(fields[0]);
    spec.order = parse_node_ordering(fields[2]);
  } catch (const Error& error) {
    fail(ExitCode::kUsage, "mesh spec '{}': {}; expected {}", text, error.what(), spec_form());
  }
  const std::string& n_text = fields[1];
  if (n_text.find_first_not_of("0123456789") != std::string::npos || n_text.find_first_not_of('0') == std::string::npos)
    fail(ExitCode::kUsage, "mesh spec '{}': n '{}' is not a positive whole number", text, n_text);
  const auto n = parse_count(n_text.substr(n_text.find_first_not_of('0')));  // nullopt: more than 19 digits
  if (!n || *n > static_cast<unsigned long long>(largest_box_mesh_n()))
    fail(ExitCode::kUsage,
         "mesh spec '{}': n {} is too large: the generator takes n up to {} ((n+1)^3 nodes, 32-bit node ids)", text,
         n_text, largest_box_mesh_n());
  spec.n = static_cast<int>(*n);
  if (fields.size() == 4) {
    const auto seed = parse_count(fields[3]);
    if (!seed) fail(ExitCode::kUsage, "mesh spec '{}': seed '{}' is not a whole number", text, fields[3]);
    spec.seed = *seed;
  }
  validate_box_mesh_spec(spec);
  return spec;
}

MeshSource resolve_mesh_source(const std::string& text, const std::string& cache_dir) {
  MeshSource source;
  source.name = text;
  const InputPathKind kind = input_path_kind(text);
  if (looks_like_mesh_spec(text) && kind == InputPathKind::kMissing) {
    source.spec = parse_mesh_spec(text);
    source.file = cache_file(*source.spec, cache_dir);
    source.order = to_string(source.spec->order);
    return source;
  }
  // A missing input file is invalid input (exit 2) in every subcommand, as when read_edge_mesh finds none. A name of
  // the spec's shape with a misspelled kind gets the nearest kind.
  if (kind == InputPathKind::kMissing) {
    const std::size_t colon = text.find(':');
    std::vector<std::string> kinds;
    for (const NamedValue<MeshKind>& named : names_of(MeshKind{})) kinds.emplace_back(named.name);
    const std::string hint = colon == std::string::npos ? std::string() : did_you_mean(text.substr(0, colon), kinds);
    fail(ExitCode::kInvalidInput,
         "{}: file not found (nor a generator spec kind:n:order[:seed] such as mixed:20:rcm){}{}", text,
         hint.empty() ? "" : ": kind '" + text.substr(0, colon) + "' is not one", hint);
  }
  if (kind != InputPathKind::kFile) fail(ExitCode::kInvalidInput, "{}: not a file", text);
  source.file = text;
  return source;
}

std::string cached_mesh_mismatch(const MeshSource& source) {
  if (!source.spec) return {};
  const std::filesystem::file_status status = std::filesystem::symlink_status(source.file);
  if (std::filesystem::is_symlink(status)) return "is a symbolic link (the cache holds only the files it writes)";
  if (!std::filesystem::is_regular_file(status)) return "is not a regular file";
  const std::string expected = box_mesh_generator_record(*source.spec);
  try {
    const std::optional<std::string> record = read_box_mesh_generator_record(source.file);
    if (!record) return fmt::format("records no generator spec (expected '{}')", expected);
    if (*record != expected) return fmt::format("records '{}', not '{}'", quoted_file_text(*record), expected);
    const h5::File file = h5::File::open(source.file);
    const std::int64_t nodes_per_side = source.spec->n + 1;
    const std::int64_t expected_nodes = nodes_per_side * nodes_per_side * nodes_per_side;
    const std::optional<std::int64_t> nodes = h5::read_integer_attribute(file, edge_mesh_paths::kMeshGroup, "n_nodes");
    if (nodes != expected_nodes)
      return fmt::format("has {} nodes where the spec gives {}", nodes ? std::to_string(*nodes) : "no count of",
                         expected_nodes);
    // The record and the count say what the file claims to be; the digest of what it stores says whether it is what
    // the generator wrote. A file without a digest cannot tell, so it is not used either: a file that dropped the
    // attribute would otherwise pass with any content.
    const std::optional<std::string> recorded = read_generated_mesh_digest(file);
    if (!recorded) return "records no content digest (written by an older fluxjac, or not by the generator)";
    const std::string stored = digest_text(stored_mesh_digest(file));
    if (*recorded != stored)
      return fmt::format("stores other content than the generator wrote (content digest {}, recorded {})", stored,
                         quoted_file_text(*recorded));
    const std::optional<std::string> generated = read_cache_digest(source.file);
    if (!generated)
      return fmt::format("has no record of the cache's own ({} is missing: not generated by this cache)",
                         cache_digest_file(source.file));
    if (*generated != stored)
      return fmt::format("stores other content than the cache generated there (content digest {}, the cache's {})",
                         stored, quoted_file_text(*generated));
  } catch (const Error& error) {
    return fmt::format("cannot be read ({})", error.what());
  }
  return {};
}

void ensure_mesh_file(const MeshSource& source, const Note& note) {
  if (!source.spec) return;
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(source.file, error))) {
    const auto checked = std::chrono::steady_clock::now();
    const std::string mismatch = cached_mesh_mismatch(source);
    if (mismatch.empty()) {
      say(note, fmt::format("mesh {}: cached {} (content checked, {:.2f} s)", source.name, source.file,
                            seconds_since(checked)));
      return;
    }
    // Never used: the entry goes (a link goes, not its target) and the spec's mesh is generated again.
    say(note, fmt::format("mesh {}: the cached {} {}: generating it again", source.name, source.file, mismatch));
    if (!std::filesystem::remove(source.file, error) && error)
      fail(ExitCode::kUsage, "mesh cache: {} {} and cannot be removed: {} (choose another folder with --cache)",
           source.file, mismatch, error.message());
  }
  std::filesystem::remove(cache_digest_file(source.file), error);  // a record without its mesh describes nothing
  std::filesystem::create_directories(std::filesystem::path(source.file).parent_path(), error);
  if (error)
    fail(ExitCode::kUsage, "mesh cache: cannot create {}: {} (choose another folder with --cache)",
         std::filesystem::path(source.file).parent_path().string(), error.message());
  say(note, fmt::format("mesh {}: generating {}", source.name, source.file));
  const auto start = std::chrono::steady_clock::now();
  const GeneratedMesh generated = generate_box_mesh(*source.spec);
  write_generated_mesh(source.file, generated, *source.spec, source.name);
  {
    const h5::File file = h5::File::open(source.file);
    const std::optional<std::string> digest = read_generated_mesh_digest(file);
    if (!digest) fail(ExitCode::kRuntime, "mesh cache: {} was written without its content digest", source.file);
    write_text_output(cache_digest_file(source.file), *digest + "\n");
  }
  say(note, fmt::format("mesh {}: {} nodes, {} edges generated ({:.1f} s)", source.name, generated.mesh.n_nodes,
                        generated.mesh.n_edges(), seconds_since(start)));
}

}  // namespace fluxjac
