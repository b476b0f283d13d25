// fluxjac — the input files the ranks of a many-GPU run agreed on, held so that every later read can prove it reads
// that very file (docs/design.md, "Many GPUs", "Errors"). Before any work the ranks compare each input's path, size,
// modification time and inode (cli/command_intent.hpp), yet every reader opens the file again by its path, later: a
// file renamed over or rewritten in between would give ranks, or two reads of one rank, different inputs. So the
// identity a rank publishes is taken from a descriptor that stays open for the rest of the process (its inode
// cannot be reused while open), and File::open (util/hdf5.hpp) compares the file it opened, through HDF5's own
// descriptor of it, with that pinned file. One process pins nothing.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

#include "util/error.hpp"

namespace fluxjac {

/// \brief The error of an input found changed (require_pinned_input), exit code 2. A reader that turns its own
/// failures into a description (partition/partition_digest.hpp) lets it through.
class InputChanged : public Error {
 public:
  using Error::Error;
};

/// \brief Opens the regular file at path read-only, keeps it open for the rest of the process and pins path to it
/// (path as given, made absolute, and its canonical form). Returns the status of that descriptor: the identity to
/// publish. A path pinned before keeps its first file, whose status is returned. nullopt, and nothing pinned, where
/// path names no regular file or cannot be opened (its reader says why later).
std::optional<struct stat> pin_input(const std::string& path);

/// \brief InputChanged "NAME: the file changed while the ranks started ..." when path is pinned and the file
/// open at descriptor is not the pinned file as it was (another file, or the same one with another size,
/// modification time or change time), or when descriptor is negative; nothing when path is not pinned.
void require_pinned_input(const std::string& path, int descriptor, const std::string& name);

/// \brief The network or cluster file system path lies on ("nfs", "lustre", "gpfs", ...), whose inode numbers are
/// the same on every client; nullopt for a local one (ext4, XFS, tmpfs, ...) or where statfs fails.
std::optional<std::string> shared_file_system(const std::string& path);

}  // namespace fluxjac
