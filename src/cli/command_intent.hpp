// fluxjac — what this rank's command line asks for, as the items the ranks of a many-GPU run compare before they
// work (ranks/rank_agreement.hpp; docs/design.md, "Many GPUs", "Errors").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ranks/rank_agreement.hpp"

namespace fluxjac {

/// \brief Applies the selected subcommand's --config file to the options the command line left unset (so that
/// the command runs with them, one process or many), then describes the command. Its items, in this order: the
/// command ("fluxjac run"); every option of the command and its subcommands, given or not, as parsed (a value set
/// by the config file counts as given; an option left unset shows its default); with `with_files`, for each file
/// named by --config, --mesh, --state and --reference, its full path, its size and modification time, its inode
/// (where the ranks can compare it: all on one machine, or the file on a network file system) and, for a mesh, its
/// partition (partition/partition_digest.hpp); where --output, --csv and --json are written (their full paths: ranks
/// in other working directories would write other files); and, when a mesh is a generator spec, the mesh cache
/// folder (--cache, or the default from $XDG_CACHE_HOME or $HOME). Options differ with exit code 3, files with 2.
/// With `with_files`, the files HDF5 reads later (--mesh, --state, --reference) are pinned before they are described
/// (util/input_identity.hpp), so a rank reads the file it described or fails. A config file that cannot be applied,
/// or an input found changed while it is described, makes the intent's failure.
RankIntent read_command_intent(CLI::App& app, bool with_files);

/// \brief The intent of a rank whose command line ended in parsing with a request such as "--help": the command,
/// that request appended ("fluxjac run --help"), and nothing else.
RankIntent request_intent(const CLI::App& app, const std::string& request);

}  // namespace fluxjac
