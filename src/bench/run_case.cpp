#include "bench/run_case.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "jacobian/jacobian_io.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_digest.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/ordering.hpp"
#include "parallel/distributed_jacobian.hpp"
#include "parallel/ghost_exchange.hpp"
#include "reference/reference.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// Seconds since `start`, for the progress lines.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void say(const Note& note, const std::string& line) {
  if (note) note(line);
}

}  // namespace

namespace {

/// The ordering figures and the digest of the whole mesh from the ranks' parts: each edge counted once, by the rank
/// owning its L.
void gather_ordering(const Communicator& comm, const PreparedMesh& prepared, MeshSummary& summary) {
  const RankLayout& layout = *prepared.layout;
  std::vector<std::uint8_t> owned(layout.global_node.size(), 0);
  for (const node_index node : layout.owned_nodes) owned[node] = 1;
  std::int64_t bandwidth = 0;
  double span_sum = 0.0;
  MeshDigest digest;
  for (edge_index e = 0; e < prepared.mesh.n_edges(); ++e) {
    if (!owned[prepared.mesh.left(e)]) continue;
    const std::int64_t span =
        std::abs(layout.global_node[prepared.mesh.left(e)] - layout.global_node[prepared.mesh.right(e)]);
    bandwidth = std::max(bandwidth, span);
    span_sum += static_cast<double>(span);
    digest.add_edge(prepared.mesh, e, layout.global_node[prepared.mesh.left(e)],
                    layout.global_node[prepared.mesh.right(e)]);
  }
  summary.ordering_bandwidth = comm.max(bandwidth);
  summary.mean_edge_span = comm.sum(span_sum) / static_cast<double>(std::max<std::int64_t>(1, summary.n_edges));
  MeshDigest whole;
  for (const std::int64_t part : comm.all_gather(static_cast<std::int64_t>(digest.sum())))
    whole.add_part(static_cast<std::uint64_t>(part));
  summary.digest = whole.value(summary.n_nodes, summary.n_edges);
}

}  // namespace

PreparedMesh prepare_mesh(const std::string& name, const std::string& file, const std::string& state_file,
                          const std::string& order, const Note& note, const Communicator& comm) {
  PreparedMesh prepared;
  prepared.comm = &comm;
  auto start = std::chrono::steady_clock::now();
  prepared.state_file = state_file.empty() ? file : state_file;
  if (comm.distributed()) {
    LocalPart part = read_local_part(comm, file, state_file, note);
    prepared.mesh = std::move(part.mesh);
    prepared.state = std::move(part.state);
    prepared.layout = std::move(part.layout);
    prepared.partition = summarize_partition(comm, *prepared.layout);
    const PartitionSummary& p = prepared.partition;
    say(note,
        fmt::format("partition ({}): {} ranks, edge cut {}, ghosts per rank {} to {}, imbalance {:.3f} (edges), "
                    "{:.3f} (nodes)",
                    p.source, p.ranks, p.edge_cut, p.ghosts_min, p.ghosts_max, p.edge_imbalance, p.node_imbalance));
  } else {
    prepared.mesh = read_edge_mesh(file);
    prepared.state = read_flow_state(prepared.state_file, prepared.mesh.n_nodes);
    say(note, fmt::format("read {}: {} nodes, {} edges ({:.2f} s)", file, prepared.mesh.n_nodes,
                          prepared.mesh.n_edges(), seconds_since(start)));
  }
  start = std::chrono::steady_clock::now();
  prepared.pattern = JacobianPattern::build(prepared.mesh);
  MeshSummary& summary = prepared.summary;
  summary.name = name;
  summary.file = file;
  summary.order = order;
  if (summary.order.empty()) {
    // Files from `fluxjac mesh gen` and `mesh dual` record their ordering; others have none.
    const std::int64_t file_nodes = prepared.distributed() ? prepared.layout->global_nodes : prepared.mesh.n_nodes;
    if (comm.is_root()) {
      try {
        summary.order = read_edge_mesh_extras(file, file_nodes).order;
      } catch (const Error&) {
        summary.order.clear();
      }
    }
    comm.broadcast(summary.order);
  }
  if (prepared.distributed()) {
    const RankLayout& layout = *prepared.layout;
    summary.n_nodes = layout.global_nodes;
    summary.n_edges = layout.global_edges;
    std::int64_t owned_blocks = 0;
    for (const node_index node : layout.owned_nodes)
      owned_blocks += prepared.pattern.row_ptr[node + 1] - prepared.pattern.row_ptr[node];
    summary.n_offdiag_blocks = comm.sum(owned_blocks);
    gather_ordering(comm, prepared, summary);
  } else {
    summary.n_nodes = prepared.mesh.n_nodes;
    summary.n_edges = prepared.mesh.n_edges();
    summary.n_offdiag_blocks = prepared.pattern.nnz();
    summary.ordering_bandwidth = ordering_bandwidth(prepared.mesh);
    summary.mean_edge_span = mean_edge_span(prepared.mesh);
    summary.digest = mesh_digest(prepared.mesh);
  }
  say(note, fmt::format("block-CSR pattern: {} off-diagonal blocks ({:.2f} s)", summary.n_offdiag_blocks,
                        seconds_since(start)));
  return prepared;
}

ReferenceJacobian read_reference(const std::string& path, const PreparedMesh& mesh, const Note& note) {
  const auto start = std::chrono::steady_clock::now();
  ReferenceJacobian reference;
  reference.source = path;
  if (mesh.distributed()) {
    const RankLayout& layout = *mesh.layout;
    std::vector<std::int64_t> rows;
    for (const node_index node : layout.owned_nodes) rows.push_back(layout.global_node[node]);
    mesh.comm->agree([&] { reference.rows = read_jacobian_rows(path, rows); });
    say(note, fmt::format("reference: {}, each rank its own rows ({:.2f} s)", path, seconds_since(start)));
    return reference;
  }
  StoredJacobian stored = read_jacobian(path);
  say(note, fmt::format("reference: {} ({:.2f} s)", path, seconds_since(start)));
  reference.pattern = std::move(stored.pattern);
  reference.jacobian = std::move(stored.jacobian);
  return reference;
}

std::string reference_pattern_difference(const PreparedMesh& mesh, const ReferenceJacobian& reference) {
  if (!mesh.distributed()) return pattern_difference(mesh.pattern, reference.pattern);
  Jacobian zeros;
  zeros.resize(mesh.pattern);
  JacobianRows rows = owned_rows(*mesh.layout, mesh.pattern, zeros);
  rows.aoff.assign(reference.rows.aoff.size(), 0.0f);  // compare the patterns, not the values
  rows.adiag.assign(reference.rows.adiag.size(), 0.0);
  const Comparison comparison = compare_rows(*mesh.comm, rows, reference.rows, Tolerances{1.0, 1.0});
  if (comparison.same_pattern && rows.adiag.size() == rows.rows.size() * kBlockEntries) return {};
  return comparison.pattern_message.empty() ? "the stored rows do not match the mesh" : comparison.pattern_message;
}

ReferenceJacobian compute_reference(const PreparedMesh& mesh, const Note& note) {
  say(note, fmt::format("reference: computing the CPU multivariate dual on {} edges ...", mesh.summary.n_edges));
  const auto start = std::chrono::steady_clock::now();
  ReferenceJacobian reference{mesh.pattern, {}, "CPU multivariate dual", {}};
  // On many ranks the local mesh holds every edge of the owned rows, so they are exact (ghost rows are not used).
  assemble_reference(mesh.mesh, mesh.state, mesh.pattern, reference.jacobian);
  if (mesh.distributed()) {
    reference.rows = owned_rows(*mesh.layout, mesh.pattern, reference.jacobian);
    reference.pattern = {};
    reference.jacobian = {};
  }
  say(note, fmt::format("reference: CPU multivariate dual ({:.2f} s)", seconds_since(start)));
  return reference;
}

std::unique_ptr<Variant> setup_variant(const std::string& name, const PreparedMesh& mesh) {
  std::unique_ptr<Variant> variant;
  const auto setup = [&] {
    variant = Registry::instance().create(name);
    variant->setup(mesh.mesh, mesh.state, mesh.pattern);
  };
  if (mesh.comm)
    mesh.comm->agree(setup);  // a rank whose GPU is out of memory must not leave the others waiting
  else
    setup();
  return variant;
}

RunRecord case_record(const PreparedMesh& mesh, const CaseRequest& request) {
  const VariantInfo* info = Registry::instance().find(request.variant);
  if (!info) fail(ExitCode::kUsage, "unknown variant '{}'", request.variant);
  RunRecord record;
  record.mesh = mesh.summary;
  record.variant = *info;
  if (info->backend == Backend::kCuda) record.assembly = resolve_strategy(request.timing.strategy, *info);
  record.mode = request.timing.mode;
  record.edges_per_block_requested = request.timing.edges_per_block;
  record.warmup = request.timing.warmup;
  record.reps = request.timing.reps;
  record.tolerances = request.tolerances;
  return record;
}

namespace {

/// The many-rank figures of a case: the slowest rank per repetition is the time of the step, and each rank's
/// median shows how evenly the work was shared.
void gather_timings(const Communicator& comm, const TimingSamples& samples, RunRecord& record) {
  ParallelFigures& figures = record.parallel;
  figures.ranks = comm.size();
  record.assembly_ms = Stats::of(comm.max(samples.assembly_ms));
  record.zero_ms = Stats::of(comm.max(samples.zero_ms));
  figures.halo_ms = Stats::of(comm.max(samples.halo_ms));
  figures.rank_assembly_ms = Spread::of(comm.all_gather(Stats::of(samples.assembly_ms).median));
}

}  // namespace

RunRecord run_case(Variant& variant, const PreparedMesh& mesh, const CaseRequest& request,
                   const std::optional<DeviceCeilings>& device, Jacobian* result) {
  RunRecord record = case_record(mesh, request);
  TimingOptions timing = request.timing;
  std::optional<GhostExchange> exchange;
  if (mesh.distributed()) {
    // The case's limits first, on every rank together (a run of no repetitions checks them): they can differ
    // between ranks (the shared memory of a part's longest row), and a rank that stopped inside the timed loop
    // would leave the others waiting in the halo exchange.
    TimingOptions check = request.timing;
    check.warmup = check.reps = 0;
    check.progress = nullptr;
    mesh.comm->agree([&] { variant.run(check); });
    exchange.emplace(*mesh.comm, mesh.layout->halo);
    timing.refresh_ghosts = [&exchange](const StateBuffer& state) { return exchange->refresh(state); };
  }
  const TimingSamples samples = variant.run(timing);
  // Statistics of fewer samples than asked would describe runs that did not happen.
  if (samples.assembly_ms.size() != static_cast<std::size_t>(request.timing.reps))
    fail(ExitCode::kRuntime, "variant '{}' returned {} timings for {} repetitions", request.variant,
         samples.assembly_ms.size(), request.timing.reps);
  if (mesh.distributed()) {
    gather_timings(*mesh.comm, samples, record);
    record.parallel.halo_transport = exchange->transport();
    record.parallel.partition = mesh.partition;
  } else {
    record.assembly_ms = Stats::of(samples.assembly_ms);
    record.zero_ms = Stats::of(samples.zero_ms);
  }
  record.resources = variant.resources();

  const bool full = request.timing.mode == AssemblyMode::kFull;
  const bool validate = full && request.reference != nullptr;
  if (validate || (full && result)) {
    Jacobian assembled;
    variant.fetch(assembled);
    if (validate) {
      record.validated = true;
      record.comparison = mesh.distributed()
                              ? compare_rows(*mesh.comm, owned_rows(*mesh.layout, mesh.pattern, assembled),
                                             request.reference->rows, request.tolerances)
                              : compare_jacobians(mesh.pattern, assembled, request.reference->pattern,
                                                  request.reference->jacobian, request.tolerances);
    }
    if (result) *result = std::move(assembled);
  }
  finish_record(record, device);
  return record;
}

}  // namespace fluxjac
