// fluxjac — the meshes a benchmark names: files, or generator specs built on first use and cached.
//
// A generator spec is `kind:n:order[:seed]` (e.g. `mixed:100:rcm`, `tet:40:random:7`): the box mesh of
// `fluxjac mesh gen --kind KIND --n N --order ORDER --seed SEED` (seed 1 when left out). It is written once
// into the cache folder and read from there by every later run that finds the spec recorded in the file and the
// file's content as the generator recorded it (its content digest).
#pragma once

#include <optional>
#include <string>

#include "mesh/generator.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// \brief One mesh of a sweep.
struct MeshSource {
  std::string name;                 ///< as the user gave it
  std::optional<BoxMeshSpec> spec;  ///< set for generator specs
  std::string file;                 ///< the mesh file: the path given, or the spec's file in the cache
  std::string order;                ///< the spec's ordering; empty for files
};

/// \brief The default cache folder: $XDG_CACHE_HOME/fluxjac, else $HOME/.cache/fluxjac, else
/// <temp>/fluxjac-cache.
std::string default_mesh_cache();

/// \brief Whether text has the shape of a generator spec (starts with "tet:", "prism:" or "mixed:").
bool looks_like_mesh_spec(const std::string& text);

/// \brief Parses a generator spec; Error(kUsage) saying the expected form when it is malformed or the
/// generator rejects it (validate_box_mesh_spec).
BoxMeshSpec parse_mesh_spec(const std::string& text);

/// \brief A mesh argument: a generator spec (its cache file under cache_dir) or a file, which must exist
/// (Error(kInvalidInput) otherwise). Nothing is generated yet.
MeshSource resolve_mesh_source(const std::string& text, const std::string& cache_dir);

/// \brief Why the cache file of a generator spec cannot serve it, empty when it can: the file must be a regular
/// file (not a link) whose generator record (read_box_mesh_generator_record) is the spec's, with the spec's node
/// count, and whose arrays have the content digest the generator recorded (stored_mesh_digest, one pass over the
/// file in slices) and the cache recorded when it generated the file (FILE.digest). Empty for a file source.
std::string cached_mesh_mismatch(const MeshSource& source);

/// \brief Generates a spec's mesh into its cache file unless a file that serves it (cached_mesh_mismatch) is already
/// there; one that does not is never used: a note says why, and it is replaced by the spec's mesh. Files are left
/// alone. The write is atomic, so concurrent sweeps and interrupted runs never leave a partial mesh.
void ensure_mesh_file(const MeshSource& source, const Note& note);

}  // namespace fluxjac
