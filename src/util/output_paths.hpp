// fluxjac — what a command may write: never over a file it reads, never one file twice, never over anything
// but a regular file; checked once, before any work, so a mistake costs nothing.
#pragma once

#include <string>
#include <vector>

namespace fluxjac {

/// The name that means standard output for the text outputs (CSV, JSON).
inline constexpr const char* kStandardOutput = "-";

/// A file a command reads, with the option that names it in messages: {"--mesh", "box.h5"}.
struct InputPath {
  std::string option;
  std::string path;  ///< empty: not given
};

/// A file a command writes; text outputs may name standard output ("-").
struct OutputPath {
  std::string option;
  std::string path;  ///< empty: not given
  bool may_be_standard_output = false;
};

/// \brief Where a write to path lands: path with the symbolic links of its last component followed (the folders
/// stay as written, so "sub/../m.h5" still needs "sub"); path itself when it is not a link.
/// Error(kUsage) on a loop of links.
std::string write_target(const std::string& path);

/// \brief Refuses, with Error(kUsage) and one line naming both options and the file, an output that is the same
/// file as an input (same device and inode, whatever the spelling: hard links, symbolic links, "sub/../m.h5") or
/// as another output; an output that exists and is not a regular file (a directory, FIFO or device; "-" is
/// standard output where allowed); and an output whose folder does not exist or cannot be written.
/// Inputs that do not exist are skipped: their reader reports them.
void check_output_paths(const std::vector<InputPath>& inputs, const std::vector<OutputPath>& outputs);

}  // namespace fluxjac
