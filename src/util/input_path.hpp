// fluxjac — what an input path the user gave names, asked once for every reader (HDF5 files, mesh specs), so that
// a path the system cannot resolve is the user's input to fix (exit code 2), never a machine failure.
#pragma once

#include <string>

namespace fluxjac {

/// What an input path names, following symbolic links.
enum class InputPathKind { kMissing, kFile, kDirectory, kOther };

/// \brief What path names: kMissing when nothing is there (a dangling link included); Error(kInvalidInput)
/// "PATH: REASON" when the system cannot tell (a loop of symbolic links, a name too long, a folder on the way that
/// cannot be searched).
InputPathKind input_path_kind(const std::string& path);

}  // namespace fluxjac
