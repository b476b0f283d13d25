#include "part/distributed_generator.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "mesh/dual_metrics.hpp"
#include "mesh/ordering.hpp"
#include "part/held_ids.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"

namespace fluxjac {
namespace {

/// The jitter rounds across the slabs: any invalid cell anywhere, and the ghost planes' scales from the ranks
/// beside (slabs are consecutive: the plane below belongs to rank - 1, the one above to rank + 1).
JitterSync slab_sync(const Communicator& comm, const BoxSlab& slab) {
  if (!comm.distributed()) return {};
  JitterSync sync;
  sync.any = [&comm](bool local_invalid) { return comm.sum(std::int64_t{local_invalid ? 1 : 0}) > 0; };
  sync.refresh = [&comm, slab](std::vector<double>& scale) {
    const std::int64_t plane = slab.plane_nodes();
    std::vector<int> peers;
    std::vector<const double*> send;
    std::vector<double*> receive;
    std::vector<std::size_t> counts;
    if (slab.first_held < slab.first_plane) {
      peers.push_back(comm.rank() - 1);
      send.push_back(&scale[static_cast<std::size_t>((slab.first_plane - slab.first_held) * plane)]);
      receive.push_back(&scale[0]);
      counts.push_back(static_cast<std::size_t>(plane));
    }
    if (slab.end_held > slab.end_plane) {
      peers.push_back(comm.rank() + 1);
      send.push_back(&scale[static_cast<std::size_t>((slab.end_plane - 1 - slab.first_held) * plane)]);
      receive.push_back(&scale[static_cast<std::size_t>((slab.end_held - 1 - slab.first_held) * plane)]);
      counts.push_back(static_cast<std::size_t>(plane));
    }
    comm.exchange(peers, send, counts, receive, counts);
  };
  return sync;
}

/// new_id_of_old of the owned nodes [first, end) (local ids of the slab) in the spec's ordering of the part alone.
std::vector<node_index> part_order(const Communicator& comm, const BoxMeshSpec& spec, const EdgeMesh& slab_mesh,
                                   std::int64_t first, std::int64_t end) {
  const std::int64_t owned = end - first;
  if (spec.order == NodeOrdering::kNatural) {
    std::vector<node_index> identity(static_cast<std::size_t>(owned));
    std::iota(identity.begin(), identity.end(), 0);
    return identity;
  }
  if (spec.order == NodeOrdering::kRandom)
    return random_permutation(owned, spec.seed ^ (0x5EEDull + 0x9E3779B97F4A7C15ull * (comm.rank() + 1ull)));
  EdgeMesh inner;  // the part's own edges, for RCM
  inner.n_nodes = owned;
  inner.edges.reserve(2 * static_cast<std::size_t>(slab_mesh.n_edges()));
  inner.areas.reserve(static_cast<std::size_t>(slab_mesh.n_edges()));
  for (edge_index e = 0; e < slab_mesh.n_edges(); ++e) {
    const std::int64_t left = slab_mesh.left(e), right = slab_mesh.right(e);
    if (left < first || left >= end || right < first || right >= end) continue;
    inner.edges.push_back(static_cast<node_index>(left - first));
    inner.edges.push_back(static_cast<node_index>(right - first));
    inner.areas.push_back(1.0);
  }
  return reverse_cuthill_mckee(inner);
}

}  // namespace

std::string generated_parts_method(const BoxMeshSpec& spec, int parts, PartBalance balance) {
  if (parts == 1) return fmt::format("box generated whole by one rank, {} order", to_string(spec.order));
  return fmt::format("box slabs along z ({} parts balanced by {}), {} order within each part", parts,
                     balance_phrase(balance), to_string(spec.order));
}

LocalPart generate_part(const Communicator& comm, const BoxMeshSpec& spec, bool keep_geometry, const Note& note,
                        PartBalance balance) {
  const Note root_note = comm.is_root() ? note : Note();
  restart_peak_resident();       // each step's peak is that of the generation, not of earlier work in the process
  std::vector<SetupStep> steps;  // into the part's partition summary once it exists
  std::vector<int> planes;
  validate_box_mesh_spec(spec);
  planes = box_slab_planes(spec, comm.size(), balance);
  check_box_mesh_memory(spec, available_memory(), comm.size(), balance);

  const int rank = comm.rank();
  const BoxSlab slab = box_slab(spec, planes[rank], planes[rank + 1]);
  const std::int64_t plane = slab.plane_nodes();
  const std::int64_t owned_begin = (slab.first_plane - slab.first_held) * plane;  // local ids of the slab
  const std::int64_t owned_end = (slab.end_plane - slab.first_held) * plane;
  const std::int64_t n_owned = owned_end - owned_begin;
  const auto step_done = [&](const std::string& name, std::chrono::steady_clock::time_point start) {
    steps.push_back(gather_step(comm, name, StepKind::kGenerate, seconds_since(start)));
    say(root_note, "generate: " + step_line(steps.back()));
  };

  // ---- nodes, cells and jitter: the serial generator's code on the slab ----------------------------------------
  auto start = std::chrono::steady_clock::now();
  std::vector<std::uint8_t> held_boundary;
  std::int64_t reduced = 0;
  ElementMesh elements = build_box_slab_elements(spec, slab, slab_sync(comm, slab), {}, &held_boundary, &reduced);
  step_done("nodes and cells", start);

  // ---- median-dual metrics of the slab --------------------------------------------------------------------------
  start = std::chrono::steady_clock::now();
  EdgeMesh slab_mesh = build_median_dual(elements);
  elements = ElementMesh{};
  step_done("dual metrics", start);

  // ---- numbering: parts in rank order, the ordering within each part ------------------------------------------
  start = std::chrono::steady_clock::now();
  const std::vector<std::int64_t> owned_counts = comm.all_gather(n_owned);
  std::vector<std::int64_t> node_offsets(owned_counts.size() + 1, 0);
  std::partial_sum(owned_counts.begin(), owned_counts.end(), node_offsets.begin() + 1);
  const std::int64_t first_owned = node_offsets[rank];
  std::vector<node_index> new_of_owned = part_order(comm, spec, slab_mesh, owned_begin, owned_end);
  // File ids of the held nodes: the owned ones here, the ghosts' from their owners (ask with natural ids).
  const std::int64_t first_natural = slab.first_node();
  const std::int64_t n_held = static_cast<std::int64_t>(held_boundary.size());
  std::vector<std::int64_t> file_id(static_cast<std::size_t>(n_held), -1);
  for (std::int64_t k = 0; k < n_owned; ++k) file_id[owned_begin + k] = first_owned + new_of_owned[k];
  std::vector<std::vector<std::int64_t>> asked(static_cast<std::size_t>(comm.size()));
  const auto owner_of = [&](std::int64_t natural) {
    const auto node_plane = static_cast<int>(natural / plane);
    return static_cast<int>(std::upper_bound(planes.begin(), planes.end(), node_plane) - planes.begin() - 1);
  };
  for (std::int64_t local = 0; local < n_held; ++local)
    if (local < owned_begin || local >= owned_end)
      asked[static_cast<std::size_t>(owner_of(first_natural + local))].push_back(first_natural + local);
  const std::vector<std::vector<std::int64_t>> asked_of_me = comm.all_to_all(asked);
  std::vector<std::vector<std::int64_t>> answers(asked_of_me.size());
  for (std::size_t r = 0; r < asked_of_me.size(); ++r)
    for (const std::int64_t natural : asked_of_me[r]) answers[r].push_back(file_id[natural - first_natural]);
  const std::vector<std::vector<std::int64_t>> answered = comm.all_to_all(answers);
  for (std::size_t r = 0; r < asked.size(); ++r)
    for (std::size_t i = 0; i < asked[r].size(); ++i) file_id[asked[r][i] - first_natural] = answered[r][i];

  // The part: every edge with an owned end, in file ids, turned so that L < R, sorted by (L, R): counted into one
  // bucket per L (the held nodes in file order: the owned ids are one range, the ghosts few), then sorted by R within
  // each bucket. Linear in the edges, where one sort of them all took most of this step.
  FilePart own;
  own.global_nodes = node_offsets.back();
  own.owned.resize(static_cast<std::size_t>(n_owned));
  std::iota(own.owned.begin(), own.owned.end(), first_owned);
  const auto is_owned = [&](std::int64_t local) { return local >= owned_begin && local < owned_end; };
  std::vector<std::int64_t> ghost_ids;
  for (std::int64_t local = 0; local < n_held; ++local)
    if (!is_owned(local)) ghost_ids.push_back(file_id[local]);
  std::sort(ghost_ids.begin(), ghost_ids.end());
  const HeldIds held_rank(first_owned, n_owned, ghost_ids);  // the place of a file id among the held nodes' ids
  const auto smaller_end = [&](edge_index e) {
    return std::min(file_id[slab_mesh.left(e)], file_id[slab_mesh.right(e)]);
  };
  const auto larger_end = [&](edge_index e) {
    return std::max(file_id[slab_mesh.left(e)], file_id[slab_mesh.right(e)]);
  };
  const auto kept = [&](edge_index e) { return is_owned(slab_mesh.left(e)) || is_owned(slab_mesh.right(e)); };
  std::vector<std::int64_t> bucket_start(static_cast<std::size_t>(n_held) + 1, 0);
  std::int64_t stored_here = 0;
  for (edge_index e = 0; e < slab_mesh.n_edges(); ++e) {
    if (!kept(e)) continue;
    const std::int64_t smaller = smaller_end(e);
    ++bucket_start[held_rank(smaller) + 1];
    stored_here += held_rank.owned(smaller) ? 1 : 0;  // counted by L's owner
  }
  std::partial_sum(bucket_start.begin(), bucket_start.end(), bucket_start.begin());
  std::vector<edge_index> sorted(static_cast<std::size_t>(bucket_start.back()));
  {
    std::vector<std::int64_t> next(bucket_start.begin(), bucket_start.end() - 1);
    for (edge_index e = 0; e < slab_mesh.n_edges(); ++e)
      if (kept(e)) sorted[next[held_rank(smaller_end(e))]++] = e;
  }
  for (std::int64_t bucket = 0; bucket < n_held; ++bucket)
    std::sort(sorted.begin() + bucket_start[bucket], sorted.begin() + bucket_start[bucket + 1],
              [&](edge_index x, edge_index y) {
                return std::make_pair(larger_end(x), x) < std::make_pair(larger_end(y), y);
              });
  bucket_start = {};
  own.global_edges = comm.sum(stored_here);
  own.edges.n_nodes = own.global_nodes;
  own.edges.edges.resize(2 * sorted.size());
  own.edges.normals.resize(3 * sorted.size());
  own.edges.areas.resize(sorted.size());
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    const edge_index e = sorted[k];
    const std::int64_t left = file_id[slab_mesh.left(e)], right = file_id[slab_mesh.right(e)];
    const bool turned = right < left;
    own.edges.edges[2 * k] = static_cast<node_index>(turned ? right : left);
    own.edges.edges[2 * k + 1] = static_cast<node_index>(turned ? left : right);
    for (int d = 0; d < 3; ++d)
      own.edges.normals[3 * k + d] = turned ? -slab_mesh.normals[3 * e + d] : slab_mesh.normals[3 * e + d];
    own.edges.areas[k] = slab_mesh.areas[e];
  }
  sorted = {};
  // The owned nodes in file order, and the ghosts.
  std::vector<std::int64_t> old_of_new(static_cast<std::size_t>(n_owned));
  for (std::int64_t k = 0; k < n_owned; ++k) old_of_new[new_of_owned[k]] = owned_begin + k;
  std::vector<std::pair<std::int64_t, std::int64_t>> ghosts;  // (file id, owner)
  for (std::int64_t local = 0; local < n_held; ++local)
    if (local < owned_begin || local >= owned_end) ghosts.push_back({file_id[local], owner_of(first_natural + local)});
  std::sort(ghosts.begin(), ghosts.end());
  for (const auto& [id, owner] : ghosts) {
    own.ghosts.push_back(id);
    own.ghost_owner.push_back(owner);
  }
  step_done("ordering", start);

  // ---- the state at the owned nodes ---------------------------------------------------------------------------
  start = std::chrono::steady_clock::now();
  std::vector<double> owned_coords(3 * static_cast<std::size_t>(n_owned));
  std::vector<std::int64_t> original_ids(static_cast<std::size_t>(n_owned));
  std::vector<std::uint8_t> boundary_flags(static_cast<std::size_t>(n_owned));
  for (std::int64_t k = 0; k < n_owned; ++k) {
    const std::int64_t local = old_of_new[k];
    std::copy_n(&slab_mesh.coords[3 * local], 3, &owned_coords[3 * k]);
    original_ids[k] = first_natural + local;
    boundary_flags[k] = held_boundary[local];
  }
  FlowState state = disturbed_freestream_state(owned_coords);
  own.owned_state = std::move(state.Q);
  own.gamma = state.gamma;
  step_done("state", start);

  // ---- the rank's LocalPart: local numbering, halo plan, ghost states -----------------------------------------
  start = std::chrono::steady_clock::now();
  std::vector<double> held_coords, held_volumes;
  if (keep_geometry) {
    held_coords = std::move(slab_mesh.coords);
    held_volumes = std::move(slab_mesh.volumes);
  }
  slab_mesh = EdgeMesh{};
  LocalPart part = part_from_pieces(comm, std::move(own), generated_parts_method(spec, comm.size(), balance),
                                    fmt::format("box mesh {} n = {}", to_string(spec.kind), spec.n), note);
  if (keep_geometry) {
    part.original_ids = std::move(original_ids);
    part.boundary_flags = std::move(boundary_flags);
    // Local ids ascend with file ids; the slab's held nodes are the local nodes.
    const RankLayout& layout = part.layout;
    std::vector<std::pair<std::int64_t, std::int64_t>> by_file;  // (file id, slab id)
    for (std::int64_t local = 0; local < n_held; ++local) by_file.push_back({file_id[local], local});
    std::sort(by_file.begin(), by_file.end());
    EdgeMesh& mesh = part.mesh;
    mesh.coords.assign(3 * static_cast<std::size_t>(layout.local_count()), 0.0);
    mesh.volumes.assign(static_cast<std::size_t>(layout.local_count()), 0.0);
    for (std::int64_t local = 0; local < layout.local_count(); ++local) {
      const auto it =
          std::lower_bound(by_file.begin(), by_file.end(), std::make_pair(layout.global_id(local), std::int64_t{-1}));
      if (it == by_file.end() || it->first != layout.global_id(local)) continue;
      std::copy_n(&held_coords[3 * it->second], 3, &mesh.coords[3 * local]);
      const bool owned = it->second >= owned_begin && it->second < owned_end;
      mesh.volumes[local] = owned ? held_volumes[it->second] : 0.0;
    }
  }
  step_done("part", start);
  part.partition.steps = std::move(steps);
  return part;
}

}  // namespace fluxjac
