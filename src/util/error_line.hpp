// fluxjac — the one place that prints a `fluxjac: error` line (docs/design.md, "Many GPUs", "Errors").
#pragma once

#include <string>

namespace fluxjac {

/// \brief The error line of a message, escaped (printable) and ended by a newline: "fluxjac: error: MESSAGE" for one
/// process (ranks <= 1), "fluxjac: error (rank R of P): MESSAGE" for rank R of a job of P ranks, and "fluxjac: error
/// (rank R of P, QUALIFIER): MESSAGE" with a qualifier.
std::string error_line(const std::string& message, int rank = 0, int ranks = 1, const std::string& qualifier = "");

/// \brief Writes error_line(...) to standard error with one write(2) of the whole line (stdio's buffer flushed
/// first, so that the line follows what was printed before it). Under mpirun every rank's standard error is a pipe
/// of its own that the launcher copies to the terminal as it reads it: a line written in pieces can reach the
/// terminal with another rank's line inside it, a line written at once cannot.
void print_error_line(const std::string& message, int rank = 0, int ranks = 1, const std::string& qualifier = "");

/// \brief Writes text to standard error with as few write(2) calls as the kernel allows (one, for a line of the
/// size of an error line), retrying after a signal; nothing is reported when standard error is closed.
void write_to_stderr(const std::string& text);

}  // namespace fluxjac
