// fluxjac — all-or-nothing output files: write to a temporary beside the target, rename on success.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "util/output_paths.hpp"

namespace fluxjac {

/// \brief Write to temporary_path(), then commit() flushes it to the disk and renames it to the target in one
/// step (rename(2) within one folder); without commit, the destructor removes the temporary, and so does
/// SIGINT, SIGTERM or SIGHUP while it exists. A SIGCONT while it exists delays the commit by a grace of 2.5 s: mpirun
/// ends a job with SIGCONT, then SIGTERM a second later, and a signalled job must not replace the file it was
/// writing (docs/design.md, "Errors"). So no partial or invalid output ever appears under the final
/// name, and an existing file there survives a failed write. A final path that is a symbolic link is written
/// through: the link stays and its target is replaced (the temporary lies beside the target). The target is the
/// one check_output_paths resolved for the name (output_target), confirmed when the output starts and again just
/// before the rename, which goes into the folder held open since the check: a link or folder changed while the
/// command runs ends it with Error(kRuntime) instead of redirecting the output.
///
///     AtomicOutput output(path);
///     write_everything_to(output.temporary_path());  // may throw
///     output.commit();
class AtomicOutput {
 public:
  /// \brief Creates an empty "<target>.tmp-<pid>-<random>" (a name no other process, here or on another node
  /// sharing the folder, will pick); Error(kUsage) for a name OutputTarget::resolve refuses, Error(kRuntime) when
  /// the target changed since its check (OutputTarget::confirm) or the temporary cannot be created. `announce`, when
  /// given, is called with the temporary's path after its name is chosen and before the file exists (write_in_turn
  /// has every rank cover it first, RemovedOnSignal); the name is then one that does not exist, and a file appearing
  /// under it meanwhile is an error rather than a reason to pick another.
  explicit AtomicOutput(std::string final_path,
                        const std::function<void(const std::string& temporary)>& announce = nullptr);
  /// \brief Removes the temporary unless commit() succeeded (never throws).
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  /// Where to write now (an absolute path in the target's folder).
  const std::string& temporary_path() const { return temporary_path_; }
  /// Where the file appears on commit, as the caller named it.
  const std::string& final_path() const { return final_path_; }
  bool committed() const { return committed_; }

  /// \brief Flushes the temporary to the disk (fsync), confirms the target (OutputTarget::confirm), gives the
  /// temporary the mode of the file it replaces, and renames it over the target; Error(kRuntime) naming the output
  /// when any step fails (the temporary is then removed by the destructor).
  void commit();

 private:
  std::string final_path_;
  std::shared_ptr<const OutputTarget> target_;
  std::string temporary_name_;  ///< in the target's folder
  std::string temporary_path_;
  int registry_slot_ = -1;
  unsigned continued_at_start_ = 0;  ///< SIGCONTs received before the temporary existed
  bool committed_ = false;
};

/// \brief While alive, SIGINT, SIGTERM or SIGHUP removes `path`, a temporary another process owns: each rank of
/// write_in_turn (ranks/write_in_turn.hpp) covers rank 0's temporary, so that whichever rank mpirun's signals reach
/// first removes it, and a rank 0 ended by SIGKILL leaves none behind. The destructor leaves the file alone.
class RemovedOnSignal {
 public:
  explicit RemovedOnSignal(const std::string& path);
  ~RemovedOnSignal();
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

 private:
  int slot_;
};

/// \brief Removes the temporaries of every AtomicOutput alive now; async-signal-safe. For exits that skip
/// destructors (a library calling exit(), a fatal signal): no temporary outlives the process.
void remove_live_temporaries() noexcept;

/// \brief Writes text atomically to path (checking every write, the flush to disk and the close), or to
/// standard output when path is "-"; Error(kRuntime) naming the file and the system's reason on any failure.
void write_text_output(const std::string& path, const std::string& text);

}  // namespace fluxjac
