// fluxjac — "did you mean": the valid name nearest to a misspelled one, for the messages about unknown
// subcommands, options, config keys and variants.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fluxjac {

/// \brief The number of single-letter edits (insertion, deletion, substitution, swap of two neighbours) that
/// turn a into b, ignoring case.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// \brief The candidate nearest to `name` (the first of equally near ones) when it is near enough to be what was
/// meant: at most one edit per three letters (leading dashes not counted), and at least one; empty otherwise.
std::string nearest_name(const std::string& name, const std::vector<std::string>& candidates);

/// \brief "; did you mean 'NAME'?" for nearest_name, or "" where no candidate is near.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace fluxjac
