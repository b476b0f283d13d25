#include "bench/run_case.hpp"

#include <chrono>

#include <fmt/format.h>

#include "jacobian/jacobian_io.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_io.hpp"
#include "mesh/ordering.hpp"
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

PreparedMesh prepare_mesh(const std::string& name, const std::string& file, const std::string& state_file,
                          const std::string& order, const Note& note) {
  PreparedMesh prepared;
  auto start = std::chrono::steady_clock::now();
  prepared.mesh = read_edge_mesh(file);
  prepared.state_file = state_file.empty() ? file : state_file;
  prepared.state = read_flow_state(prepared.state_file, prepared.mesh.n_nodes);
  say(note, fmt::format("read {}: {} nodes, {} edges ({:.2f} s)", file, prepared.mesh.n_nodes, prepared.mesh.n_edges(),
                        seconds_since(start)));
  start = std::chrono::steady_clock::now();
  prepared.pattern = JacobianPattern::build(prepared.mesh);
  say(note, fmt::format("block-CSR pattern: {} off-diagonal blocks ({:.2f} s)", prepared.pattern.nnz(),
                        seconds_since(start)));

  MeshSummary& summary = prepared.summary;
  summary.name = name;
  summary.file = file;
  summary.order = order;
  if (summary.order.empty()) {
    // Files from `fluxjac mesh gen` and `mesh dual` record their ordering; others have none.
    try {
      summary.order = read_edge_mesh_extras(file, prepared.mesh.n_nodes).order;
    } catch (const Error&) {
      summary.order.clear();
    }
  }
  summary.n_nodes = prepared.mesh.n_nodes;
  summary.n_edges = prepared.mesh.n_edges();
  summary.n_offdiag_blocks = prepared.pattern.nnz();
  summary.ordering_bandwidth = ordering_bandwidth(prepared.mesh);
  summary.mean_edge_span = mean_edge_span(prepared.mesh);
  return prepared;
}

ReferenceJacobian read_reference(const std::string& path, const Note& note) {
  const auto start = std::chrono::steady_clock::now();
  StoredJacobian stored = read_jacobian(path);
  say(note, fmt::format("reference: {} ({:.2f} s)", path, seconds_since(start)));
  return {std::move(stored.pattern), std::move(stored.jacobian), path};
}

ReferenceJacobian compute_reference(const PreparedMesh& mesh, const Note& note) {
  say(note, fmt::format("reference: computing the CPU multivariate dual on {} edges ...", mesh.summary.n_edges));
  const auto start = std::chrono::steady_clock::now();
  ReferenceJacobian reference{mesh.pattern, {}, "CPU multivariate dual"};
  assemble_reference(mesh.mesh, mesh.state, mesh.pattern, reference.jacobian);
  say(note, fmt::format("reference: CPU multivariate dual ({:.2f} s)", seconds_since(start)));
  return reference;
}

std::unique_ptr<Variant> setup_variant(const std::string& name, const PreparedMesh& mesh) {
  std::unique_ptr<Variant> variant = Registry::instance().create(name);
  variant->setup(mesh.mesh, mesh.state, mesh.pattern);
  return variant;
}

RunRecord case_record(const PreparedMesh& mesh, const CaseRequest& request) {
  RunRecord record;
  record.mesh = mesh.summary;
  record.variant = request.variant;
  for (const VariantInfo& info : Registry::instance().list())
    if (info.name == request.variant) {
      record.backend = to_string(info.backend);
      record.threads_per_edge = info.threads_per_edge;
      record.threads_per_side = info.threads_per_side;
      if (info.backend == Backend::kCuda) record.assembly = to_string(resolve_strategy(request.timing.strategy, info));
    }
  record.mode = to_string(request.timing.mode);
  record.edges_per_block_requested = request.timing.edges_per_block;
  record.warmup = request.timing.warmup;
  record.reps = request.timing.reps;
  record.tolerances = request.tolerances;
  return record;
}

RunRecord run_case(Variant& variant, const PreparedMesh& mesh, const CaseRequest& request,
                   const std::optional<DeviceCeilings>& device, Jacobian* result) {
  RunRecord record = case_record(mesh, request);
  const TimingSamples samples = variant.run(request.timing);
  // Statistics of fewer samples than asked would describe runs that did not happen.
  if (samples.assembly_ms.size() != static_cast<std::size_t>(request.timing.reps))
    fail(ExitCode::kRuntime, "variant '{}' returned {} timings for {} repetitions", request.variant,
         samples.assembly_ms.size(), request.timing.reps);
  record.assembly_ms = Stats::of(samples.assembly_ms);
  record.zero_ms = Stats::of(samples.zero_ms);
  record.resources = variant.resources();

  const bool full = request.timing.mode == AssemblyMode::kFull;
  const bool validate = full && request.reference != nullptr;
  if (validate || (full && result)) {
    Jacobian assembled;
    variant.fetch(assembled);
    if (validate) {
      record.validated = true;
      record.comparison = compare_jacobians(mesh.pattern, assembled, request.reference->pattern,
                                            request.reference->jacobian, request.tolerances);
    }
    if (result) *result = std::move(assembled);
  }
  finish_record(record, device);
  return record;
}

}  // namespace fluxjac
