// fluxjac — progress lines: the Note that receives them, and the seconds a step took.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace fluxjac {

/// Receives one progress line (without newline); commands print them on stderr. May be empty.
using Note = std::function<void(const std::string& line)>;

/// \brief Passes line to note when there is one.
inline void say(const Note& note, const std::string& line) {
  if (note) note(line);
}

/// \brief Seconds since start (a steady clock), for progress lines and step timings.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace fluxjac
