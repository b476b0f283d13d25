// fluxjac — host side of every GPU variant: device buffers, launch configuration, CUDA-event timing.
//
// Compiled only with CUDA. A variant supplies the kernel through CudaVariant<Policy> (gpu_variant.hpp);
// everything else (one lifecycle for all variants, RAJAPerf habit) lives here.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "assembly/device_views.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_array.hpp"
#include "gpu/row_blocks.hpp"
#include "registry/registry.hpp"
#include "types.hpp"

namespace fluxjac {

/// \brief The GPU variant lifecycle; subclasses provide the kernel launch and its attributes.
class CudaAssembly : public Variant {
 public:
  /// `info` holds the variant's tuning.
  explicit CudaAssembly(VariantInfo info);
  const VariantInfo& info() const override { return info_; }
  std::optional<KernelResources> resources() const override;
  void setup(const EdgeMesh& mesh, const FlowState& state, const JacobianPattern& pattern) override;
  void prepare(const AssemblyOptions& options) override;
  void zero() override;
  void assemble() override;
  std::unique_ptr<Stopwatch> stopwatch() const override;
  void fetch(Jacobian& out) override;
  StateBuffer state_buffer() override { return {state_.data(), n_nodes_, true}; }

 protected:
  /// Which instantiation of a strategy's kernel runs: the orientation (the node strategy has a kernel for each) and
  /// whether it also sums the residual (a kernel with and one without, so that a Jacobian alone costs nothing more).
  struct KernelForm {
    Orientation orientation = Orientation::kA;
    bool residual = false;
    bool operator==(const KernelForm& other) const {
      return orientation == other.orientation && residual == other.residual;
    }
    bool operator!=(const KernelForm& other) const { return !(*this == other); }
  };
  /// Launches the edge-based assembly kernel once on the default stream with the given stage flags.
  virtual void launch_edge(const DeviceEdges& edges, const DeviceJacobian& jacobian, int edges_per_block,
                           int stage_flags, bool residual) = 0;
  /// Launch geometry of the node strategy: rows packed into tiles of at most `capacity` entries, one tile per thread
  /// block of `threads` threads of the kernel of `form`.
  struct NodeLaunch {
    KernelForm form;
    int requested = 0;       ///< the tile size asked for (a variant's default may have been halved to `capacity`)
    bool may_halve = false;  ///< a default tile: halved until it fits in shared memory (a user's is refused)
    int capacity = 0;
    int tiles = 0;
    int threads = 0;
    int max_entries = 0;  ///< most entries of any tile (above capacity only for a row longer than it)
    int max_rows = 0;     ///< most rows of any tile
    std::size_t shared_bytes = 0;
  };
  /// Launches the node-based assembly kernel.
  virtual void launch_node(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                           const NodeLaunch& launch, int stage_flags) = 0;
  /// The attributes of the kernel of `strategy` in `form` (the edge strategy's kernel serves both orientations).
  virtual cudaFuncAttributes kernel_attributes(AssemblyStrategy strategy, KernelForm form) const = 0;
  /// Threads per edge (edge strategy) or per (node, incident edge) (node strategy).
  virtual int lanes(AssemblyStrategy strategy) const = 0;
  /// The variant's tuning (its row of src/variants/tunings.hpp).
  const GpuTuning& tuning() const { return *info_.tuning; }
  /// Work units (edges or incident edges) per block when the user asks for none: the tuning's, fewer edges where the
  /// kernel's registers demand it.
  int default_units_per_block(AssemblyStrategy strategy) const;

 private:
  /// Uploads the node map of node assembly, its rows in file order or, where that order scatters neighbours, in
  /// RCM order (see DeviceNodeMap).
  void setup_node_map(const EdgeMesh& mesh, const JacobianPattern& pattern, const std::vector<double>& face);
  /// Uploads where the node kernel stores each visited entry's block for `orientation` (DeviceNodeMap::entry_target),
  /// unless the last upload was for it: A's transposed slots, or A^T's own slots (no array in file order).
  void upload_node_targets(Orientation orientation);
  /// Node assembly in the RCM visit order: the state copied into visit order, then the node kernel.
  void launch_visited(const DeviceEdges& edges, const DeviceNodeMap& map, const DeviceJacobian& jacobian,
                      int stage_flags);
  /// Packs whole rows, in order, into tiles of at most `capacity` entries and rows; returns the launch geometry and,
  /// when asked, the packed rows.
  NodeLaunch plan_rows(int capacity, KernelForm form, RowBlocks* rows) const;
  /// plan_rows for a tile of `requested` entries; with `may_halve` (a variant's default, not a user's choice) a tile
  /// too large for shared memory is halved until it fits. Refuses a tile that still does not fit. Fills `tiles`, when
  /// given, with the chosen plan's tiles (each block's rows and entries, from host_row_ptr_).
  NodeLaunch plan_fitting_rows(int requested, bool may_halve, KernelForm form, std::vector<NodeTile>* tiles) const;
  /// Holds the Aoff array of `precision` (its entries) and frees the other: the largest meshes fill the GPU with one.
  void hold_aoff(AoffPrecision precision);
  /// The kernel form of the prepared case.
  KernelForm form() const { return {options_.orientation, options_.residual}; }

  VariantInfo info_;
  std::vector<std::int32_t> host_row_ptr_;
  DeviceArray<std::int32_t> row_ptr_, entry_target_;
  std::vector<std::int32_t> host_targets_of_a_;  ///< per pattern entry (i, j): the slot of (j, i)
  std::vector<std::int32_t>
      visited_entry_;  ///< per visited entry, its pattern entry (RCM traversal); empty in file order
  std::optional<Orientation> targets_orientation_;  ///< what entry_target_ holds; none before the first node run
  /// The node kernel trusts these for its shared-memory bounds: they are rebuilt from host_row_ptr_ (the rows of
  /// row_ptr_) whenever the plan changes, and setup() resets the plan.
  DeviceArray<NodeTile> tiles_;
  DeviceArray<node_index> row_node_;   ///< the node of each visited row (RCM traversal), empty for file order
  DeviceArray<double> visited_state_;  ///< the state in visit order (RCM traversal), refreshed by every assembly
  DeviceArray<double> entry_face_;
  DeviceArray<node_index> col_idx_;
  NodeLaunch node_launch_;
  DeviceArray<node_index> edges_;
  DeviceArray<double> normals_, areas_, state_, adiag_;
  DeviceArray<double> residual_;  ///< allocated by the first case that asks for the residual
  DeviceArray<std::int32_t> slots_;
  DeviceArray<float> aoff_;               ///< Aoff in float32; empty while aoff_bf16_ is held
  DeviceArray<std::uint16_t> aoff_bf16_;  ///< Aoff in bfloat16 (a case prepared with bf16); else empty
  std::size_t aoff_entries_ = 0;          ///< 25 per off-diagonal block
  edge_index n_edges_ = 0;
  std::int64_t n_nodes_ = 0;
  int units_per_block_ = 0;
  AssemblyStrategy strategy_ = AssemblyStrategy::kEdge;
  int stage_flags_ = 0;  ///< the prepared mode and orientation, as the kernels' stage flags
  bool holds_full_assembly_ = false;
  std::string node_traversal_;
  AssemblyOptions options_;  ///< the last prepared (A in mode full before the first)
};

}  // namespace fluxjac
