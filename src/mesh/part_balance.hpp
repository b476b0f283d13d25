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
/// - kSolve: the solve's work per iteration, kSolveRowWeight + degree: its Krylov vectors and each block row's
///   product cost per row, each Aoff block (one per incident edge) a little more (`fluxjac solve`). On meshes whose
///   edges per node vary by region, parts of equal assembly work hold very different numbers of rows.
enum class PartBalance { kAssembly, kSolve };
inline constexpr NamedValue<PartBalance> kPartBalanceNames[] = {{PartBalance::kAssembly, "assembly"},
                                                                {PartBalance::kSolve, "solve"}};
constexpr const auto& names_of(PartBalance) { return kPartBalanceNames; }

/// \brief A row's share of a solve iteration in units of one Aoff block's: on an NVIDIA H200 the product took about
/// 0.099 ms per million rows and 0.0265 ms per million blocks, and the Krylov vectors 0.62 ms per million rows, so a
/// row costs about 27 blocks. Weak scaling of the solve on 2 H200s (`mixed:126:rcm` generated in parts, block Jacobi,
/// CFL 100) took 1.199, 1.142, 1.132 and 1.162 ms per iteration with weights 1, 12 + degree, 24 + degree and
/// 48 + degree (docs/performance.md, "On two GPUs").
inline constexpr int kSolveRowWeight = 24;

/// \brief The weight of a node of `degree` incident edges (a vertex of the node graph) under `balance`: 1 + degree
/// or kSolveRowWeight + degree. Affine in the degree, so a group of nodes weighs its node count times the weight at
/// its mean degree.
template <class Number>
constexpr Number vertex_weight(PartBalance balance, Number degree) {
  return (balance == PartBalance::kSolve ? Number{kSolveRowWeight} : Number{1}) + degree;
}

/// \brief The rule in the words of the partition method strings.
constexpr const char* balance_phrase(PartBalance balance) {
  return balance == PartBalance::kSolve ? "vertex weight 24 + degree (the solve's work per row and block)"
                                        : "vertex weight 1 + degree (node-assembly work)";
}

}  // namespace fluxjac
