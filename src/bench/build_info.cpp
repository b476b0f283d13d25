#include "bench/build_info.hpp"

#include "version.hpp"

namespace fluxjac {

const BuildInfo& build_info() {
  static const BuildInfo info = [] {
    BuildInfo b;
    b.version = kVersion;
    b.git_revision = kGitRevision;
    b.cxx_compiler = kCxxCompiler;
    b.cxx_flags = FLUXJAC_CXX_FLAGS;  // both defined by CMakeLists.txt for this file
    b.cuda_compiler = kCudaCompiler;
    b.cuda_flags = kCudaCompiler[0] == ' ' ? "" : FLUXJAC_CUDA_FLAGS;
    // version.hpp leaves a lone space where CMake knows no CUDA compiler.
    if (b.cuda_compiler.find_first_not_of(' ') == std::string::npos) b.cuda_compiler.clear();
    b.build_type = kBuildType;
    b.cuda_architectures = kCudaArchitectures;
    return b;
  }();
  return info;
}

}  // namespace fluxjac
