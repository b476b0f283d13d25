// fluxjac list: every registered variant with the work it declares (FP64 flops and bytes per edge), its kernel
// resources when a GPU is present and each GPU variant's tuning; `--json` prints the same as a JSON array.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/device_probe.hpp"
#include "cli/commands.hpp"
#include "registry/registry.hpp"

namespace fluxjac {
namespace {

/// \brief The kernel resources of a variant's preferred strategy, where a GPU can tell them.
std::optional<KernelResources> resources_of(const VariantInfo& info, bool gpu) {
  if (info.backend != Backend::kCuda || !info.available || !gpu) return std::nullopt;
  return Registry::instance().create(info.name)->resources();
}

/// \brief "edge 329 node 325": bytes per edge of each strategy at the paper-size mesh's nodes per edge.
std::string bytes_per_edge_text(const VariantWork& work) {
  std::string text;
  for (const auto& [name, strategy] : work.strategies)
    text += fmt::format("{}{} {:.0f}", text.empty() ? "" : " ", name, strategy.bytes.bytes_per_edge());
  return text;
}

/// "sm_90": the architecture a tuning was measured on.
std::string architecture_text(int architecture) { return fmt::format("sm_{}", architecture); }

nlohmann::ordered_json tuning_json(const std::optional<GpuTuning>& tuning) {
  if (!tuning) return nullptr;
  return {{"measured_on", architecture_text(tuning->architecture)},
          {"max_registers", tuning->max_registers},
          {"edges_per_block", tuning->edges_per_block},
          {"node_tile_entries", tuning->node_tile_entries},
          {"node_block_threads", tuning->node_block_threads},
          {"node_batch", tuning->node_batch},
          {"assembly", to_string(tuning->assembly)}};
}

nlohmann::ordered_json ops_json(const OpCounts& ops) {
  return {{"add", ops.add},   {"mul", ops.mul},         {"div", ops.div},    {"reciprocal", ops.reciprocal},
          {"sqrt", ops.sqrt}, {"compare", ops.compare}, {"fused", ops.fused}};
}

nlohmann::ordered_json variant_json(const VariantInfo& info, const std::optional<KernelResources>& resources) {
  const bool gpu_variant = info.backend == Backend::kCuda;
  nlohmann::ordered_json bytes_per_edge = nlohmann::ordered_json::object(),
                         strategies = nlohmann::ordered_json::object();
  for (const auto& [name, strategy] : info.work.strategies) {
    bytes_per_edge[name] = strategy.bytes.bytes_per_edge();
    strategies[name] = {{"fp64_per_edge", strategy.fp64_flops_per_edge()},
                        {"fp64_instructions_per_edge", strategy.fp64_instructions_per_edge()},
                        {"fp64_per_edge_as_written", fp64_flops(strategy.lanes.written + strategy.assembly_ops)},
                        {"assembly_ops", ops_json(strategy.assembly_ops)},
                        {"bytes_per_edge", strategy.bytes.per_edge},
                        {"bytes_per_block", strategy.bytes.per_block},
                        {"bytes_per_node", strategy.bytes.per_node},
                        {"zeroing_bytes_per_node", strategy.bytes.zeroing_per_node}};
  }
  nlohmann::ordered_json object = {
      {"name", info.name},
      {"description", info.description},
      {"backend", to_string(info.backend)},
      {"threads_per_edge", info.threads_per_edge},
      {"threads_per_side", info.threads_per_side},
      {"seeding", to_string(info.seeding)},
      {"preferred_assembly", gpu_variant ? nlohmann::ordered_json(to_string(info.preferred_assembly)) : nullptr},
      {"available", info.available},
      {"cpu_emulation", gpu_variant ? nlohmann::ordered_json(info.name + std::string(kEmulationSuffix)) : nullptr},
      {"fp64_per_edge", info.work.fp64_per_edge},
      {"fp64_instructions_per_edge", fp64_instructions(info.work.ops.per_thread)},
      {"fp64_ops", ops_json(info.work.ops.per_thread)},
      {"fp64_per_edge_as_written", fp64_flops(info.work.ops.written)},
      {"fp64_ops_as_written", ops_json(info.work.ops.written)},
      {"nodes_per_edge", kPaperNodesPerEdge},
      {"bytes_per_edge", bytes_per_edge},
      {"strategies", strategies},
      {"tuning", tuning_json(info.tuning)}};
  if (resources)
    object["resources"] = {{"registers", resources->registers},
                           {"local_bytes", resources->local_bytes},
                           {"shared_bytes", resources->shared_bytes},
                           {"block_threads", resources->block_threads}};
  return object;
}

int print_json(const std::vector<VariantInfo>& infos, bool gpu) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const VariantInfo& info : infos) array.push_back(variant_json(info, resources_of(info, gpu)));
  fmt::print("{}\n", array.dump(2));
  return 0;
}

/// \brief The GPU variants' tunings (src/variants/tunings.hpp), one row each.
void print_tunings(const std::vector<VariantInfo>& infos) {
  fmt::print(
      "\nTunings: what each GPU variant's kernels are compiled and launched with, and the GPU architecture they "
      "were measured on\n");
  fmt::print("{:<10} {:<11}  {:>9}  {:>11}  {:>9}  {:>12}  {:>10}  {}\n", "variant", "measured on", "registers",
             "edges/block", "node tile", "node threads", "node batch", "assembly");
  for (const VariantInfo& info : infos) {
    if (!info.tuning) continue;
    const GpuTuning& tuning = *info.tuning;
    fmt::print("{:<10} {:<11}  {:>9}  {:>11}  {:>9}  {:>12}  {:>10}  {}\n", info.name,
               architecture_text(tuning.architecture), tuning.max_registers, tuning.edges_per_block,
               tuning.node_tile_entries, tuning.node_block_threads, tuning.node_batch, to_string(tuning.assembly));
  }
  fmt::print(
      "\nmeasured on: sm_90 is NVIDIA H100 and H200.\nregisters: the cap of both assembly kernels (255: none).\n"
      "edges/block: the edge assembly's block.\nnode tile: the node assembly's incident edges per block, whole rows "
      "(--edges-per-block overrides it), worked by at most `node threads` threads,\n  each keeping `node batch` of "
      "its index loads and stores in flight.\nassembly: the strategy --assembly auto runs.\n");
}

int print_table(const std::vector<VariantInfo>& infos, bool gpu) {
  fmt::print("{:<10} {:<6} {:>7} {:<16} {:<8} {:>9} {:<17} {:>5} {:>6} {:>7} {:>7}  {}\n", "variant", "backend",
             "thr/edge", "seeding", "assembly", "flop/edge", "bytes/edge", "regs", "local", "shared", "threads",
             "description");
  for (const VariantInfo& info : infos) {
    std::string regs = "-", local = "-", shared = "-", threads = "-";
    if (const auto resources = resources_of(info, gpu)) {
      regs = std::to_string(resources->registers);
      local = fmt::format("{}B", resources->local_bytes);
      shared = fmt::format("{}B", resources->shared_bytes);
      threads = std::to_string(resources->block_threads);
    }
    const std::string backend = info.available ? to_string(info.backend) : "cuda*";
    const std::string assembly = info.backend == Backend::kCuda ? to_string(info.preferred_assembly) : "-";
    fmt::print("{:<10} {:<7} {:>7} {:<16} {:<8} {:>9.0f} {:<17} {:>5} {:>6} {:>7} {:>7}  {}\n", info.name, backend,
               info.threads_per_edge, to_string(info.seeding), assembly, info.work.fp64_per_edge,
               bytes_per_edge_text(info.work), regs, local, shared, threads, info.description);
  }
  fmt::print(
      "\nflop/edge: FP64 flops of the variant's lane work per edge, counted on the CPU (an FMA is 2 flops, a "
      "division or square root the flops of its GPU instruction sequence).\nbytes/edge: minimum DRAM traffic "
      "of each assembly strategy per edge, at the paper-size mesh's {:.4f} nodes per edge.\n"
      "docs/performance.md, section \"Work model\", defines both.\n",
      kPaperNodesPerEdge);
  const bool any_unbuilt = std::any_of(infos.begin(), infos.end(), [](const auto& i) { return !i.available; });
  fmt::print(
      "\nEvery GPU variant NAME also runs on the CPU as NAME{} (--variant hd{}, or all{}): its CPU emulation, "
      "the lanes one by one in the kernels' assembly order,\nvalidated like the GPU runs; its times say nothing "
      "of GPU performance.\n",
      kEmulationSuffix, kEmulationSuffix, kEmulationSuffix);
  if (any_unbuilt)
    fmt::print("\ncuda* = not built: this fluxjac was built without CUDA (its lane mapping is still tested).\n");
  else if (!gpu)
    fmt::print("\nNo GPU found: kernel resources are shown when a GPU is present.\n");
  print_tunings(infos);
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, CommandAction& action) {
  auto json = std::make_shared<bool>(false);
  CLI::App* list =
      add_command(app,
                  {"list",
                   "List the registered variants: description, backend, threads per edge, seeding, the assembly "
                   "strategy that --assembly auto picks, the declared work (FP64 flops per edge, bytes per edge of "
                   "each strategy), (with a GPU) that kernel's registers, local (spill) bytes, shared memory and "
                   "threads per block, and each GPU variant's tuning (register cap, blocks of both strategies, the GPU "
                   "architecture it was measured on)"},
                  action, [json](const CLI::App&) {
                    const bool gpu = gpu_available();
                    const std::vector<VariantInfo> infos = Registry::instance().list();
                    return *json ? print_json(infos, gpu) : print_table(infos, gpu);
                  });
  list->add_flag("--json", *json, "Print a JSON array, one object per variant, instead of the table");
}

}  // namespace fluxjac
