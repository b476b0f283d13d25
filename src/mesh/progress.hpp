// fluxjac — progress of the mesh pipelines (`fluxjac mesh gen`, `fluxjac mesh dual`).
#pragma once

#include <functional>
#include <string>

namespace fluxjac {

/// \brief Called when a stage starts and at the end ("done"), with the fraction of the whole job done so far,
/// in [0, 1]. May be empty.
using MeshProgress = std::function<void(const std::string& stage, double fraction)>;

/// \brief Reports a stage when there is someone to report to.
inline void report_stage(const MeshProgress& progress, const char* stage, double fraction) {
  if (progress) progress(stage, fraction);
}

}  // namespace fluxjac
