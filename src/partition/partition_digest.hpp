// fluxjac — what the ranks of a many-GPU run compare of a partitioned mesh file before they read it
// (docs/design.md, "Many GPUs", "Errors"): its part count and a checksum of its /partition offsets.
#pragma once

#include <string>

namespace fluxjac {

/// \brief A short text that differs between two files whose /partition differs in its part count or any of its
/// offsets (node, edge, ghost and halo-edge offsets), read from those attributes and datasets alone:
/// "2 parts, offsets checksum 5f0e1c2a9b3d4e67", "not partitioned", or "not readable as a partitioned mesh: WHY".
/// Throws only InputChanged (util/input_identity.hpp), for a pinned file found replaced: the readers report a bad
/// file in full, after the ranks have agreed that they all see the same one.
std::string partition_digest(const std::string& path);

}  // namespace fluxjac
