#include "mesh/mesh_digest.hpp"

#include <cstring>

#include <fmt/format.h>

namespace fluxjac {
namespace {

/// The 64-bit finalizer of splitmix64 (David Stafford's "Mix13" variant of MurmurHash3's fmix64): a bijection in
/// which every input bit changes each output bit with probability about one half.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// One more word into a running hash (the order of the words counts).
std::uint64_t combine(std::uint64_t hash, std::uint64_t word) { return mix(hash ^ word); }

std::uint64_t bits_of(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// The term of one edge: its ends, normal and area, in this order.
std::uint64_t edge_term(const EdgeMesh& mesh, edge_index e, std::int64_t left, std::int64_t right) {
  std::uint64_t term = combine(0x9e3779b97f4a7c15ULL, static_cast<std::uint64_t>(left));
  term = combine(term, static_cast<std::uint64_t>(right));
  for (int axis = 0; axis < 3; ++axis) term = combine(term, bits_of(mesh.normals[3 * e + axis]));
  return combine(term, bits_of(mesh.areas[e]));
}

}  // namespace

void MeshDigest::add_edge(const EdgeMesh& mesh, edge_index e, std::int64_t left, std::int64_t right) {
  sum_ += edge_term(mesh, e, left, right);
}

std::uint64_t MeshDigest::value(std::int64_t n_nodes, std::int64_t n_edges) const {
  return combine(combine(mix(static_cast<std::uint64_t>(n_nodes)), static_cast<std::uint64_t>(n_edges)), sum_);
}

std::uint64_t mesh_digest(const EdgeMesh& mesh) {
  // A sum modulo 2^64 is the same in any order: the threads' partial sums give the serial digest exactly.
  std::uint64_t sum = 0;
  const edge_index n_edges = mesh.n_edges();
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (edge_index e = 0; e < n_edges; ++e) sum += edge_term(mesh, e, mesh.left(e), mesh.right(e));
  MeshDigest digest;
  digest.add_part(sum);
  return digest.value(mesh.n_nodes, n_edges);
}

void ContentDigest::add_edges(const EdgeMesh& edges) {
  std::uint64_t sum = 0;
  const edge_index n_edges = edges.n_edges();
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (edge_index e = 0; e < n_edges; ++e) sum += edge_term(edges, e, edges.left(e), edges.right(e));
  edge_sum_ += sum;
}

void ContentDigest::add_nodes(std::int64_t first, std::int64_t count, const double* coords, const double* volumes,
                              const std::uint8_t* boundary, const double* states) {
  std::uint64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (std::int64_t k = 0; k < count; ++k) {
    std::uint64_t term = combine(0x632be59bd9b4e019ULL, static_cast<std::uint64_t>(first + k));
    for (int axis = 0; axis < 3; ++axis) term = combine(term, bits_of(coords[3 * k + axis]));
    term = combine(term, bits_of(volumes[k]));
    term = combine(term, boundary[k]);
    for (int component = 0; component < kBlock; ++component)
      term = combine(term, bits_of(states[kBlock * k + component]));
    sum += term;
  }
  node_sum_ += sum;
}

std::uint64_t ContentDigest::value(std::int64_t n_nodes, std::int64_t n_edges) const {
  MeshDigest edges;
  edges.add_part(edge_sum_);
  return combine(edges.value(n_nodes, n_edges), node_sum_);
}

std::string digest_text(std::uint64_t digest) { return fmt::format("{:016x}", digest); }

}  // namespace fluxjac
