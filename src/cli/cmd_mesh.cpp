// fluxjac mesh gen: jittered box meshes of tetrahedra, prisms or both, with median-dual metrics and a state.
// fluxjac mesh dual: the median-dual edge mesh of an element mesh (scripts/import_mesh.py writes those).
// Both pipelines live in src/mesh (generator.hpp, mesh_dual.hpp); this file parses options and reports.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "mesh/generator.hpp"
#include "mesh/mesh_dual.hpp"
#include "mesh/ordering.hpp"
#include "part/local_part.hpp"
#include "part/part_writer.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/named_enum.hpp"
#include "util/note.hpp"
#include "util/output_paths.hpp"

namespace fluxjac {
namespace {

/// Stage lines on stderr: one updating line on a terminal, one line per stage in logs; silent when quiet.
class StageReporter {
 public:
  StageReporter(std::string command, bool quiet)
      : command_(std::move(command)), quiet_(quiet), terminal_(isatty(fileno(stderr)) != 0) {}

  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  void operator()(const std::string& stage, double fraction) const {
    if (quiet_) return;
    std::fprintf(stderr, "%s[%s %5.1f s] %3.0f%%  %-24s%s", terminal_ ? "\r" : "", command_.c_str(), elapsed(),
                 100.0 * fraction, stage.c_str(), terminal_ && stage != "done" ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  std::string command_;
  bool quiet_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// ---- mesh gen ----------------------------------------------------------------------------------------

struct MeshGenOptions {
  BoxMeshSpec spec;
  std::string kind = to_string(BoxMeshSpec{}.kind);    ///< parsed into spec.kind when the command runs
  std::string order = to_string(BoxMeshSpec{}.order);  ///< parsed into spec.order
  std::string output;
  bool quiet = false;
};

/// `mesh gen` under mpirun: each rank generates its slab and writes its rows of one partitioned file.
int generate_in_parts(const Communicator& comm, const MeshGenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Note note = options.quiet || !comm.is_root()
                        ? Note()
                        : Note([](const std::string& line) { std::fprintf(stderr, "[mesh gen] %s\n", line.c_str()); });
  PartSource source;
  source.spec = options.spec;
  source.keep_geometry = true;
  LocalPart part = make_part(comm, source, note);
  const auto write_start = std::chrono::steady_clock::now();
  EdgeMeshExtras extras;
  extras.boundary_nodes = std::move(part.boundary_flags);
  const CellCounts cells = box_mesh_cells(options.spec);
  extras.cells = cells;
  extras.order = to_string(options.spec.order);
  write_partitioned_file(comm, part, part.original_ids, options.output, part.layout.source, extras,
                         [&](const h5::File& file) { write_box_mesh_generator_record(file, options.spec); });
  const SetupStep write = finish_step(comm, "write", StepKind::kWrite, write_start);
  say(note, "generate: " + step_line(write));
  const double seconds = comm.max(seconds_since(start));
  const RankLayout& layout = part.layout;
  if (comm.is_root())
    fmt::print(
        "{}: {} nodes, {} edges ({:.2f} edges per node), {} tetrahedra, {} prisms, order {} within each of "
        "{} parts, edge cut {}, {:.1f} s, peak host memory per rank {} (max)\n",
        options.output, layout.global_nodes, layout.global_edges,
        double(layout.global_edges) / double(layout.global_nodes), cells.tetrahedra, cells.prisms, options.order,
        comm.size(), part.partition.statistics.edge_cut, seconds, format_bytes(write.peak_bytes.max));
  return 0;
}

int generate(MeshGenOptions options) {
  // Under mpirun every rank checks the output (rank 0 writes the file, every rank its rows).
  check_output_paths({}, {{"--output", options.output}});
  options.spec.kind = parse_mesh_kind(options.kind);
  options.spec.order = parse_node_ordering(options.order);
  if (Communicator::world().distributed()) return generate_in_parts(Communicator::world(), options);
  const StageReporter report("mesh gen", options.quiet);
  const GeneratedMesh generated = generate_box_mesh(options.spec, std::cref(report));
  write_generated_mesh(options.output, generated, options.spec);
  const EdgeMesh& mesh = generated.mesh;
  fmt::print(
      "{}: {} nodes, {} edges ({:.2f} edges per node), {} tetrahedra, {} prisms, order {}, bandwidth {}, "
      "{:.1f} s\n",
      options.output, mesh.n_nodes, mesh.n_edges(), double(mesh.n_edges()) / double(mesh.n_nodes),
      generated.n_tetrahedra, generated.n_prisms, options.order, ordering_bandwidth(mesh), report.elapsed());
  return 0;
}

// ---- mesh dual ---------------------------------------------------------------------------------------

struct MeshDualOptions {
  std::string input;
  std::string output;
  std::string order = to_string(DualMeshSettings{}.order);
  std::uint64_t seed = DualMeshSettings{}.seed;
  std::string state;  ///< empty: the default of choose_dual_state
  FreestreamConditions freestream;
  bool quiet = false;
  const CLI::Option* freestream_options[3] = {};  ///< --mach, --alpha, --beta: were they given?
};

int build_dual(const MeshDualOptions& options) {
  check_output_paths({{"the input", options.input}}, {{"--output", options.output}});
  DualMeshSettings settings;
  settings.order = parse_node_ordering(options.order);
  settings.seed = options.seed;
  settings.freestream = options.freestream;
  const std::optional<DualState> requested_state =
      options.state.empty() ? std::nullopt : std::optional<DualState>(parse_dual_state(options.state));
  const StageReporter report("mesh dual", options.quiet);
  report("read", 0.0);
  ElementMeshFile input = read_element_mesh(options.input);
  settings.state = choose_dual_state(requested_state, input, options.input);
  if (settings.state != DualState::kFreestream)
    for (const CLI::Option* option : options.freestream_options)
      if (option && option->count() > 0)
        fail(ExitCode::kUsage, "{} sets the freestream state, but the state is '{}' (add --state freestream)",
             option->get_name(), to_string(settings.state));

  const DualMesh dual = make_dual_mesh(std::move(input), options.input, settings, std::cref(report));
  report("write", 0.85);
  if (dual.n_isolated_nodes > 0)
    std::fprintf(stderr,
                 "fluxjac: warning: %s: %lld nodes belong to no cell: they get no edge and zero dual volume "
                 "(scripts/import_mesh.py drops such nodes)\n",
                 options.input.c_str(), static_cast<long long>(dual.n_isolated_nodes));
  write_dual_mesh(options.output, dual);
  report("done", 1.0);

  const std::string state_text = settings.state == DualState::kFreestream
                                     ? fmt::format("freestream Mach {} alpha {} beta {}", settings.freestream.mach,
                                                   settings.freestream.alpha_degrees, settings.freestream.beta_degrees)
                                 : settings.state == DualState::kInput ? std::string("from the input")
                                                                       : std::string("none");
  const EdgeMesh& mesh = dual.mesh;
  fmt::print(
      "{}: {} nodes, {} edges ({:.2f} edges per node) from {}; order {}, bandwidth {}; interior dual closure "
      "{:.2e} of the mean face area over {} nodes ({} boundary nodes); state {}; {:.1f} s\n",
      options.output, mesh.n_nodes, mesh.n_edges(), double(mesh.n_edges()) / double(mesh.n_nodes),
      dual.extras.cells->text(), options.order, ordering_bandwidth(mesh), dual.closure.max_relative,
      dual.closure.nodes_checked, dual.n_boundary_nodes, state_text, report.elapsed());
  return 0;
}

void add_gen_command(CLI::App& mesh, CommandAction& action) {
  auto options = std::make_shared<MeshGenOptions>();
  CLI::App* gen = add_command(
      mesh,
      {"gen",
       "Generate a box mesh of N^3 hexahedra split into tetrahedra, prisms or a mix. The unit box is jittered; the "
       "mix has prism layers near z = 0 and tetrahedra above, about 5.4 edges per node like the paper's wing-body "
       "mesh. The file holds median-dual metrics, dual volumes, a node ordering, and a Mach 0.85 state with "
       "stagnation and supersonic regions. "
       "N = 100 with --kind mixed gives the paper's size (about 1M nodes, 6M edges)."},
      action, [options](const CLI::App&) { return generate(*options); });
  gen->add_option("--kind", options->kind, "cell kind: " + name_list<MeshKind>())->capture_default_str();
  gen->add_option("--n", options->spec.n, "hexahedra per direction: (N+1)^3 nodes")
      ->required()
      ->check(CLI::Range(1, 1200));
  gen->add_option("--order", options->order, "node ordering: " + name_list<NodeOrdering>() + " (reverse Cuthill-McKee)")
      ->capture_default_str();
  gen->add_option("--jitter", options->spec.jitter, "random displacement of interior nodes, fraction of the spacing")
      ->check(CLI::Range(0.0, 0.449))
      ->capture_default_str();
  gen->add_option("--seed", options->spec.seed, "random seed (jitter and random ordering)")->capture_default_str();
  gen->add_option("-o,--output", options->output, "output mesh file (.h5), written atomically")->required();
  gen->add_flag("-q,--quiet", options->quiet, "no progress on stderr");
}

void add_dual_command(CLI::App& mesh, CommandAction& action) {
  auto options = std::make_shared<MeshDualOptions>();
  CLI::App* dual = add_command(
      mesh,
      {"dual",
       "Compute the median-dual edge mesh of an element mesh: edges, dual-face normals and areas (triangles of edge "
       "midpoint, face centroid and cell centroid; quadrilateral faces split the same way by both cells), dual "
       "volumes, an optional node reordering, a state, and the boundary-node flags. The input is a "
       "fluxjac-element-mesh HDF5 file (docs/formats.md) of tetrahedra, pyramids, prisms and hexahedra in any mix; "
       "scripts/import_mesh.py writes one from Gmsh, SU2, CGNS, VTK, Medit and other meshes. Edge orientation "
       "(L < R) does not depend on the cell numbering; an inverted or degenerate cell is an error naming the cell.",
       "Example (wing.msh from gmsh, e.g. scripts/make_wing_mesh.sh --keep):\n"
       "  /usr/bin/python3 scripts/import_mesh.py wing.msh -o wing-elements.h5\n"
       "  fluxjac mesh dual wing-elements.h5 --order rcm --mach 0.8 --alpha 2.5 -o wing.h5\n"
       "  fluxjac info wing.h5"},
      action, [options](const CLI::App&) { return build_dual(*options); });
  dual->add_option("elements", options->input, "input element mesh (.h5, format fluxjac-element-mesh)")->required();
  dual->add_option("-o,--output", options->output, "output edge mesh (.h5, docs/formats.md), written atomically")
      ->required();
  dual->add_option(
          "--order", options->order,
          "node ordering: " + name_list<NodeOrdering>() + " (natural: as in the input; rcm: reverse Cuthill-McKee)")
      ->capture_default_str();
  dual->add_option("--seed", options->seed, "random seed of --order random")->capture_default_str();
  dual->add_option("--state", options->state,
                   "flow state to store, " + name_list<DualState>() +
                       ": freestream (uniform, rho = 1, p = 1/gamma, set by --mach --alpha --beta), input (the "
                       "file's /elements/state/Q, renumbered with the nodes) or none; default: input when the file "
                       "has a state, else freestream");
  options->freestream_options[0] = dual->add_option("--mach", options->freestream.mach, "freestream Mach number")
                                       ->check(CLI::Range(0.0, 50.0))
                                       ->capture_default_str();
  options->freestream_options[1] =
      dual->add_option("--alpha", options->freestream.alpha_degrees,
                       "angle of attack in degrees: the flow turns from +x towards +z (z is up)")
          ->check(CLI::Range(-90.0, 90.0))
          ->capture_default_str();
  options->freestream_options[2] =
      dual->add_option("--beta", options->freestream.beta_degrees, "sideslip angle in degrees, towards +y")
          ->check(CLI::Range(-90.0, 90.0))
          ->capture_default_str();
  dual->add_flag("-q,--quiet", options->quiet, "no progress on stderr");
}

}  // namespace

void add_mesh_command(CLI::App& app, CommandAction& action) {
  CLI::App* mesh = add_command(
      app,
      {"mesh",
       "Make edge meshes (gen, dual, partition): 'gen' builds box meshes, 'dual' the edge mesh of an element mesh, "
       "'partition' splits an edge mesh into parts for a run on many ranks. Each has its own help, e.g. 'fluxjac mesh "
       "partition --help'."},
      action, nullptr);
  mesh->require_subcommand(1);
  add_gen_command(*mesh, action);
  add_dual_command(*mesh, action);
  add_mesh_partition_command(*mesh, action);
}

}  // namespace fluxjac
