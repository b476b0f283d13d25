#include "mesh/generator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "mesh/dual_metrics.hpp"
#include "mesh/edge_mesh_extras.hpp"
#include "mesh/mesh_digest.hpp"
#include "mesh/mesh_io.hpp"
#include "physics/gas.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"

namespace fluxjac {
namespace {

/// The /mesh attribute that records the spec a generated file was made from.
constexpr const char* kGeneratorAttribute = "generator";
/// The /mesh attribute that records the content digest of a generated file (generated_mesh_digest).
constexpr const char* kContentDigestAttribute = "content_digest";

// ---- counter-based random numbers: the same jitter whatever the thread count --------------------------
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1) for (seed, node, component).
double signed_unit_random(std::uint64_t seed, std::int64_t node, int component) {
  const std::uint64_t h =
      splitmix64(splitmix64(seed) ^ (static_cast<std::uint64_t>(node) * 3u + static_cast<std::uint64_t>(component)));
  return 2.0 * (static_cast<double>(h >> 11) * 0x1.0p-53) - 1.0;
}

// ---- wall clustering of the mixed mesh ----------------------------------------------------------------
// z = g(s), s = k / n: exponential below s = kPrismFraction of the layers, linear above, with g and g'
// continuous at the joint and g(kPrismFraction) = kPrismHeight.
constexpr double kPrismFraction = 0.5;
constexpr double kPrismHeight = 0.25;

/// Growth exponent beta of the exponential part: beta / (1 - exp(-beta)) equals the slope ratio.
double clustering_exponent() {
  const double target = (1.0 - kPrismHeight) * kPrismFraction / ((1.0 - kPrismFraction) * kPrismHeight);
  double low = 1e-6, high = 50.0;
  for (int i = 0; i < 200; ++i) {
    const double beta = 0.5 * (low + high);
    (beta / (1.0 - std::exp(-beta)) < target ? low : high) = beta;
  }
  return 0.5 * (low + high);
}

double clustered_height(double s, double beta) {
  if (s <= kPrismFraction) return kPrismHeight * std::expm1(beta * s / kPrismFraction) / std::expm1(beta);
  return kPrismHeight + (s - kPrismFraction) * (1.0 - kPrismHeight) / (1.0 - kPrismFraction);
}

// ---- the hexahedron splits (corner c = dx + 2 dy + 4 dz) ----------------------------------------------
// Kuhn: one tetrahedron per axis order, corners 0 -> ... -> 7; odd orders swap two vertices to keep the
// CGNS orientation. Every face is cut along the diagonal through its lowest corner.
constexpr int kKuhnTetrahedra[6][4] = {{0, 1, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7},
                                       {0, 5, 1, 7}, {0, 3, 2, 7}, {0, 6, 4, 7}};
// Prisms on the triangles (0,1,3) and (0,3,2) of the bottom face, the same diagonal 0-3 as Kuhn's.
constexpr int kPrismSplit[2][6] = {{0, 1, 3, 4, 5, 7}, {0, 3, 2, 4, 7, 6}};

/// The unjittered grid and its jitter.
struct BoxNodes {
  std::vector<double> coords;        ///< [n][3], unjittered
  std::vector<double> displacement;  ///< [n][3], full jitter (zero on the boundary)
  std::vector<std::uint8_t> on_boundary;
};

/// The nodes of the held planes [slab.first_held, slab.end_held) (all of them: the whole box), local id = natural id
/// - slab.first_node().
BoxNodes make_box_nodes(const BoxMeshSpec& spec, const BoxSlab& slab) {
  const int n = spec.n;
  const std::int64_t side = n + 1;
  const std::int64_t first_node = slab.first_node();
  const std::int64_t n_nodes = side * side * (slab.end_held - slab.first_held);
  const std::vector<double> z_levels = box_z_levels(spec);
  const double spacing = 1.0 / n;
  BoxNodes nodes;
  nodes.coords.resize(3 * static_cast<std::size_t>(n_nodes));
  nodes.displacement.assign(3 * static_cast<std::size_t>(n_nodes), 0.0);
  nodes.on_boundary.resize(static_cast<std::size_t>(n_nodes));
#pragma omp parallel for schedule(static)
  for (std::int64_t k = slab.first_held; k < slab.end_held; ++k) {
    const double z_spacing =
        k == 0 || k == n ? 0.0 : std::min(z_levels[k] - z_levels[k - 1], z_levels[k + 1] - z_levels[k]);
    for (std::int64_t j = 0; j < side; ++j) {
      for (std::int64_t i = 0; i < side; ++i) {
        const std::int64_t global = i + side * (j + side * k);
        const std::int64_t node = global - first_node;
        nodes.coords[3 * node] = i == n ? 1.0 : static_cast<double>(i) * spacing;
        nodes.coords[3 * node + 1] = j == n ? 1.0 : static_cast<double>(j) * spacing;
        nodes.coords[3 * node + 2] = z_levels[k];
        const bool boundary = i == 0 || j == 0 || k == 0 || i == n || j == n || k == n;
        nodes.on_boundary[node] = boundary ? 1 : 0;
        if (boundary) continue;
        nodes.displacement[3 * node] = spec.jitter * spacing * signed_unit_random(spec.seed, global, 0);
        nodes.displacement[3 * node + 1] = spec.jitter * spacing * signed_unit_random(spec.seed, global, 1);
        nodes.displacement[3 * node + 2] = spec.jitter * z_spacing * signed_unit_random(spec.seed, global, 2);
      }
    }
  }
  return nodes;
}

/// The cells of the held layers [slab.first_held, slab.end_held - 1), tetrahedra then prisms, each block in the
/// order of the whole box's (so local cell ids ascend with the whole box's), vertices in local ids.
void make_box_cells(const BoxMeshSpec& spec, const BoxSlab& slab, ElementMesh& elements) {
  const int n = spec.n;
  const std::int64_t side = n + 1;
  const std::int64_t first_node = slab.first_node();
  const int prism_layers = prism_layer_count(spec);
  const std::int64_t first_layer = slab.first_held, end_layer = slab.end_held - 1;
  const std::int64_t first_prism = std::min<std::int64_t>(first_layer, prism_layers);
  const std::int64_t end_prism = std::min<std::int64_t>(end_layer, prism_layers);
  const std::int64_t first_tet = std::max<std::int64_t>(first_layer, prism_layers);
  const std::int64_t end_tet = std::max<std::int64_t>(end_layer, prism_layers);
  const std::int64_t cells_per_layer = static_cast<std::int64_t>(n) * n;
  elements.prisms.resize(static_cast<std::size_t>(cells_per_layer * (end_prism - first_prism) * 2 * 6));
  elements.tetrahedra.resize(static_cast<std::size_t>(cells_per_layer * (end_tet - first_tet) * 6 * 4));
#pragma omp parallel for schedule(static)
  for (std::int64_t k = first_layer; k < end_layer; ++k) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        node_index corner[8];
        for (int c = 0; c < 8; ++c)
          corner[c] = static_cast<node_index>((i + (c & 1)) +
                                              side * ((j + ((c >> 1) & 1)) + side * (k + ((c >> 2) & 1))) - first_node);
        if (k < prism_layers) {
          node_index* prism = &elements.prisms[12 * (((k - first_prism) * n + j) * n + i)];
          for (int p = 0; p < 2; ++p)
            for (int v = 0; v < 6; ++v) prism[6 * p + v] = corner[kPrismSplit[p][v]];
        } else {
          node_index* tetrahedron = &elements.tetrahedra[24 * (((k - first_tet) * n + j) * n + i)];
          for (int t = 0; t < 6; ++t)
            for (int v = 0; v < 4; ++v) tetrahedron[4 * t + v] = corner[kKuhnTetrahedra[t][v]];
        }
      }
    }
  }
}

/// Applies the jitter, halving it (and after kHalvings rounds removing it) on the nodes of invalid cells
/// until every cell is valid. Only the slab's owned nodes [owned_begin, owned_end) (local ids) are scaled here; the
/// others take their owners' scales from sync between rounds, and the rounds go on while any part has an invalid
/// cell, so every node ends with the scale the whole box gives it. Returns the number of owned nodes whose jitter
/// was reduced.
std::int64_t apply_jitter(const BoxNodes& nodes, ElementMesh& elements, std::int64_t owned_begin,
                          std::int64_t owned_end, const JitterSync& sync) {
  constexpr int kHalvings = 8;
  const std::int64_t n_nodes = elements.n_nodes;
  std::vector<double> scale(static_cast<std::size_t>(n_nodes), 1.0);
  std::vector<std::uint8_t> reduced(static_cast<std::size_t>(n_nodes), 0);
  for (int round = 0;; ++round) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < 3 * n_nodes; ++i)
      elements.coords[i] = nodes.coords[i] + scale[i / 3] * nodes.displacement[i];
    const std::vector<std::int64_t> invalid = find_invalid_cells(elements);
    const bool any_invalid = sync.any ? sync.any(!invalid.empty()) : !invalid.empty();
    if (!any_invalid) break;
    std::vector<std::uint8_t> in_invalid_cell(static_cast<std::size_t>(n_nodes), 0);
    for (std::int64_t id : invalid) {
      const CellRef cell = cell_at(elements, id);
      for (int v = 0; v < vertex_count(cell.type); ++v) in_invalid_cell[cell.vertices[v]] = 1;
    }
    for (std::int64_t i = owned_begin; i < owned_end; ++i) {
      if (!in_invalid_cell[i]) continue;
      scale[i] = round < kHalvings ? 0.5 * scale[i] : 0.0;
      reduced[i] = 1;
    }
    if (sync.refresh) sync.refresh(scale);
  }
  std::int64_t count = 0;
  for (std::int64_t i = owned_begin; i < owned_end; ++i) count += reduced[i];
  return count;
}

// ---- the flow state -----------------------------------------------------------------------------------
constexpr double kFreestreamMach = 0.85;
constexpr double kAngleOfAttackDegrees = 2.0;
constexpr double kSideslipDegrees = 1.0;

/// A smooth flat-topped bump of the flow speed: factor 1 + amplitude * exp(-(r / radius)^4 / 2).
struct SpeedBump {
  double center[3];
  double radius;
  double amplitude;
};
constexpr SpeedBump kStagnationBump{{0.3, 0.4, 0.55}, 0.18, -0.97};
constexpr SpeedBump kSupersonicBump{{0.7, 0.6, 0.45}, 0.18, 0.65};

double bump_shape(const SpeedBump& bump, const double* x) {
  double r2 = 0.0;
  for (int d = 0; d < 3; ++d) r2 += (x[d] - bump.center[d]) * (x[d] - bump.center[d]);
  const double q = r2 / (bump.radius * bump.radius);
  return std::exp(-0.5 * q * q);
}

/// build_box_slab_elements with a progress report at the start of the node and cell stages.
ElementMesh build_slab_elements_reporting(const BoxMeshSpec& spec, const BoxSlab& slab, const JitterSync& sync,
                                          const MeshProgress& progress, std::vector<std::uint8_t>* on_boundary,
                                          std::int64_t* n_jitter_reduced) {
  validate_box_mesh_spec(spec);
  report_stage(progress, "nodes", 0.0);
  BoxNodes nodes = make_box_nodes(spec, slab);
  ElementMesh elements;
  elements.n_nodes = static_cast<std::int64_t>(nodes.on_boundary.size());
  elements.coords = nodes.coords;
  report_stage(progress, "cells", 0.05);
  make_box_cells(spec, slab, elements);
  const std::int64_t plane = static_cast<std::int64_t>(spec.n + 1) * (spec.n + 1);
  const std::int64_t reduced = spec.jitter > 0.0
                                   ? apply_jitter(nodes, elements, plane * (slab.first_plane - slab.first_held),
                                                  plane * (slab.end_plane - slab.first_held), sync)
                                   : 0;
  if (n_jitter_reduced) *n_jitter_reduced = reduced;
  if (on_boundary) *on_boundary = std::move(nodes.on_boundary);
  return elements;
}

/// build_box_elements with a progress report at the start of the node and cell stages.
ElementMesh build_box_elements_reporting(const BoxMeshSpec& spec, const MeshProgress& progress,
                                         std::vector<std::uint8_t>* on_boundary, std::int64_t* n_jitter_reduced) {
  return build_slab_elements_reporting(spec, whole_box_slab(spec), {}, progress, on_boundary, n_jitter_reduced);
}

// ---- memory ------------------------------------------------------------------------------------------------
/// Sizes of a box mesh, as doubles so that estimates of impossible meshes do not overflow.
struct BoxMeshSizes {
  double nodes, cells, vertex_ids, edges;
};

BoxMeshSizes box_mesh_sizes(const BoxMeshSpec& spec) {
  const double n = spec.n, prism_layers = prism_layer_count(spec), tet_layers = n - prism_layers;
  BoxMeshSizes sizes;
  sizes.nodes = (n + 1) * (n + 1) * (n + 1);
  sizes.cells = n * n * (6 * tet_layers + 2 * prism_layers);
  sizes.vertex_ids = n * n * (24 * tet_layers + 12 * prism_layers);
  // Axis edges, the xy diagonals of every node plane, the xz, yz and body diagonals of the tetrahedral layers.
  sizes.edges = 3 * n * (n + 1) * (n + 1) + n * n * (n + 1) + tet_layers * (2 * n * (n + 1) + n * n);
  return sizes;
}

/// The program, its libraries and HDF5's buffers: the peak resident set of `fluxjac mesh gen --n 1` is ~10 MiB.
constexpr double kProgramBytes = 16.0 * 1024 * 1024;
/// Memory the allocator holds beyond the live arrays: after a large block is freed glibc raises its mmap
/// threshold, so later arrays of a few MiB come from the heap, which it does not trim. At n = 100 (mixed, rcm)
/// the peak resident set is 5% above the live arrays.
constexpr double kAllocatorSlack = 1.1;

}  // namespace

double estimate_box_mesh_bytes(const BoxMeshSpec& spec, int parts, PartBalance balance) {
  BoxMeshSizes size = box_mesh_sizes(spec);
  if (parts > 1 && parts <= spec.n + 1) {
    const std::vector<int> planes = box_slab_planes(spec, parts, balance);
    int held = 0;
    for (int r = 0; r < parts; ++r) {
      const BoxSlab slab = box_slab(spec, planes[r], planes[r + 1]);
      held = std::max(held, slab.end_held - slab.first_held);
    }
    const double share = static_cast<double>(held) / (spec.n + 1);
    size = {size.nodes * share, size.cells * share, size.vertex_ids * share, size.edges * share};
  }
  // Bytes per node, cell, vertex id and edge of the arrays alive together at each stage.
  // Nodes and cells: grid and jitter (49/node), coordinates (24), jitter scale and flags (10), cell vertices
  // (4/id), invalid-cell flags (1/cell).
  const double cells_stage = 83 * size.nodes + 4 * size.vertex_ids + size.cells;
  // Median dual: the element mesh (24/node, 4/id), boundary flags (1), node -> cells (8/node, 8/id), edge
  // offsets (8), the edge mesh (32/node, 40/edge).
  const double dual_stage = 73 * size.nodes + 12 * size.vertex_ids + 40 * size.edges;
  // Renumbering: the edge mesh and flags (33/node, 40/edge), the permutation and its check (5), ends and turn
  // flags (9/edge), rows (8/node, 8/edge), the renumbered edges, normals and areas (40/edge).
  const double ordering_stage = spec.order == NodeOrdering::kNatural ? 0.0 : 46 * size.nodes + 97 * size.edges;
  // State and write: the edge mesh, flags and their copy (34/node, 40/edge) and the state (40/node).
  const double state_stage = 74 * size.nodes + 40 * size.edges;
  return kProgramBytes + kAllocatorSlack * std::max({cells_stage, dual_stage, ordering_stage, state_stage});
}

void check_box_mesh_memory(const BoxMeshSpec& spec, const std::optional<AvailableMemory>& available, int parts,
                           PartBalance balance) {
  if (!available) return;
  const double needed = estimate_box_mesh_bytes(spec, parts, balance);
  const double have = static_cast<double>(available->bytes);
  if (needed <= have) return;
  BoxMeshSpec smaller = spec;
  while (smaller.n > parts && estimate_box_mesh_bytes(smaller, parts, balance) > have) --smaller.n;
  const std::string advice = estimate_box_mesh_bytes(smaller, parts, balance) <= have
                                 ? fmt::format("use n <= {} here, or a machine with more memory", smaller.n)
                                 : std::string("free some memory or use a machine with more");
  fail(ExitCode::kUsage,
       "box mesh {} n = {} ({} order): generating it needs about {} of memory at its peak{}, but {} is available "
       "({}): {}",
       to_string(spec.kind), spec.n, to_string(spec.order), format_bytes(needed),
       parts > 1 ? fmt::format(" on each of {} ranks", parts) : std::string(), format_bytes(have), available->source,
       advice);
}

int largest_box_mesh_n() {
  const std::int64_t max_nodes = std::numeric_limits<node_index>::max();
  int max_n = 1;
  while (std::int64_t{max_n + 2} * (max_n + 2) * (max_n + 2) <= max_nodes) ++max_n;
  return max_n;
}

void validate_box_mesh_spec(const BoxMeshSpec& spec) {
  if (spec.n < 1) fail(ExitCode::kUsage, "box mesh: n = {} hexahedra per direction; it must be at least 1", spec.n);
  const std::int64_t side = static_cast<std::int64_t>(spec.n) + 1;
  if (spec.n > largest_box_mesh_n())
    fail(ExitCode::kUsage,
         "box mesh: n = {} gives (n+1)^3 = {} nodes, more than the {} that 32-bit node ids allow (use n <= {})", spec.n,
         side * side * side, std::numeric_limits<node_index>::max(), largest_box_mesh_n());
  if (!(spec.jitter >= 0.0 && spec.jitter < 0.45))
    fail(ExitCode::kUsage, "box mesh: jitter {} is outside [0, 0.45) (a fraction of the local node spacing)",
         spec.jitter);
}

int prism_layer_count(const BoxMeshSpec& spec) {
  if (spec.kind == MeshKind::kPrism) return spec.n;
  if (spec.kind == MeshKind::kMixed) return static_cast<int>(kPrismFraction * spec.n);
  return 0;
}

CellCounts box_mesh_cells(const BoxMeshSpec& spec) {
  const std::int64_t layer_cells = static_cast<std::int64_t>(spec.n) * spec.n;
  CellCounts cells;
  cells.prisms = 2 * layer_cells * prism_layer_count(spec);
  cells.tetrahedra = 6 * layer_cells * (spec.n - prism_layer_count(spec));
  return cells;
}

std::vector<double> box_z_levels(const BoxMeshSpec& spec) {
  const int n = spec.n;
  std::vector<double> z(static_cast<std::size_t>(n) + 1);
  const bool clustered = spec.kind == MeshKind::kMixed;
  const double beta = clustered ? clustering_exponent() : 0.0;
  for (int k = 0; k <= n; ++k) {
    const double s = static_cast<double>(k) / n;
    z[k] = clustered ? clustered_height(s, beta) : s;
  }
  z[0] = 0.0;
  z[n] = 1.0;
  return z;
}

BoxSlab whole_box_slab(const BoxMeshSpec& spec) { return {0, spec.n + 1, 0, spec.n + 1, spec.n}; }

BoxSlab box_slab(const BoxMeshSpec& spec, int first_plane, int end_plane) {
  return {first_plane, end_plane, std::max(0, first_plane - 1), std::min(spec.n + 1, end_plane + 1), spec.n};
}

std::vector<double> box_plane_work(const BoxMeshSpec& spec, PartBalance balance) {
  const double n = spec.n, side = n + 1;
  const int prism_layers = prism_layer_count(spec);
  const double in_plane = 2 * n * side + n * n;  // x and y axis edges, xy diagonals
  const auto between = [&](int layer) {          // edges from plane layer to plane layer + 1
    if (layer < 0 || layer >= spec.n) return 0.0;
    return side * side + (layer >= prism_layers ? 2 * n * side + n * n : 0.0);
  };
  // vertex_weight is affine in the degree: a plane weighs its nodes times the weight of degree 0 plus its degrees
  // (twice its own edges, once those to each plane beside) times what one more edge adds; exact in integers.
  const double per_node = vertex_weight(balance, 0.0), per_degree = vertex_weight(balance, 1.0) - per_node;
  std::vector<double> work(static_cast<std::size_t>(spec.n) + 1);
  for (int k = 0; k <= spec.n; ++k)
    work[k] = side * side * per_node + (2 * in_plane + between(k - 1) + between(k)) * per_degree;
  return work;
}

std::vector<int> box_slab_planes(const BoxMeshSpec& spec, int parts, PartBalance balance) {
  const int planes = spec.n + 1;
  if (parts < 1 || parts > planes)
    fail(ExitCode::kUsage,
         "box mesh n = {} has {} node planes, fewer than the {} ranks that generate it one slab of planes each: use "
         "n >= {} or fewer ranks",
         spec.n, planes, parts, parts - 1);
  const std::vector<double> work = box_plane_work(spec, balance);
  std::vector<double> cumulative(work.size() + 1, 0.0);
  for (std::size_t k = 0; k < work.size(); ++k) cumulative[k + 1] = cumulative[k] + work[k];
  std::vector<int> offsets(static_cast<std::size_t>(parts) + 1, 0);
  offsets[parts] = planes;
  for (int r = 1; r < parts; ++r) {
    const double target = cumulative.back() * r / parts;
    int k = offsets[r - 1] + 1;  // at least one plane for each part before
    while (k < planes && cumulative[k] + 0.5 * work[k] < target) ++k;
    offsets[r] = std::min(k, planes - (parts - r));  // and one for each part after
  }
  return offsets;
}

ElementMesh build_box_slab_elements(const BoxMeshSpec& spec, const BoxSlab& slab, const JitterSync& sync,
                                    const MeshProgress& progress, std::vector<std::uint8_t>* on_boundary,
                                    std::int64_t* n_jitter_reduced) {
  return build_slab_elements_reporting(spec, slab, sync, progress, on_boundary, n_jitter_reduced);
}

ElementMesh build_box_elements(const BoxMeshSpec& spec, std::vector<std::uint8_t>* on_boundary,
                               std::int64_t* n_jitter_reduced) {
  return build_box_elements_reporting(spec, {}, on_boundary, n_jitter_reduced);
}

FlowState disturbed_freestream_state(const std::vector<double>& coords) {
  const std::int64_t n_nodes = static_cast<std::int64_t>(coords.size() / 3);
  constexpr double kPi = 3.14159265358979323846;
  const double alpha = kAngleOfAttackDegrees * kPi / 180.0, beta = kSideslipDegrees * kPi / 180.0;
  const double direction[3] = {std::cos(alpha) * std::cos(beta), std::sin(beta), std::sin(alpha) * std::cos(beta)};
  // Freestream rho = 1, p = 1/gamma, hence a = 1 and speed = Mach.
  const double freestream_speed = kFreestreamMach;
  const double total_enthalpy = 1.0 / kGammaMinusOne + 0.5 * freestream_speed * freestream_speed;

  FlowState state;
  state.gamma = kGamma;
  state.Q.resize(static_cast<std::size_t>(n_nodes) * kBlock);
#pragma omp parallel for schedule(static)
  for (std::int64_t node = 0; node < n_nodes; ++node) {
    const double* x = &coords[3 * node];
    const double speed_factor = 1.0 + kStagnationBump.amplitude * bump_shape(kStagnationBump, x) +
                                kSupersonicBump.amplitude * bump_shape(kSupersonicBump, x);
    const double speed = freestream_speed * speed_factor;
    // Isentropic at constant total enthalpy: a^2 = (gamma-1)(H - q^2/2), rho = a^(2/(gamma-1)), p = rho a^2/gamma.
    const double sound_speed_squared = kGammaMinusOne * (total_enthalpy - 0.5 * speed * speed);
    const double rho = std::pow(sound_speed_squared, 1.0 / kGammaMinusOne);
    const double pressure = rho * sound_speed_squared / kGamma;
    double* q = &state.Q[kBlock * node];
    q[0] = rho;
    for (int d = 0; d < 3; ++d) q[1 + d] = rho * speed * direction[d];
    q[4] = pressure / kGammaMinusOne + 0.5 * rho * speed * speed;
  }
  return state;
}

GeneratedMesh generate_box_mesh(const BoxMeshSpec& spec, const MeshProgress& progress) {
  validate_box_mesh_spec(spec);
  check_box_mesh_memory(spec);
  GeneratedMesh generated;

  // ---- nodes and cells --------------------------------------------------------------------------------
  ElementMesh elements =
      build_box_elements_reporting(spec, progress, &generated.on_boundary, &generated.n_jitter_reduced);
  generated.n_tetrahedra = elements.n_tetrahedra();
  generated.n_prisms = elements.n_prisms();

  // ---- median-dual metrics ------------------------------------------------------------------------------
  report_stage(progress, "dual metrics", 0.2);
  generated.mesh = build_median_dual(elements);
  elements = ElementMesh{};

  // ---- ordering -----------------------------------------------------------------------------------------
  report_stage(progress, "ordering", 0.8);
  reorder_nodes(generated.mesh, nullptr, &generated.on_boundary, spec.order, splitmix64(spec.seed ^ 0x5EEDu));

  // ---- state --------------------------------------------------------------------------------------------
  report_stage(progress, "state", 0.95);
  generated.state = disturbed_freestream_state(generated.mesh.coords);
  report_stage(progress, "done", 1.0);
  return generated;
}

void write_generated_mesh(const std::string& path, const GeneratedMesh& generated, const BoxMeshSpec& spec,
                          const std::string& source) {
  EdgeMeshExtras extras;
  extras.boundary_nodes = generated.on_boundary;
  extras.cells = CellCounts{generated.n_tetrahedra, 0, generated.n_prisms, 0};
  extras.order = to_string(spec.order);
  extras.source = source;
  // Not among the extras, which `mesh partition` carries over to a renumbered mesh: the record and the content digest
  // stay with the file the generator wrote.
  const std::string digest = digest_text(generated_mesh_digest(generated));
  write_edge_mesh_with_extras(path, generated.mesh, &generated.state, extras, [&](const h5::File& file) {
    h5::write_attribute(file, edge_mesh_paths::kMeshGroup, kGeneratorAttribute, box_mesh_generator_record(spec));
    h5::write_attribute(file, edge_mesh_paths::kMeshGroup, kContentDigestAttribute, digest);
  });
}

void write_box_mesh_generator_record(const h5::File& file, const BoxMeshSpec& spec) {
  h5::write_attribute(file, edge_mesh_paths::kMeshGroup, kGeneratorAttribute, box_mesh_generator_record(spec));
}

std::string box_mesh_generator_record(const BoxMeshSpec& spec) {
  return fmt::format("kind={} n={} order={} seed={} jitter={} generator={}", to_string(spec.kind), spec.n,
                     to_string(spec.order), spec.seed, spec.jitter, kBoxMeshGeneratorVersion);
}

std::optional<std::string> read_box_mesh_generator_record(const std::string& path) {
  const h5::File file = h5::File::open(path);
  if (!h5::exists(file, edge_mesh_paths::kMeshGroup)) return std::nullopt;
  return h5::read_string_attribute(file, edge_mesh_paths::kMeshGroup, kGeneratorAttribute);
}

std::uint64_t generated_mesh_digest(const GeneratedMesh& generated) {
  const EdgeMesh& mesh = generated.mesh;
  const auto n_nodes = static_cast<std::size_t>(mesh.n_nodes);
  if (mesh.coords.size() != 3 * n_nodes || mesh.volumes.size() != n_nodes || generated.on_boundary.size() != n_nodes ||
      generated.state.Q.size() != kBlock * n_nodes)
    fail(ExitCode::kRuntime, "generated mesh: per-node arrays of {}, {}, {} and {} values for {} nodes",
         mesh.coords.size(), mesh.volumes.size(), generated.on_boundary.size(), generated.state.Q.size(), n_nodes);
  ContentDigest digest;
  digest.add_edges(mesh);
  digest.add_nodes(0, mesh.n_nodes, mesh.coords.data(), mesh.volumes.data(), generated.on_boundary.data(),
                   generated.state.Q.data());
  return digest.value(mesh.n_nodes, mesh.n_edges());
}

std::optional<std::string> read_generated_mesh_digest(const h5::File& file) {
  if (!h5::exists(file, edge_mesh_paths::kMeshGroup)) return std::nullopt;
  return h5::read_string_attribute(file, edge_mesh_paths::kMeshGroup, kContentDigestAttribute);
}

std::uint64_t stored_mesh_digest(const h5::File& file, std::int64_t slice_rows) {
  using namespace edge_mesh_paths;
  const std::optional<std::int64_t> n_nodes = h5::read_integer_attribute(file, kMeshGroup, "n_nodes");
  if (!n_nodes || *n_nodes < 0) fail(ExitCode::kInvalidInput, "{}: {}: no node count n_nodes", file.name(), kMeshGroup);
  const h5::DatasetInfo edges = h5::describe_dataset(file, kEdges);
  h5::require_shape(edges, {h5::kAnyExtent, 2});
  const std::int64_t n_edges = edges.shape[0];
  const auto described = [&](const char* path, std::vector<std::int64_t> shape) {
    h5::DatasetInfo info = h5::describe_dataset(file, path);
    h5::require_shape(info, shape);
    return info;
  };
  const h5::DatasetInfo normals = described(kNormals, {n_edges, 3}), areas = described(kAreas, {n_edges});
  const h5::DatasetInfo coords = described(kCoords, {*n_nodes, 3}), volumes = described(kVolumes, {*n_nodes});
  const h5::DatasetInfo boundary = described(kBoundaryNodes, {*n_nodes}),
                        states = described(kState, {*n_nodes, kBlock});

  if (slice_rows < 1) fail(ExitCode::kRuntime, "stored_mesh_digest: slices of {} rows", slice_rows);
  ContentDigest digest;
  EdgeMesh slice;
  for (std::int64_t first = 0; first < n_edges; first += slice_rows) {
    const std::vector<h5::RowRange> rows{{first, std::min(n_edges, first + slice_rows)}};
    slice.edges = h5::read_rows<node_index>(file, edges, rows);
    slice.normals = h5::read_rows<double>(file, normals, rows);
    slice.areas = h5::read_rows<double>(file, areas, rows);
    digest.add_edges(slice);
  }
  std::vector<std::uint8_t> flags;
  for (std::int64_t first = 0; first < *n_nodes; first += slice_rows) {
    const std::int64_t end = std::min(*n_nodes, first + slice_rows);
    const std::vector<h5::RowRange> rows{{first, end}};
    const std::vector<double> slice_coords = h5::read_rows<double>(file, coords, rows);
    const std::vector<double> slice_volumes = h5::read_rows<double>(file, volumes, rows);
    const std::vector<double> slice_states = h5::read_rows<double>(file, states, rows);
    flags.resize(static_cast<std::size_t>(end - first));
    h5::read_rows_raw(file, boundary, rows, H5T_NATIVE_UINT8, flags.data());
    digest.add_nodes(first, end - first, slice_coords.data(), slice_volumes.data(), flags.data(), slice_states.data());
  }
  return digest.value(*n_nodes, n_edges);
}

}  // namespace fluxjac
