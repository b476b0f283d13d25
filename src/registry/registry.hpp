// fluxjac — the variant lifecycle and the self-registering registry (nvbench / RAJAPerf habits).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "assembly/edge_input.hpp"
#include "jacobian/aoff_precision.hpp"
#include "jacobian/jacobian.hpp"
#include "mesh/edge_mesh.hpp"
#include "registry/stopwatch.hpp"
#include "registry/variant_work.hpp"
#include "util/named_enum.hpp"

namespace fluxjac {

enum class Backend { kCpu, kCuda };
inline constexpr NamedValue<Backend> kBackendNames[] = {{Backend::kCpu, "cpu"}, {Backend::kCuda, "cuda"}};
constexpr const auto& names_of(Backend) { return kBackendNames; }

/// How derivative seeds are set (docs/design.md, "Two ways to get dF/dQ: seeded and direct").
enum class Seeding { kSeededPrimitive, kDirectConservative, kAnalytic };
inline constexpr NamedValue<Seeding> kSeedingNames[] = {{Seeding::kSeededPrimitive, "seeded (Alg. 3)"},
                                                        {Seeding::kDirectConservative, "direct (Alg. 4)"},
                                                        {Seeding::kAnalytic, "analytic"}};
constexpr const auto& names_of(Seeding) { return kSeedingNames; }

/// What the timed region contains (the paper's Table IV split).
enum class AssemblyMode { kFull, kComputeOnly, kScatterOnly };
inline constexpr NamedValue<AssemblyMode> kAssemblyModeNames[] = {{AssemblyMode::kFull, "full"},
                                                                  {AssemblyMode::kComputeOnly, "compute-only"},
                                                                  {AssemblyMode::kScatterOnly, "scatter-only"}};
constexpr const auto& names_of(AssemblyMode) { return kAssemblyModeNames; }
/// \brief The mode named `text`; Error(kUsage) "unknown mode 'TEXT': use full, compute-only or scatter-only".
inline AssemblyMode parse_assembly_mode(const std::string& text) { return parse_named<AssemblyMode>(text, "mode"); }

/// How GPU variants assemble (docs/tuning.md, "Edge and node assembly"): per edge with atomics into Adiag (the
/// paper's design), or per node, where each node sums its incident edges' outward-flux derivatives: no atomics.
/// kAuto is each variant's measured-fastest one (VariantInfo::preferred_assembly).
enum class AssemblyStrategy { kAuto, kEdge, kNode };
inline constexpr NamedValue<AssemblyStrategy> kAssemblyStrategyNames[] = {
    {AssemblyStrategy::kAuto, "auto"}, {AssemblyStrategy::kEdge, "edge"}, {AssemblyStrategy::kNode, "node"}};
constexpr const auto& names_of(AssemblyStrategy) { return kAssemblyStrategyNames; }
/// \brief The strategy named `text`; Error(kUsage) "unknown assembly 'TEXT': use auto, edge or node".
inline AssemblyStrategy parse_assembly_strategy(const std::string& text) {
  return parse_named<AssemblyStrategy>(text, "assembly");
}

/// \brief A GPU variant's tuning, measured on one GPU architecture (CUB's per-architecture policies): the register cap
/// its kernels are compiled with, the thread blocks of both assembly strategies and the strategy `--assembly auto`
/// runs. src/variants/tunings.hpp holds every variant's row; `fluxjac list` prints them.
struct GpuTuning {
  std::string_view variant;    ///< the variant's registry name
  int architecture = 0;        ///< compute capability x 10 of the GPUs it was measured on: 90 is sm_90 (H100, H200)
  int max_registers = 0;       ///< registers per thread of both assembly kernels (__maxnreg__)
  int edges_per_block = 0;     ///< edge assembly: edges per thread block
  int node_tile_entries = 0;   ///< node assembly: incident edges (whole rows) per tile, one tile per thread block
  int node_block_threads = 0;  ///< node assembly: threads per block; a tile with more lanes works them in turns
  int node_batch = 0;          ///< node assembly: index loads and stores a thread keeps in flight together
  AssemblyStrategy assembly = AssemblyStrategy::kNode;  ///< the strategy `--assembly auto` runs
};

/// \brief Runs a variant's per-lane work on the CPU, lane by lane, into one edge's local Jacobian and its flux
/// A F(Q_L, Q_R, n).
using LaneEmulator =
    std::function<void(const EdgeInput& edge, double local[kLocalJacobianEntries], double flux[kBlock])>;
/// \brief Runs a variant's node-based lanes on the CPU for one entry (i, j) of row i, as the threads of node i do:
/// `edge` as seen from i (i's state on the left, the normal pointing away from i), `block` receives D_ij and `flux`
/// A F(Q_i, Q_j, n).
using EntryEmulator = std::function<void(const EdgeInput& edge, double block[kBlockEntries], double flux[kBlock])>;

/// \brief What `fluxjac list` shows about a variant.
struct VariantInfo {
  std::string name;
  std::string description;
  Backend backend = Backend::kCpu;
  int threads_per_edge = 1;  ///< edge-based assembly (the paper's mapping)
  int threads_per_side = 1;  ///< node-based assembly: threads per (node, incident edge)
  Seeding seeding = Seeding::kDirectConservative;
  /// The GPU assembly strategy that `auto` picks: the faster one on the paper-size mesh (docs/tuning.md, "Edge and node
  /// assembly"); a GPU variant's is its tuning's.
  AssemblyStrategy preferred_assembly = AssemblyStrategy::kEdge;
  /// GPU variants: the tuning their kernels are compiled and launched with (their row of src/variants/tunings.hpp).
  std::optional<GpuTuning> tuning;
  /// False for CUDA variants in a build without CUDA: listed and CPU-tested, but not runnable.
  bool available = true;
  /// A CPU emulation (NAME:cpu, registered with every GPU variant): the GPU variant it runs on the CPU, its lanes one
  /// by one in the GPU kernels' assembly order (reference/emulated_assembly.hpp). Empty for every other variant.
  std::string emulates;
  /// The variant's lane mappings and seeding run on the CPU (GPU variants; empty for the reference).
  LaneEmulator emulate_edge_lanes;
  LaneEmulator emulate_node_lanes;
  /// The node-based lanes of one entry, as the node kernel runs them (emulated_assembly.hpp assembles with them).
  EntryEmulator emulate_node_entry;
  /// FP64 operations (counted from the lane work) and bytes per strategy: the variant's own floor.
  VariantWork work;
};

/// \brief Compiled resources of a GPU kernel, from cudaFuncGetAttributes.
struct KernelResources {
  int registers = 0;
  std::size_t local_bytes = 0;   ///< spill / stack bytes per thread
  std::size_t shared_bytes = 0;  ///< static + dynamic shared memory per block
  int block_threads = 0;
  int edges_per_block = 0;
  int max_block_threads = 0;   ///< the most threads per block the kernel's registers allow
  std::string node_traversal;  ///< node assembly: the order rows are visited in ("file" or "RCM"); else empty
};

/// \brief Where a variant keeps the flow state it assembles from: a run on many ranks refreshes the ghost rows
/// there (the halo exchange) before every repetition.
struct StateBuffer {
  double* data = nullptr;  ///< [n_nodes][5]
  std::int64_t n_nodes = 0;
  bool on_device = false;  ///< GPU memory (the GPU variants) or host memory (the CPU reference)
};

/// \brief What a case assembles: the settings a variant is prepared with (Variant::prepare) before its timed loop.
struct AssemblyOptions {
  AssemblyMode mode = AssemblyMode::kFull;
  int edges_per_block = 0;  ///< GPU tuning: edges (edge strategy) or incident edges, whole rows packed (node strategy)
                            ///< per block; 0 = default
  AssemblyStrategy strategy = AssemblyStrategy::kAuto;
  /// The matrix assembled: A, or A^T for adjoint solvers (docs/design.md, "The adjoint orientation").
  Orientation orientation = Orientation::kA;
  /// Also the residual R, summed in the same pass from the flux values the assembly computes (docs/design.md,
  /// "Residual, sign convention and the four blocks"); Jacobian::residual stays empty without it.
  bool residual = false;
  /// The precision Aoff is stored in, f32 or bf16 (never f64): a GPU variant's kernels store bfloat16, halving the
  /// bytes of the Aoff stores; a host variant rounds its float32 values when they are fetched. fetch() returns either
  /// as float32 (docs/design.md, "Aoff in bfloat16").
  AoffPrecision aoff_precision = AoffPrecision::kF32;
};

/// The strategy a GPU variant runs for a request: `auto` resolves to the variant's preferred one.
inline AssemblyStrategy resolve_strategy(AssemblyStrategy requested, const VariantInfo& info) {
  return requested == AssemblyStrategy::kAuto ? info.preferred_assembly : requested;
}

/// \brief One way of assembling the Jacobian. Lifecycle: setup -> prepare -> zero and assemble (any number of times)
/// -> fetch; prepare again for another case. A variant exposes only the work and its clock: warm-up, repetitions,
/// the ghost exchange and the timing around them are the timed loop's (src/bench/timed_loop.hpp; docs/design.md,
/// "Timing and the work model").
class Variant {
 public:
  virtual ~Variant() = default;
  virtual const VariantInfo& info() const = 0;
  /// Kernel resources (GPU variants only).
  virtual std::optional<KernelResources> resources() const { return std::nullopt; }
  /// \brief Moves inputs to where the variant runs and allocates outputs.
  virtual void setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) = 0;
  /// \brief Takes a case's settings and checks them against the case's limits before anything is assembled (Error
  /// naming what to change: a mode the variant has not, a block too large for its kernel or for shared memory).
  virtual void prepare(const AssemblyOptions& options) = 0;
  /// \brief Clears what the next assembly accumulates into (Adiag, edge strategy); nothing where it needs none.
  virtual void zero() = 0;
  /// \brief Assembles once as prepared. Work issued to a device may still run on return: the variant's stopwatch
  /// waits for it. After an assembly in mode full, fetch() returns a complete Jacobian.
  virtual void assemble() = 0;
  /// \brief A new stopwatch on the variant's clock, for one phase of its work (a steady clock on the CPU, CUDA
  /// events on the GPU).
  virtual std::unique_ptr<Stopwatch> stopwatch() const = 0;
  /// \brief Copies the last assembled Jacobian to the host (assembling it in full first when the last assembly was
  /// of another mode).
  virtual void fetch(Jacobian& out) = 0;
  /// \brief The state assemble() reads (valid after setup).
  virtual StateBuffer state_buffer() = 0;
};

/// The suffix that names a GPU variant's CPU emulation: hd:cpu.
inline constexpr std::string_view kEmulationSuffix = ":cpu";

/// \brief Name -> factory map filled by static VariantRegistrar objects (no central list to edit). Every GPU variant
/// NAME comes with its CPU emulation NAME:cpu, made by the factory EmulationRegistrar sets (the reference layer's).
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Variant>(const VariantInfo& info)>;

  static Registry& instance();
  /// Adds the variant, and NAME:cpu with it when the variant has lanes to emulate.
  void add(VariantInfo info, Factory factory);
  void set_emulation_factory(Factory factory) { emulation_factory_ = std::move(factory); }
  /// Registered variants: the CPU reference first, then by name; the CPU emulations (NAME:cpu) only when asked for.
  std::vector<VariantInfo> list(bool with_emulations = false) const;
  bool contains(const std::string& name) const;
  /// \brief The registered information of `name`; nullptr if no such variant is registered.
  const VariantInfo* find(const std::string& name) const;
  /// \brief Creates a variant; throws Error naming the registered variants if `name` is unknown or
  /// telling how to rebuild if it is not available in this build.
  std::unique_ptr<Variant> create(const std::string& name) const;
  /// \brief Expands "all" (the variants available in this build), "all:cpu" (every GPU variant's CPU emulation) and
  /// comma-separated lists into names.
  std::vector<std::string> resolve(const std::vector<std::string>& names) const;

 private:
  [[noreturn]] void throw_unknown(const std::string& name) const;
  struct Entry {
    VariantInfo info;
    Factory factory;
  };
  std::vector<Entry> entries_;
  Factory emulation_factory_;
};

/// \brief Registers a variant from a static object in the variant's own translation unit.
struct VariantRegistrar {
  VariantRegistrar(VariantInfo info, Registry::Factory factory);
};

/// \brief Sets, from a static object, the factory of every NAME:cpu emulation (it receives the emulation's info).
struct EmulationRegistrar {
  explicit EmulationRegistrar(Registry::Factory factory);
};

}  // namespace fluxjac
