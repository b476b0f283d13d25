// fluxjac — one case: a variant run on a mesh in one mode and tuning, timed, validated, made a RunRecord.
//
// `fluxjac run` and `fluxjac bench` both go through these functions: read the mesh once (prepare_mesh),
// get the reference once (read_reference or compute_reference), set each variant up once (setup_variant),
// then run any number of cases on it (run_case).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bench/device_probe.hpp"
#include "bench/report.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian.hpp"
#include "jacobian/jacobian_io.hpp"
#include "mesh/edge_mesh.hpp"
#include "parallel/communicator.hpp"
#include "parallel/local_part.hpp"
#include "registry/registry.hpp"

namespace fluxjac {

/// Receives one progress line (without newline); commands print them on stderr.
using Note = std::function<void(const std::string& line)>;

/// \brief A mesh read for runs, with what every case on it shares. On many ranks, mesh, state and pattern are this
/// rank's part (local ids: docs/design.md 9) and summary describes the whole mesh.
struct PreparedMesh {
  MeshSummary summary;
  std::string state_file;
  EdgeMesh mesh;
  FlowState state;
  JacobianPattern pattern;
  const Communicator* comm = nullptr;  ///< the ranks that share the mesh (one: the single-process path)
  std::optional<RankLayout> layout;    ///< set on many ranks
  PartitionSummary partition;          ///< ranks == 1 on one rank

  bool distributed() const { return layout.has_value(); }
};

/// \brief Reads and validates a mesh file and its state (from state_file, or the mesh file when empty), builds
/// the block-CSR pattern and measures the ordering. `name` and `order` label the records. On many ranks
/// (comm.distributed()), each reads its part (read_local_part) and the summary is gathered over the ranks.
PreparedMesh prepare_mesh(const std::string& name, const std::string& file, const std::string& state_file,
                          const std::string& order, const Note& note, const Communicator& comm = Communicator::world());

/// \brief The Jacobian runs are validated against, and where it came from.
struct ReferenceJacobian {
  JacobianPattern pattern;
  Jacobian jacobian;
  std::string source;  ///< "CPU multivariate dual" or the stored file
  JacobianRows rows;   ///< on many ranks: this rank's owned rows (pattern and jacobian then stay empty)
};

/// \brief A stored Jacobian (.h5 written by `run --output`); on many ranks, each reads its own rows.
ReferenceJacobian read_reference(const std::string& path, const PreparedMesh& mesh, const Note& note);

/// \brief Empty when the stored reference has the mesh's pattern; else the first difference (the same on all ranks).
std::string reference_pattern_difference(const PreparedMesh& mesh, const ReferenceJacobian& reference);

/// \brief The CPU reference assembled on the mesh (slow on big meshes: computed once per mesh).
ReferenceJacobian compute_reference(const PreparedMesh& mesh, const Note& note);

/// \brief What one case runs.
struct CaseRequest {
  std::string variant;
  TimingOptions timing;                          ///< warm-up, repetitions, mode, edges per block
  const ReferenceJacobian* reference = nullptr;  ///< validate against it (mode full only) when set
  Tolerances tolerances;
};

/// \brief Creates a registered variant and moves the mesh to it (device upload for GPU variants).
std::unique_ptr<Variant> setup_variant(const std::string& name, const PreparedMesh& mesh);

/// \brief The fields of a record that do not depend on running: mesh, variant description, request.
RunRecord case_record(const PreparedMesh& mesh, const CaseRequest& request);

/// \brief Runs one case on a variant set up on `mesh`: warm-up and timed repetitions, validation against
/// the reference (mode full), resources and derived figures. `result`, when given and the mode is full,
/// receives the assembled Jacobian. Errors (Error with an exit code) propagate.
RunRecord run_case(Variant& variant, const PreparedMesh& mesh, const CaseRequest& request,
                   const std::optional<DeviceCeilings>& device, Jacobian* result = nullptr);

}  // namespace fluxjac
