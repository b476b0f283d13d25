#include "gpu/cuda_assembly.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "assembly/edge_input.hpp"
#include "gpu/event_timer.hpp"
#include "gpu/row_blocks.hpp"
#include "mesh/ordering.hpp"

namespace fluxjac {
namespace {

/// visited[r] = state[row_node[r]]: the state in the node kernel's visit order, so that the neighbours a block
/// reads lie close in memory as they lie close in the visit.
__global__ void gather_visited_state(const double* __restrict__ state, const node_index* __restrict__ row_node,
                                     std::int64_t rows, double* __restrict__ visited) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * kBlock;
       i += std::int64_t{gridDim.x} * blockDim.x)
    visited[i] = state[std::int64_t{row_node[i / kBlock]} * kBlock + i % kBlock];
}

}  // namespace

CudaAssembly::CudaAssembly(VariantInfo info) : info_(std::move(info)) {
  if (!info_.tuning) fail(ExitCode::kRuntime, "GPU variant '{}' has no tuning", info_.name);
}

std::optional<KernelResources> CudaAssembly::resources() const {
  const AssemblyStrategy strategy = units_per_block_ ? strategy_ : info_.preferred_assembly;
  const KernelForm kernel_form = form();  // A without the residual before the first prepare
  const cudaFuncAttributes attributes = kernel_attributes(strategy, kernel_form);
  KernelResources resources;
  resources.registers = attributes.numRegs;
  resources.local_bytes = attributes.localSizeBytes;
  resources.max_block_threads = attributes.maxThreadsPerBlock;
  const int units = units_per_block_ ? units_per_block_ : default_units_per_block(strategy);
  resources.edges_per_block = units;
  if (strategy == AssemblyStrategy::kNode) resources.node_traversal = node_traversal_;
  if (strategy == AssemblyStrategy::kEdge) {
    resources.shared_bytes = attributes.sharedSizeBytes + edge_block_shared_bytes(units, kernel_form.residual);
    resources.block_threads = units * lanes(strategy);
  } else {
    // The packing of the last node run, or, before one, the default's plan (before setup: full tiles of single
    // rows, the worst case, halved as a run would halve it).
    const NodeLaunch launch =
        node_launch_.requested ? node_launch_ : plan_fitting_rows(units, true, kernel_form, nullptr);
    resources.edges_per_block = launch.capacity;
    resources.shared_bytes = attributes.sharedSizeBytes + launch.shared_bytes;
    resources.block_threads = launch.threads;
  }
  return resources;
}

int CudaAssembly::default_units_per_block(AssemblyStrategy strategy) const {
  // The tuned size. An edge block has one thread per lane, so it takes fewer edges where the kernel's registers allow
  // fewer threads per block; a node tile larger than its block's threads is worked in turns.
  if (strategy == AssemblyStrategy::kNode) return tuning().node_tile_entries;
  // One edge kernel for both orientations; the one with the residual has as many registers or more.
  const int max_threads = kernel_attributes(strategy, KernelForm{Orientation::kA, true}).maxThreadsPerBlock;
  return std::max(1, std::min(tuning().edges_per_block, max_threads / lanes(strategy)));
}

CudaAssembly::NodeLaunch CudaAssembly::plan_rows(int capacity, KernelForm form, RowBlocks* rows) const {
  NodeLaunch launch;
  launch.form = form;
  launch.capacity = capacity;
  RowBlocks packed = pack_rows(host_row_ptr_, capacity);
  if (n_nodes_ == 0) packed.max_entries = packed.max_rows = capacity;  // before setup: a full tile
  launch.max_entries = packed.max_entries;
  launch.max_rows = packed.max_rows;
  launch.tiles = static_cast<int>(packed.blocks());
  const int max_threads = kernel_attributes(AssemblyStrategy::kNode, form).maxThreadsPerBlock;
  // One thread per lane of a full tile, rounded to whole warps, at most the tuning's threads (then each thread works
  // several lanes in turn: fewer barriers per unit of work, measured faster: docs/tuning.md, "Lanes per thread").
  launch.threads = std::min(
      {(capacity * lanes(AssemblyStrategy::kNode) + 31) / 32 * 32, max_threads / 32 * 32, tuning().node_block_threads});
  launch.shared_bytes = node_block_shared_bytes(launch.max_entries, launch.max_rows, form.residual);
  if (rows) *rows = std::move(packed);
  return launch;
}

CudaAssembly::NodeLaunch CudaAssembly::plan_fitting_rows(int requested, bool may_halve, KernelForm form,
                                                         std::vector<NodeTile>* tiles) const {
  const std::size_t shared_limit = max_shared_bytes_per_block();
  // A variant's default tile outgrows shared memory on meshes of many short rows: halve it
  // until it fits. A size the user asked for is refused instead.
  int capacity = requested;
  RowBlocks packed;
  NodeLaunch launch = plan_rows(capacity, form, tiles ? &packed : nullptr);
  while (may_halve && launch.shared_bytes > shared_limit && capacity > 1) {
    capacity /= 2;
    launch = plan_rows(capacity, form, tiles ? &packed : nullptr);
  }
  if (launch.shared_bytes > shared_limit && may_halve)
    fail(ExitCode::kInvalidInput,
         "node assembly: a row of this mesh has {} incident edges, whose tile needs {} bytes of shared memory; the "
         "device allows {}: use --assembly edge for this mesh",
         launch.max_entries, launch.shared_bytes, shared_limit);
  if (launch.shared_bytes > shared_limit)
    fail(ExitCode::kUsage,
         "--edges-per-block {} (node assembly: incident edges per block) needs {} bytes of shared memory, the "
         "device allows {}: use fewer edges per block",
         capacity, launch.shared_bytes, shared_limit);
  launch.requested = requested;
  launch.may_halve = may_halve;
  if (tiles) *tiles = node_tiles(packed, host_row_ptr_);
  return launch;
}

void CudaAssembly::setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) {
  // Slots and row pointers are int32 block indices (entry offsets are computed in int64).
  if (pattern.nnz() > std::numeric_limits<std::int32_t>::max())
    fail(ExitCode::kInvalidInput, "mesh too large for the GPU variants: {} off-diagonal blocks (limit {})",
         pattern.nnz(), std::numeric_limits<std::int32_t>::max());
  n_edges_ = mesh.n_edges();
  n_nodes_ = mesh.n_nodes;
  std::vector<std::int32_t> slots(static_cast<std::size_t>(2 * n_edges_));
  std::vector<double> entry_face(static_cast<std::size_t>(pattern.nnz()) * 4);
  for (edge_index e = 0; e < n_edges_; ++e) {
    const auto lr = static_cast<std::int32_t>(pattern.slot_lr[e]), rl = static_cast<std::int32_t>(pattern.slot_rl[e]);
    slots[2 * e] = lr;
    slots[2 * e + 1] = rl;
    // Entry (L, R) sees the face from L: the normal as stored; entry (R, L) sees it from R: flipped.
    for (int k = 0; k < 3; ++k) {
      entry_face[4 * static_cast<std::size_t>(lr) + k] = mesh.normals[3 * e + k];
      entry_face[4 * static_cast<std::size_t>(rl) + k] = -mesh.normals[3 * e + k];
    }
    entry_face[4 * static_cast<std::size_t>(lr) + 3] = entry_face[4 * static_cast<std::size_t>(rl) + 3] = mesh.areas[e];
  }
  const std::vector<block_offset> targets = node_entry_targets(pattern, Orientation::kA);
  host_targets_of_a_.assign(targets.begin(), targets.end());
  setup_node_map(mesh, pattern, entry_face);
  node_launch_ = NodeLaunch{};
  edges_.upload(mesh.edges.data(), mesh.edges.size());
  normals_.upload(mesh.normals.data(), mesh.normals.size());
  areas_.upload(mesh.areas.data(), mesh.areas.size());
  slots_.upload(slots.data(), slots.size());
  state_.upload(state.Q.data(), state.Q.size());
  adiag_.allocate(static_cast<std::size_t>(pattern.n_nodes) * kBlockEntries);
  aoff_entries_ = static_cast<std::size_t>(pattern.nnz()) * kBlockEntries;
  aoff_.allocate(0);
  aoff_bf16_.allocate(0);
  hold_aoff(options_.aoff_precision);
  holds_full_assembly_ = false;
}

void CudaAssembly::hold_aoff(AoffPrecision precision) {
  if (precision == AoffPrecision::kBf16) {
    aoff_.allocate(0);
    if (aoff_bf16_.size() != aoff_entries_) aoff_bf16_.allocate(aoff_entries_);
  } else {
    aoff_bf16_.allocate(0);
    if (aoff_.size() != aoff_entries_) aoff_.allocate(aoff_entries_);
  }
}

void CudaAssembly::setup_node_map(const EdgeMesh& mesh, const JacobianPattern& pattern,
                                  const std::vector<double>& face) {
  // A block's rows share neighbours only when the order keeps them close: in a scattered order (random, or a
  // mesh generator's), each block's Aoff stores and state loads land all over memory and its partial 32-byte
  // sectors leave L2 unmerged. Then visit rows in RCM order, when that shortens the mean edge span 4 times or more.
  std::vector<node_index> new_id_of_old;
  if (mesh.n_edges() > 0) {
    new_id_of_old = reverse_cuthill_mckee(mesh);
    double rcm_span = 0.0;
    for (edge_index e = 0; e < mesh.n_edges(); ++e)
      rcm_span += std::abs(double(new_id_of_old[mesh.left(e)]) - double(new_id_of_old[mesh.right(e)]));
    if (4.0 * rcm_span / static_cast<double>(mesh.n_edges()) > mean_edge_span(mesh)) new_id_of_old.clear();
  }
  node_traversal_ = new_id_of_old.empty() ? "file" : "RCM";
  if (new_id_of_old.empty()) {
    host_row_ptr_.assign(pattern.row_ptr.begin(), pattern.row_ptr.end());
    col_idx_.upload(pattern.col_idx.data(), pattern.col_idx.size());
    entry_face_.upload(face.data(), face.size());
    visited_entry_.clear();
    row_node_.allocate(0);
    visited_state_.allocate(0);
  } else {
    // Rows move whole, entries keep their order within a row: the same sums, the same output layout.
    std::vector<node_index> row_node(static_cast<std::size_t>(pattern.n_nodes));
    for (std::int64_t node = 0; node < pattern.n_nodes; ++node)
      row_node[new_id_of_old[node]] = static_cast<node_index>(node);
    host_row_ptr_.assign(1, 0);
    std::vector<node_index> columns;
    std::vector<double> visited_face;
    columns.reserve(pattern.col_idx.size());
    visited_entry_.clear();
    visited_entry_.reserve(pattern.col_idx.size());
    visited_face.reserve(face.size());
    for (const node_index node : row_node) {
      for (block_offset k = pattern.row_ptr[node]; k < pattern.row_ptr[node + 1]; ++k) {
        columns.push_back(new_id_of_old[pattern.col_idx[k]]);  // the state is read in visit order
        visited_entry_.push_back(static_cast<std::int32_t>(k));
        visited_face.insert(visited_face.end(), &face[4 * k], &face[4 * k] + 4);
      }
      host_row_ptr_.push_back(static_cast<std::int32_t>(columns.size()));
    }
    col_idx_.upload(columns.data(), columns.size());
    entry_face_.upload(visited_face.data(), visited_face.size());
    row_node_.upload(row_node.data(), row_node.size());
    visited_state_.allocate(static_cast<std::size_t>(pattern.n_nodes) * kBlock);
  }
  row_ptr_.upload(host_row_ptr_.data(), host_row_ptr_.size());
  targets_orientation_.reset();
}

void CudaAssembly::upload_node_targets(Orientation orientation) {
  if (targets_orientation_ == orientation) return;
  const bool transposed = orientation == Orientation::kTransposed;
  if (transposed && visited_entry_.empty()) {
    entry_target_.allocate(0);  // each entry's own slot, in order: the kernel needs no array
  } else {
    // Visited entry v is pattern entry visited_entry_[v] (v itself in file order).
    const std::size_t n = host_targets_of_a_.size();
    std::vector<std::int32_t> targets(n);
    for (std::size_t v = 0; v < n; ++v) {
      const std::int32_t entry = visited_entry_.empty() ? static_cast<std::int32_t>(v) : visited_entry_[v];
      targets[v] = transposed ? entry : host_targets_of_a_[entry];
    }
    entry_target_.upload(targets.data(), targets.size());
  }
  targets_orientation_ = orientation;
}

void CudaAssembly::prepare(const AssemblyOptions& options) {
  check_assembly_precision(options.aoff_precision);
  strategy_ = resolve_strategy(options.strategy, info_);
  units_per_block_ = options.edges_per_block > 0 ? options.edges_per_block : default_units_per_block(strategy_);
  const int max_threads =  // limited by the kernel's registers
      kernel_attributes(strategy_, KernelForm{options.orientation, options.residual}).maxThreadsPerBlock;
  if (strategy_ == AssemblyStrategy::kEdge && units_per_block_ * lanes(strategy_) > max_threads)
    fail(ExitCode::kUsage,
         "--edges-per-block {} gives {} threads per block for '{}' ({} lanes per edge); its kernel allows at most {} "
         "(registers): use at most {} edges per block",
         units_per_block_, units_per_block_ * lanes(strategy_), info_.name, lanes(strategy_), max_threads,
         max_threads / lanes(strategy_));
  int flags = kStageCompute | kStageScatter;
  if (options.mode == AssemblyMode::kComputeOnly) flags = kStageCompute;
  if (options.mode == AssemblyMode::kScatterOnly) flags = kStageScatter;
  if (options.orientation == Orientation::kTransposed) flags |= kStageTranspose;
  if (strategy_ == AssemblyStrategy::kNode) upload_node_targets(options.orientation);

  const bool may_halve = options.edges_per_block == 0;
  if (strategy_ == AssemblyStrategy::kNode &&
      (node_launch_.requested != units_per_block_ || node_launch_.may_halve != may_halve ||
       node_launch_.form != KernelForm{options.orientation, options.residual})) {
    std::vector<NodeTile> tiles;
    node_launch_ =
        plan_fitting_rows(units_per_block_, may_halve, KernelForm{options.orientation, options.residual}, &tiles);
    tiles_.upload(tiles.data(), tiles.size());
  }
  if (strategy_ == AssemblyStrategy::kNode) units_per_block_ = node_launch_.capacity;  // after any halving
  if (options.residual && residual_.size() != static_cast<std::size_t>(n_nodes_) * kBlock)
    residual_.allocate(static_cast<std::size_t>(n_nodes_) * kBlock);
  hold_aoff(options.aoff_precision);
  stage_flags_ = flags;
  holds_full_assembly_ = false;
  options_ = options;
}

void CudaAssembly::zero() {
  // Only the edge strategy accumulates into Adiag and the residual; the node strategy writes every row once.
  if (strategy_ == AssemblyStrategy::kEdge && n_edges_ > 0) {
    FLUXJAC_CUDA_CHECK(cudaMemsetAsync(adiag_.data(), 0, adiag_.size() * sizeof(double)));
    if (options_.residual) FLUXJAC_CUDA_CHECK(cudaMemsetAsync(residual_.data(), 0, residual_.size() * sizeof(double)));
  }
}

void CudaAssembly::assemble() {
  const DeviceEdges edges{edges_.data(), normals_.data(), areas_.data(), slots_.data(), state_.data(), n_edges_};
  const bool bf16 = options_.aoff_precision == AoffPrecision::kBf16;
  const DeviceJacobian jacobian{adiag_.data(), bf16 ? nullptr : aoff_.data(),
                                options_.residual ? residual_.data() : nullptr, bf16 ? aoff_bf16_.data() : nullptr};
  const DeviceNodeMap map{row_ptr_.data(),    col_idx_.data(), entry_target_.size() ? entry_target_.data() : nullptr,
                          entry_face_.data(), tiles_.data(),   row_node_.data()};
  // A rank that owns no edges (more ranks than a mesh can usefully hold) assembles nothing, but still takes part in
  // every halo exchange of the timed loop.
  const bool any_work = n_edges_ > 0;
  if (any_work && strategy_ == AssemblyStrategy::kEdge)
    launch_edge(edges, jacobian, units_per_block_, stage_flags_, options_.residual);
  else if (any_work && row_node_.size() == 0)
    launch_node(edges, map, jacobian, node_launch_, stage_flags_);
  else if (any_work)
    launch_visited(edges, map, jacobian, stage_flags_);
  FLUXJAC_CUDA_CHECK_LAUNCH();
  holds_full_assembly_ = options_.mode == AssemblyMode::kFull;
}

std::unique_ptr<Stopwatch> CudaAssembly::stopwatch() const { return std::make_unique<EventTimer>(); }

void CudaAssembly::launch_visited(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                                  int stage_flags) {
  // The copy into visit order is part of the assembly (the state changes between assemblies): timed with it.
  const auto rows = static_cast<std::int64_t>(row_node_.size());
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((rows * kBlock + 255) / 256, 65535));
  gather_visited_state<<<blocks, 256>>>(state_.data(), row_node_.data(), rows, visited_state_.data());
  FLUXJAC_CUDA_CHECK_LAUNCH();
  DeviceEdges visited = edges;
  visited.state = visited_state_.data();
  launch_node(visited, map, jacobian, node_launch_, stage_flags);
}

void CudaAssembly::fetch(Jacobian& out) {
  if (!holds_full_assembly_) {  // the last assembly was of another mode (or there was none): one in full first
    AssemblyOptions full = options_;
    full.mode = AssemblyMode::kFull;
    prepare(full);
    zero();
    assemble();
  }
  out.adiag.resize(adiag_.size());
  out.aoff.resize(aoff_entries_);
  out.residual.resize(options_.residual ? residual_.size() : 0);
  adiag_.download(out.adiag.data());
  if (options_.aoff_precision == AoffPrecision::kBf16) {
    // Widened exactly: a bfloat16 is the high 16 bits of a float32.
    std::vector<std::uint16_t> bits(aoff_entries_);
    aoff_bf16_.download(bits.data());
    std::transform(bits.begin(), bits.end(), out.aoff.begin(), widen_bf16);
  } else {
    aoff_.download(out.aoff.data());
  }
  if (options_.residual) residual_.download(out.residual.data());
}

}  // namespace fluxjac
