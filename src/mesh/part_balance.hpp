// fluxjac — what the parts of a many-rank run balance (docs/design.md, "Many GPUs"): the one rule every partition
// path weighs nodes by (METIS in partition/partition.hpp, PT-Scotch by slices in part/slice_partition.hpp, the
// generator's slabs in mesh/generator.hpp) and the words the partition's method string gives it. It lives in the mesh
// layer, the lowest that partitions (the generator's slabs), so that all of them read it.
#pragma once

#include "util/named_enum.hpp"

namespace fluxjac {

/// \brief What a partition balances over the parts:
/// - kAssembly: node assembly's work, each node's row being its Adiag block and one flux per incident edge, so a node
///   weighs 1 + its degree (`run`, `bench`, `mesh gen`, and `mesh partition` by default);
/// - kRows: the rows, each node weighing 1: the solve's block product and Krylov vectors cost per row, so `fluxjac
///   solve` balances them (on meshes whose edges per node vary by region, parts of equal assembly work hold
///   different numbers of rows).
enum class PartBalance { kAssembly, kRows };
inline constexpr NamedValue<PartBalance> kPartBalanceNames[] = {{PartBalance::kAssembly, "assembly"},
                                                                {PartBalance::kRows, "rows"}};
constexpr const auto& names_of(PartBalance) { return kPartBalanceNames; }

/// \brief The weight of a node of `degree` incident edges (a vertex of the node graph) under `balance`: 1 + degree
/// or 1. Affine in the degree, so a group of nodes weighs its node count times the weight at its mean degree.
template <class Number>
constexpr Number vertex_weight(PartBalance balance, Number degree) {
  return balance == PartBalance::kRows ? Number{1} : Number{1} + degree;
}

/// \brief The rule in the words of the partition method strings.
constexpr const char* balance_phrase(PartBalance balance) {
  return balance == PartBalance::kRows ? "vertex weight 1 (rows: the solve's work)"
                                       : "vertex weight 1 + degree (node-assembly work)";
}

}  // namespace fluxjac
