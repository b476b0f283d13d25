// fluxjac — `fluxjac info FILE.h5`: a readable summary of a mesh, state or Jacobian file.
#pragma once

#include <string>

namespace fluxjac {

/// \brief Reads and validates the file (its root attribute format says which kind it is) and returns a
/// multi-line summary. Mesh/state files: nodes, edges, edges per node, optional datasets, area range and
/// sum, ordering bandwidth (max and mean |L - R|), and density, pressure and Mach ranges of the state.
/// Jacobian files: nodes, off-diagonal blocks, provenance attributes, max |Adiag| and max |Aoff|.
/// Throws Error(kInvalidInput) for files that are not valid fluxjac files.
std::string describe_file(const std::string& path);

}  // namespace fluxjac
