#include "bench/run_case.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_digest.hpp"
#include "part/ghost_exchange.hpp"
#include "part/owned_rows.hpp"
#include "reference/reference.hpp"
#include "util/error.hpp"

namespace fluxjac {
namespace {

/// The ordering figures and the digest of the whole mesh from the ranks' parts: each edge counted once, by the rank
/// owning its L.
void gather_ordering(const Communicator& comm, const PreparedMesh& prepared, MeshSummary& summary) {
  const RankLayout& layout = prepared.layout;
  std::int64_t bandwidth = 0;
  double span_sum = 0.0;
  MeshDigest digest;
  {  // the rank's own figures
    const std::vector<std::uint8_t> owned = layout.owned_mask();
    for (edge_index e = 0; e < prepared.mesh.n_edges(); ++e) {
      if (!owned[prepared.mesh.left(e)]) continue;
      const std::int64_t span =
          std::abs(layout.global_id(prepared.mesh.left(e)) - layout.global_id(prepared.mesh.right(e)));
      bandwidth = std::max(bandwidth, span);
      span_sum += static_cast<double>(span);
      digest.add_edge(prepared.mesh, e, layout.global_id(prepared.mesh.left(e)),
                      layout.global_id(prepared.mesh.right(e)));
    }
  }
  summary.ordering_bandwidth = comm.max(bandwidth);
  summary.mean_edge_span = comm.sum(span_sum) / static_cast<double>(std::max<std::int64_t>(1, summary.n_edges));
  MeshDigest whole;
  for (const std::int64_t part : comm.all_gather(static_cast<std::int64_t>(digest.sum())))
    whole.add_part(static_cast<std::uint64_t>(part));
  summary.digest = whole.value(summary.n_nodes, summary.n_edges);
}

}  // namespace

PreparedMesh prepare_mesh(const std::string& name, const PartSource& source, const std::string& order, const Note& note,
                          const Communicator& comm) {
  LocalPart part = make_part(comm, source, note);
  PreparedMesh prepared;
  prepared.comm = &comm;
  prepared.state_file = source.state_file.empty() ? source.mesh_file : source.state_file;
  prepared.mesh = std::move(part.mesh);
  prepared.state = std::move(part.state);
  prepared.layout = std::move(part.layout);
  prepared.partition = std::move(part.partition);

  const auto start = std::chrono::steady_clock::now();
  prepared.pattern = JacobianPattern::build(prepared.mesh);  // may run out of memory on one rank
  const RankLayout& layout = prepared.layout;
  MeshSummary& summary = prepared.summary;
  summary.name = name;
  summary.file = source.mesh_file;
  summary.order = order;
  if (summary.order.empty()) {
    // Files from `fluxjac mesh gen` and `mesh dual` record their ordering; others have none.
    if (comm.is_root()) {
      try {
        summary.order = read_edge_mesh_extras(source.mesh_file, layout.global_nodes).order;
      } catch (const Error&) {
        summary.order.clear();
      }
    }
    comm.broadcast(summary.order);
  }
  summary.n_nodes = layout.global_nodes;
  summary.n_edges = layout.global_edges;
  std::int64_t owned_blocks = 0;
  for (std::int64_t k = 0; k < layout.owned_count(); ++k) {
    const node_index node = layout.owned_node(k);
    owned_blocks += prepared.pattern.row_ptr[node + 1] - prepared.pattern.row_ptr[node];
  }
  summary.n_offdiag_blocks = comm.sum(owned_blocks);
  gather_ordering(comm, prepared, summary);
  say(note, fmt::format("block-CSR pattern: {} off-diagonal blocks ({:.2f} s)", summary.n_offdiag_blocks,
                        seconds_since(start)));
  return prepared;
}

ReferenceJacobian read_reference(const std::string& path, const PreparedMesh& mesh, Orientation orientation,
                                 const Note& note) {
  // Before any values are read; every rank reads the same file (the ranks agreed on it): the same verdict everywhere.
  const JacobianFileInfo info = read_jacobian_info(path);
  if (info.aoff_precision != AoffPrecision::kF32)
    fail(ExitCode::kInvalidInput,
         "{}: holds Aoff in {}: a reference holds it in f32 (write it without --aoff-precision {})", path,
         to_string(info.aoff_precision), to_string(info.aoff_precision));
  const Orientation held = info.orientation;
  if (held != orientation)
    fail(ExitCode::kInvalidInput,
         "{}: holds the Jacobian in orientation {}, and this run assembles {}: validate against a reference of the "
         "same orientation ({})",
         path, to_string(held), to_string(orientation),
         held == Orientation::kTransposed ? "add --transpose, or give a reference written without it"
                                          : "drop --transpose, or give a reference written with it");
  StoredRows stored = read_owned_rows(*mesh.comm, path, mesh.layout, mesh.pattern, note);
  // Before any case runs: repetitions validated against another mesh's Jacobian would all be wasted.
  if (!stored.pattern_difference.empty())
    fail(ExitCode::kInvalidInput, "{}: a Jacobian of another mesh than {}: {} (mesh vs stored)", path,
         mesh.summary.name, stored.pattern_difference);
  return {std::move(stored.jacobian), path};
}

PreparedMesh prepare_mesh_source(const MeshSource& source, const std::string& state_file, const Note& note,
                                 const Communicator& comm, PartBalance balance) {
  if (Communicator::world().distributed() && source.spec && state_file.empty()) {
    PartSource generated;
    generated.spec = *source.spec;
    generated.balance = balance;
    return prepare_mesh(source.name, generated, source.order, note, comm);
  }
  if (comm.is_root()) ensure_mesh_file(source, note);  // one rank makes a missing mesh
  comm.barrier();                                      // the others wait, then read it
  return prepare_mesh(source.name, PartSource{source.file, state_file, std::nullopt, false, balance}, source.order,
                      note, comm);
}

ReferenceJacobian compute_reference(const PreparedMesh& mesh, Orientation orientation, const Note& note) {
  say(note, fmt::format("reference: computing the CPU multivariate dual on {} edges{} ...", mesh.summary.n_edges,
                        orientation == Orientation::kTransposed ? " (A^T)" : ""));
  const auto start = std::chrono::steady_clock::now();
  ReferenceJacobian reference{{}, "CPU multivariate dual"};
  // A rank's part holds every edge of its owned rows, so they are exact (ghost rows are not used).
  assemble_reference(mesh.mesh, mesh.state, mesh.pattern, reference.jacobian, orientation);
  say(note, fmt::format("reference: CPU multivariate dual ({:.2f} s)", seconds_since(start)));
  return reference;
}

std::unique_ptr<Variant> setup_variant(const std::string& name, const PreparedMesh& mesh) {
  std::unique_ptr<Variant> variant = Registry::instance().create(name);
  variant->setup(mesh.mesh, mesh.state, mesh.pattern);
  return variant;
}

RunRecord case_record(const PreparedMesh& mesh, const CaseRequest& request) {
  const VariantInfo* info = Registry::instance().find(request.variant);
  if (!info) fail(ExitCode::kUsage, "unknown variant '{}'", request.variant);
  RunRecord record;
  record.mesh = mesh.summary;
  record.variant = *info;
  if (info->backend == Backend::kCuda || !info->emulates.empty())
    record.assembly = resolve_strategy(request.assembly.strategy, *info);
  record.mode = request.assembly.mode;
  record.orientation = request.assembly.orientation;
  record.residual = request.assembly.residual;
  record.aoff_precision = request.assembly.aoff_precision;
  record.edges_per_block_requested = request.assembly.edges_per_block;
  record.warmup = request.timing.warmup;
  record.reps = request.timing.reps;
  record.tolerances = validation_tolerances(request.tolerances, request.assembly.aoff_precision);
  return record;
}

namespace {

/// The figures of a case over the ranks: the slowest rank per repetition is the time of the step, and each rank's
/// median shows how evenly the work was shared (one rank: its own figures).
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
  // The case's limits first (Variant::prepare checks them): they can differ between ranks (the shared memory of a
  // part's longest row).
  variant.prepare(request.assembly);
  GhostExchange exchange(*mesh.comm, mesh.layout.halo);
  exchange.prepare(variant.state_buffer());  // the timed loop allocates nothing for its exchanges
  const TimingSamples samples = timed_loop(variant, request.timing, exchange);
  gather_timings(*mesh.comm, samples, record);
  record.parallel.halo_transport = exchange.transport();
  record.parallel.partition = mesh.partition;
  record.resources = variant.resources();

  const bool full = request.assembly.mode == AssemblyMode::kFull;
  const bool validate = full && request.reference != nullptr;
  if (validate || (full && result)) {
    Jacobian assembled;
    variant.fetch(assembled);  // a copy of the whole part's Jacobian: memory may run out
    if (validate) {
      record.validated = true;
      record.comparison = compare_owned_rows(*mesh.comm, mesh.layout, mesh.pattern, assembled,
                                             request.reference->jacobian, record.tolerances);
    }
    if (result) *result = std::move(assembled);
  }
  finish_record(record, device);
  return record;
}

}  // namespace fluxjac
