// fluxjac — a 64-bit digest of an edge mesh's content: the identity of a mesh in result files, whatever name it
// was given (a file path or a generator spec), so that `fluxjac compare` matches the cases of one mesh
// (docs/bench-json.md, "Runs").
#pragma once

#include <cstdint>
#include <string>

#include "mesh/edge_mesh.hpp"

namespace fluxjac {

/// \brief The digest of an edge mesh, built edge by edge: one term per edge (its two node ids, its normal and its
/// area, by their bits), summed modulo 2^64, then mixed with the node and edge counts. The sum makes it
/// independent of the order of the edges, so the parts of a mesh on many ranks (each edge added by one rank, with
/// the node ids of the whole mesh) add up to the digest of the whole mesh read by one process.
class MeshDigest {
 public:
  /// \brief Adds edge e of `mesh`, whose ends are the nodes `left` and `right` of the whole mesh.
  void add_edge(const EdgeMesh& mesh, edge_index e, std::int64_t left, std::int64_t right);
  /// \brief Adds the edges of another part, given by its sum().
  void add_part(std::uint64_t part_sum) { sum_ += part_sum; }
  /// \brief The sum of the terms of the edges added so far.
  std::uint64_t sum() const { return sum_; }
  /// \brief The digest of a mesh of n_nodes nodes and n_edges edges, all of them added.
  std::uint64_t value(std::int64_t n_nodes, std::int64_t n_edges) const;

 private:
  std::uint64_t sum_ = 0;
};

/// \brief The digest of a whole mesh (its node ids are the mesh's own).
std::uint64_t mesh_digest(const EdgeMesh& mesh);

/// \brief The digest of everything a generated mesh file holds that a command reads (docs/formats.md, "Edge mesh and
/// state": the /mesh attribute `content_digest`), by which the bench mesh cache tells a file the generator wrote from
/// an edited or a forged one: the edges' terms of MeshDigest (ends, normal, area) and one term per node (its
/// coordinates, dual volume, boundary flag and state, by their bits), each summed modulo 2^64, so that slices of the
/// arrays added in any order give the digest of the whole file.
class ContentDigest {
 public:
  /// \brief Adds every edge of `edges`: a slice of the mesh's edges, its node ids those of the whole mesh.
  void add_edges(const EdgeMesh& edges);
  /// \brief Adds nodes [first, first + count): coords [count][3], volumes [count], boundary flags [count] and
  /// states [count][5].
  void add_nodes(std::int64_t first, std::int64_t count, const double* coords, const double* volumes,
                 const std::uint8_t* boundary, const double* states);
  /// \brief The digest of a mesh of n_nodes nodes and n_edges edges, all of them added.
  std::uint64_t value(std::int64_t n_nodes, std::int64_t n_edges) const;

 private:
  std::uint64_t edge_sum_ = 0;
  std::uint64_t node_sum_ = 0;
};

/// \brief A digest as 16 lowercase hexadecimal digits, as result files hold it.
std::string digest_text(std::uint64_t digest);

}  // namespace fluxjac
