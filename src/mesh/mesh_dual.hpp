// fluxjac — `fluxjac mesh dual`: the edge mesh of an element mesh (scripts/import_mesh.py writes those) with its
// boundary flags, a node ordering and a state, checked on the way: cell validity (dual_metrics.hpp) and face
// topology (element_boundary.hpp). The box generator (generator.hpp) is the other way to an edge mesh.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mesh/dual_metrics.hpp"
#include "mesh/edge_mesh.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/element_io.hpp"
#include "mesh/freestream.hpp"
#include "mesh/ordering.hpp"
#include "mesh/progress.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// Where the state of the edge mesh comes from.
enum class DualState { kFreestream, kInput, kNone };
inline constexpr NamedValue<DualState> kDualStateNames[] = {
    {DualState::kFreestream, "freestream"}, {DualState::kInput, "input"}, {DualState::kNone, "none"}};
constexpr const auto& names_of(DualState) { return kDualStateNames; }

/// \brief The state source named `text`; Error(kUsage) "unknown state 'TEXT': use freestream, input or none".
inline DualState parse_dual_state(const std::string& text) { return parse_named<DualState>(text, "state"); }

/// \brief The state source to use: `requested`, or by default the file's state when it has one, else a
/// freestream. Error(kUsage) naming `path` when the input state is asked for and the file has none.
DualState choose_dual_state(const std::optional<DualState>& requested, const ElementMeshFile& file,
                            const std::string& path);

/// What to make of an element mesh.
struct DualMeshSettings {
  NodeOrdering order = NodeOrdering::kNatural;
  std::uint64_t seed = 1;  ///< of the random ordering
  DualState state = DualState::kFreestream;
  FreestreamConditions freestream;  ///< used with DualState::kFreestream
};

/// An edge mesh made from an element mesh, ready to write.
struct DualMesh {
  EdgeMesh mesh;
  std::optional<FlowState> state;
  EdgeMeshExtras extras;  ///< boundary flags, cell counts, source file, ordering
  std::int64_t n_boundary_nodes = 0;
  std::int64_t n_isolated_nodes = 0;  ///< nodes that belong to no cell (no edge, zero dual volume)
  DualClosureSummary closure;         ///< over the interior nodes
};

/// \brief Turns an element mesh read from `path` into an edge mesh: face topology and boundary, median-dual
/// metrics, ordering (the file's state moves with its nodes), state. Errors about the mesh (Error
/// kInvalidInput) name `path` and the offending cells. Stages: "boundary", "dual metrics", "ordering", "state"
/// (the caller reports reading, writing and "done").
DualMesh make_dual_mesh(ElementMeshFile input, const std::string& path, const DualMeshSettings& settings,
                        const MeshProgress& progress = {});

/// \brief Writes a DualMesh atomically (write_edge_mesh_with_extras).
void write_dual_mesh(const std::string& path, const DualMesh& dual);

}  // namespace fluxjac
