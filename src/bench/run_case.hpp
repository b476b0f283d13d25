// fluxjac — one case: a variant run on a mesh in one mode and tuning, timed, validated, made a RunRecord.
//
// `fluxjac run` and `fluxjac bench` both go through these functions: read the mesh once (prepare_mesh),
// get the reference once (read_reference or compute_reference), set each variant up once (setup_variant),
// then run any number of cases on it (run_case).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "bench/device_probe.hpp"
#include "bench/mesh_source.hpp"
#include "bench/report.hpp"
#include "bench/timed_loop.hpp"
#include "jacobian/compare.hpp"
#include "jacobian/jacobian.hpp"
#include "mesh/edge_mesh.hpp"
#include "part/local_part.hpp"
#include "ranks/communicator.hpp"
#include "registry/registry.hpp"
#include "util/note.hpp"

namespace fluxjac {

/// \brief A mesh read for runs, with what every case on it shares: this rank's part (docs/design.md, "Many GPUs"),
/// which on one process is the whole mesh with RankLayout::whole_mesh. mesh, state and pattern are in local ids;
/// summary describes the whole mesh.
struct PreparedMesh {
  MeshSummary summary;
  std::string state_file;
  EdgeMesh mesh;
  FlowState state;
  JacobianPattern pattern;
  const Communicator* comm = nullptr;  ///< the ranks that share the mesh (one: a single process)
  RankLayout layout;
  PartitionRecord partition;  ///< one part on one rank
};

/// \brief Each rank's part of a mesh from its source (make_part: a file and its state, or a generator spec), then the
/// block-CSR pattern, and the whole mesh's summary and ordering gathered over the ranks. `name` and `order` label the
/// records.
PreparedMesh prepare_mesh(const std::string& name, const PartSource& source, const std::string& order, const Note& note,
                          const Communicator& comm = Communicator::world());

/// \brief prepare_mesh for a mesh source (collective): under mpirun a generator spec without a state file is
/// generated in parts, one per rank (a one-rank case too, so that every rank count's mesh is made one way: no file, no
/// rank holding the whole mesh); otherwise rank 0 makes a missing file (the cache) and every rank reads its part.
/// Parts made here (generated, or a file the ranks partition) balance `balance` (PartSource::balance): `run` and
/// `bench` node-assembly work, `solve` rows.
PreparedMesh prepare_mesh_source(const MeshSource& source, const std::string& state_file, const Note& note,
                                 const Communicator& comm, PartBalance balance = PartBalance::kAssembly);

/// \brief The Jacobian runs are validated against, and where it came from: values on the mesh's pattern, of which
/// the owned rows are the reference (all rows on one process).
struct ReferenceJacobian {
  Jacobian jacobian;
  std::string source;  ///< "CPU multivariate dual" or the stored file
};

/// \brief A stored Jacobian (.h5 written by `run --output`): each rank reads its own rows (one process: all).
/// Error(kInvalidInput) on every rank when it is a Jacobian of another mesh, of another orientation than
/// `orientation`, or of Aoff in bf16 (checked before its values are read): a reference holds Aoff in f32.
ReferenceJacobian read_reference(const std::string& path, const PreparedMesh& mesh, Orientation orientation,
                                 const Note& note);

/// \brief The CPU reference assembled on the mesh, A or A^T, Aoff in f32 whatever the cases store (slow on big meshes:
/// computed once per mesh).
ReferenceJacobian compute_reference(const PreparedMesh& mesh, Orientation orientation, const Note& note);

/// \brief What one case runs.
struct CaseRequest {
  std::string variant;
  AssemblyOptions assembly;                      ///< mode, strategy, edges per block, orientation, Aoff precision
  TimingOptions timing;                          ///< warm-up, repetitions, progress
  const ReferenceJacobian* reference = nullptr;  ///< validate against it (mode full only) when set
  Tolerances tolerances;                         ///< as asked: a bf16 case raises Aoff's (validation_tolerances)
};

/// \brief Creates a registered variant and moves the mesh to it (device upload for GPU variants).
std::unique_ptr<Variant> setup_variant(const std::string& name, const PreparedMesh& mesh);

/// \brief The fields of a record that do not depend on running: mesh, variant description, request.
RunRecord case_record(const PreparedMesh& mesh, const CaseRequest& request);

/// \brief Runs one case on a variant set up on `mesh`: the variant prepared (the case's limits checked on every rank
/// together), the timed loop (timed_loop.hpp), validation against the reference (mode full), resources and derived
/// figures. `result`, when given and the mode is full, receives the assembled Jacobian. Errors (Error with an exit
/// code) propagate.
RunRecord run_case(Variant& variant, const PreparedMesh& mesh, const CaseRequest& request,
                   const std::optional<DeviceCeilings>& device, Jacobian* result = nullptr);

}  // namespace fluxjac
