// fluxjac — what built this executable: version, git revision, compilers and their flags.
#pragma once

#include <string>

namespace fluxjac {

/// \brief Build provenance recorded in every result file.
struct BuildInfo {
  std::string version, git_revision;
  std::string cxx_compiler, cxx_flags;    ///< e.g. "GNU 12.2.0", "-O3 -DNDEBUG ..."
  std::string cuda_compiler, cuda_flags;  ///< empty compiler in CPU-only builds
  std::string build_type, cuda_architectures;
};

/// \brief The build of the running executable.
///
/// The flags come from FLUXJAC_CXX_FLAGS / FLUXJAC_CUDA_FLAGS when the build defines them for
/// build_info.cpp; otherwise cxx_flags lists what the compiler's predefined macros reveal (optimization,
/// NDEBUG, OpenMP, fast-math, vector ISA), marked "(from predefined macros)".
const BuildInfo& build_info();

}  // namespace fluxjac
