// fluxjac — ranks agree before they work (docs/design.md, "Many GPUs", "Errors"). Under mpirun every rank parses its
// own command line, and nothing but convention makes the lines the same: an MPMD job (`mpirun ... : ...`), a wrapper
// script or another working directory gives ranks other options or other files, and then they would wait for each
// other in different collectives for ever, or assemble pieces of different meshes into one Jacobian. So, before
// any other collective, each rank describes what it is about to do as a list of items (the command, every option,
// every input file's identity) and the ranks compare the lists; any difference is one error on every rank.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ranks/communicator.hpp"
#include "util/error.hpp"

namespace fluxjac {

/// \brief One thing every rank must have alike.
struct AgreedItem {
  std::string subject;               ///< as messages name it: "--reps", "the command", "the file of --mesh m.h5"
  std::string value;                 ///< as messages show it (shown_value); compared byte for byte
  ExitCode code = ExitCode::kUsage;  ///< the exit code when ranks differ: kUsage (options), kInvalidInput (files)
  bool operator==(const AgreedItem& other) const {
    return subject == other.subject && value == other.value && code == other.code;
  }
};

/// \brief What one rank is about to do: its items, listed in the same order on every rank that runs the same
/// command; or the error that stopped it before (a command line it cannot parse, a config file it cannot read).
struct RankIntent {
  std::vector<AgreedItem> items;
  std::string failure;  ///< empty: none
  ExitCode failure_code = ExitCode::kUsage;
};

/// \brief value as a message shows it, unambiguously: as it is, or in double quotes with \", \\ and \xNN escapes
/// when it is empty, has a comma, a quote, a backslash, a control character (C1 included), a byte of no valid UTF-8
/// sequence or spaces at either end. Two values differ exactly when their shown forms do, and a control character
/// never reaches the terminal raw.
std::string shown_value(const std::string& value);

/// \brief The bytes of an intent, and back (Error(kRuntime) on bytes that are not an encoded intent).
std::string encode_intent(const RankIntent& intent);
RankIntent decode_intent(const std::string& bytes);

/// \brief The error rank `this_rank` reports for the intents of every rank (in rank order), or nullopt when they
/// agree. A rank that failed reports its own failure; the others, the lowest failing rank's message with "(on rank
/// R)" and its exit code. Otherwise the first item (in list order) that not every rank has alike is named with each
/// rank's value, grouped: "ranks disagree on --reps: ranks 0, 2 have 5, rank 1 has 3", with that item's exit code.
std::optional<Error> disagreement(const std::vector<RankIntent>& intents, int this_rank);

/// \brief Gathers every rank's intent (one MPI_Allgatherv of the encoded lists; this must be the first collective
/// of a command) and throws disagreement() on every rank when they differ. One rank: throws its failure, if any.
void agree_on_intent(const Communicator& comm, const RankIntent& mine);

}  // namespace fluxjac
