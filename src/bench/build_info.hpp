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
/// The flags are FLUXJAC_CXX_FLAGS / FLUXJAC_CUDA_FLAGS, which CMakeLists.txt defines for build_info.cpp from
/// the build type's flags and the project's own options.
const BuildInfo& build_info();

}  // namespace fluxjac
