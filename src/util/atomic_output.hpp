// fluxjac — all-or-nothing output files: write to a temporary beside the target, rename on success.
#pragma once

#include <string>

namespace fluxjac {

/// \brief Write to temporary_path(), then commit() renames it to the final path in one step (rename(2)
/// within one folder); without commit, the destructor removes the temporary. So no partial or invalid
/// output ever appears under the final name, and an existing file there survives a failed write.
///
///     AtomicOutput output(path);
///     write_everything_to(output.temporary_path());  // may throw
///     output.commit();
class AtomicOutput {
 public:
  /// \brief Prepares "<final_path>.tmp-<pid>"; Error(kUsage) when the target folder does not exist.
  explicit AtomicOutput(std::string final_path);
  /// \brief Removes the temporary unless commit() succeeded (never throws).
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  /// Where to write now.
  const std::string& temporary_path() const { return temporary_path_; }
  /// Where the file appears on commit.
  const std::string& final_path() const { return final_path_; }
  bool committed() const { return committed_; }

  /// \brief Renames the finished temporary over the final path; Error(kRuntime) when that fails.
  void commit();

 private:
  std::string final_path_;
  std::string temporary_path_;
  bool committed_ = false;
};

}  // namespace fluxjac
