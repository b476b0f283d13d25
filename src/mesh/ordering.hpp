// fluxjac — node orderings of an edge mesh: reverse Cuthill-McKee, random, and renumbering.
//
// The ordering decides how scattered the states a block of edges reads are and how far apart the Adiag
// and Aoff blocks it writes lie, so the benchmark compares natural, random and RCM orderings of one mesh.
// Every ordering here is a permutation given as new_id_of_old[old node] = new node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/edge_mesh.hpp"
#include "types.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

/// The node orderings `fluxjac mesh gen`, `fluxjac mesh dual` and the benchmark's mesh specs offer.
enum class NodeOrdering { kNatural, kRandom, kRcm };
inline constexpr NamedValue<NodeOrdering> kNodeOrderingNames[] = {
    {NodeOrdering::kNatural, "natural"}, {NodeOrdering::kRandom, "random"}, {NodeOrdering::kRcm, "rcm"}};
constexpr const auto& names_of(NodeOrdering) { return kNodeOrderingNames; }

/// \brief The ordering named `text`; Error(kUsage) "unknown order 'TEXT': use natural, random or rcm" otherwise.
inline NodeOrdering parse_node_ordering(const std::string& text) { return parse_named<NodeOrdering>(text, "order"); }

/// \brief Renumbers a mesh into an ordering (natural keeps it as it is) with renumber_nodes; the state and the
/// per-node flags, when given, move with their nodes. `seed` chooses the random permutation.
void reorder_nodes(EdgeMesh& mesh, FlowState* state, std::vector<std::uint8_t>* node_flags, NodeOrdering ordering,
                   std::uint64_t seed);

/// \brief Reverse Cuthill-McKee ordering (new_id_of_old). Each connected component starts from a
/// pseudo-peripheral node (George-Liu), neighbours join the breadth-first order by increasing degree
/// (ties by id), and the whole order is reversed. Deterministic.
std::vector<node_index> reverse_cuthill_mckee(const EdgeMesh& mesh);

/// \brief A uniformly random permutation of n_nodes ids (new_id_of_old), reproducible for a seed on every
/// platform (std::mt19937_64 and a Fisher-Yates shuffle).
std::vector<node_index> random_permutation(std::int64_t n_nodes, std::uint64_t seed);

/// \brief Renumbers the nodes of a mesh and, when given, of its state: permutes coordinates, volumes and
/// Q, maps the edges, turns each edge so that L < R (negating its normal when it is turned), and sorts the
/// edges by (L, R). Fails with ExitCode::kInvalidInput if new_id_of_old is not a permutation.
void renumber_nodes(EdgeMesh& mesh, FlowState* state, const std::vector<node_index>& new_id_of_old);

/// \brief Bandwidth of the node ordering: max over edges of |L - R| (0 for a mesh without edges).
std::int64_t ordering_bandwidth(const EdgeMesh& mesh);

/// \brief Mean over edges of |L - R|, a measure of how local the ordering is on average.
double mean_edge_span(const EdgeMesh& mesh);

}  // namespace fluxjac
