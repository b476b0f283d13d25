// fluxjac — what a command may write: never over a file it reads, never one file twice, never over anything
// but a regular file; checked before any work, so a mistake costs nothing, and again just before each output is
// committed, so a link or folder changed while the command runs cannot redirect an output onto an input.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
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

/// \brief Bytes a temporary's name adds to its target's name at most: ".tmp-<pid>-<16 hex digits>" with a pid of up
/// to 10 digits (AtomicOutput).
inline constexpr std::size_t kTemporarySuffixBytes = 32;

/// \brief Where a write to path lands: path with the symbolic links of its last component followed (the folders
/// stay as written, so "sub/../m.h5" still needs "sub"); path itself when it is not a link.
/// Error(kUsage) on a loop of links.
std::string write_target(const std::string& path);

/// \brief An output's final place, resolved once: its folder, canonical (no links, no "..") and held open for the
/// rest of the process, and the file name in that folder, after the links of the name as given were followed; with
/// the inputs it must never replace. AtomicOutput creates its temporary in that folder and renames it to that name
/// (renameat: the folder held open, the name never followed), after confirm().
class OutputTarget {
 public:
  /// A file's identity: the same device and inode are the same file, whatever its names.
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    bool operator==(const Identity& other) const { return device == other.device && inode == other.inode; }
  };
  /// An input as it was when the output was checked.
  struct Input {
    std::string shown;  ///< "--mesh box.h5"
    std::string path;
    Identity identity;
  };

  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;
  ~OutputTarget();

  /// The output as messages name it: "--output J.h5", or the name alone when no option names it.
  const std::string& shown() const { return shown_; }
  /// The name as the user gave it.
  const std::string& given() const { return given_; }
  /// The folder the output lands in, absolute and canonical.
  const std::string& folder() const { return folder_; }
  /// The file name in folder() that the output replaces or creates.
  const std::string& name() const { return name_; }
  /// folder() and a file name in it, as one path.
  std::string path_in_folder(const std::string& file_name) const;
  /// The folder, open (for openat, renameat, fsync).
  int folder_descriptor() const { return folder_descriptor_; }

  /// \brief Refuses, with Error(kRuntime) and one line naming the output, to go on when the name as given no longer
  /// leads to folder()/name() (a link or a folder on the way changed since the check), or when the file there is
  /// now not a regular file, an input (the identity it had at the check or has now) or another checked output.
  /// AtomicOutput calls it when it starts and just before the rename, which then writes nothing.
  void confirm() const;

  /// \brief Resolves an output name (Error(kUsage) naming it, before any work, when it is empty, names a folder, is
  /// too long for its folder together with a temporary's suffix, lies in a folder that does not exist or cannot be
  /// written, or exists and is not a regular file); used by check_output_paths and output_target().
  static std::shared_ptr<OutputTarget> resolve(const OutputPath& output, std::vector<Input> inputs);

 private:
  OutputTarget() = default;
  std::string shown_, given_, folder_, name_;
  int folder_descriptor_ = -1;
  Identity folder_identity_;
  std::vector<Input> inputs_;
};

/// \brief The target the latest check_output_paths resolved for this name, else the name resolved now (checked as
/// OutputTarget::resolve does, with no inputs to compare against).
std::shared_ptr<const OutputTarget> output_target(const std::string& path);

/// \brief Whether check_output_paths lets outputs replace files that exist: false (the default) refuses them; the
/// command line's `--force` sets it for the process (cli/output_names.hpp).
void set_replacing_existing_outputs(bool replace);

/// \brief Refuses, with Error(kInvalidInput) and one line naming the option, the file and `--force`, an output that
/// exists unless set_replacing_existing_outputs(true) (the file is left as it is); and, with Error(kUsage) and one
/// line naming both options and the file, an output that is the same
/// file as an input (same device and inode, whatever the spelling: hard links, symbolic links, "sub/../m.h5") or
/// as another output; an output that exists and is not a regular file (a directory, FIFO or device; "-" is
/// standard output where allowed); an output whose folder does not exist or cannot be written; and a name the
/// folder cannot hold with a temporary's suffix (OutputTarget::resolve). Inputs that do not exist are skipped:
/// their reader reports them. Each output's target is kept (output_target) for AtomicOutput, which confirms it
/// again before it commits.
void check_output_paths(const std::vector<InputPath>& inputs, const std::vector<OutputPath>& outputs);

}  // namespace fluxjac
