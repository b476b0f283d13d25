#include "util/error_line.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

#include "util/text.hpp"

namespace fluxjac {

std::string error_line(const std::string& message, int rank, int ranks, const std::string& qualifier) {
  const std::string text = printable(message);  // one line, whatever names and values it quotes
  if (ranks <= 1) return fmt::format("fluxjac: error: {}\n", text);
  if (qualifier.empty()) return fmt::format("fluxjac: error (rank {} of {}): {}\n", rank, ranks, text);
  return fmt::format("fluxjac: error (rank {} of {}, {}): {}\n", rank, ranks, printable(qualifier), text);
}

void print_error_line(const std::string& message, int rank, int ranks, const std::string& qualifier) {
  write_to_stderr(error_line(message, rank, ranks, qualifier));
}

void write_to_stderr(const std::string& text) {
  std::fflush(stderr);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t written = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    done += static_cast<std::size_t>(written);
  }
}

}  // namespace fluxjac
