// fluxjac — the CUDA toolkit's libraries that the GPU solve calls (cuBLAS, cuSPARSE), opened on first use rather than
// linked: loading one takes some 200 MB of memory at start-up, which every other command would pay.
#pragma once

#include <dlfcn.h>

#include "util/error.hpp"

#define FLUXJAC_STRINGIFY_TEXT(x) #x
/// A macro's value as a string literal: "libcublas.so." FLUXJAC_STRINGIFY(CUBLAS_VER_MAJOR).
#define FLUXJAC_STRINGIFY(x) FLUXJAC_STRINGIFY_TEXT(x)

namespace fluxjac {

/// \brief One library of the toolkit, opened when constructed and never closed (its functions stay in use until the
/// process ends); a struct of function pointers declared with decltype(&name) binds each entry point by name.
class ToolkitLibrary {
 public:
  /// Error(kRuntime) naming the library and what needs it when `file` cannot be opened.
  ToolkitLibrary(const char* file, const char* library_name, const char* needed_by) : file_(file) {
    handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      fail(ExitCode::kRuntime, "{} needs {} ({}, part of the CUDA toolkit): {}", needed_by, library_name, file,
           dlerror());
  }

  /// Points `function` at the library's entry point `name`; Error(kRuntime) when the library has none.
  template <class Function>
  void bind(Function*& function, const char* name) const {
    function = reinterpret_cast<Function*>(dlsym(handle_, name));
    if (!function) fail(ExitCode::kRuntime, "{}: no {}", file_, name);
  }

 private:
  const char* file_;
  void* handle_ = nullptr;
};

}  // namespace fluxjac
