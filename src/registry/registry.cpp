#include "registry/registry.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.hpp"
#include "util/nearest_name.hpp"
#include "util/text.hpp"

namespace fluxjac {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(VariantInfo info, Factory factory) {
  if (contains(info.name)) fail(ExitCode::kRuntime, "variant '{}' registered twice", info.name);
  if (info.backend == Backend::kCuda && info.emulate_edge_lanes && info.emulate_node_entry) {
    VariantInfo emulation = info;
    emulation.name = info.name + std::string(kEmulationSuffix);
    emulation.emulates = info.name;
    emulation.description = fmt::format(
        "CPU emulation of {}: its lanes one by one, in its kernels' assembly order "
        "(validated like it; times say nothing of the GPU)",
        info.name);
    emulation.backend = Backend::kCpu;
    emulation.available = true;
    // Set later, by the reference layer's static EmulationRegistrar: looked up when the emulation is created.
    entries_.push_back({std::move(emulation), [this](const VariantInfo& of) {
                          if (!emulation_factory_) fail(ExitCode::kRuntime, "no CPU emulation in this build");
                          return emulation_factory_(of);
                        }});
  }
  entries_.push_back({std::move(info), std::move(factory)});
}

std::vector<VariantInfo> Registry::list(bool with_emulations) const {
  std::vector<VariantInfo> infos;
  for (const auto& entry : entries_)
    if (with_emulations || entry.info.emulates.empty()) infos.push_back(entry.info);
  std::sort(infos.begin(), infos.end(), [](const VariantInfo& a, const VariantInfo& b) {
    if (a.backend != b.backend) return a.backend == Backend::kCpu;
    return a.name < b.name;
  });
  return infos;
}

bool Registry::contains(const std::string& name) const { return find(name) != nullptr; }

const VariantInfo* Registry::find(const std::string& name) const {
  const auto found =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.info.name == name; });
  return found == entries_.end() ? nullptr : &found->info;
}

std::unique_ptr<Variant> Registry::create(const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.info.name != name) continue;
    if (!entry.info.available)
      fail(ExitCode::kUsage,
           "variant '{}' needs CUDA, but this fluxjac was built without it: rebuild with nvcc available "
           "(-DFLUXJAC_CUDA=ON) and run on a machine with an NVIDIA GPU, or run its CPU emulation, {}{}",
           name, name, kEmulationSuffix);
    return entry.factory(entry.info);
  }
  throw_unknown(name);
}

void Registry::throw_unknown(const std::string& name) const {
  std::vector<std::string> names, every_name;
  for (const auto& info : list()) names.push_back(info.name);
  for (const auto& info : list(true)) every_name.push_back(info.name);
  fail(ExitCode::kUsage,
       "unknown variant '{}'{} (registered: {}, each GPU variant also as NAME{}, its CPU emulation; "
       "see 'fluxjac list')",
       name, did_you_mean(name, every_name), fmt::join(names, ", "), kEmulationSuffix);
}

std::vector<std::string> Registry::resolve(const std::vector<std::string>& names) const {
  std::vector<std::string> resolved;
  auto add_unique = [&](const std::string& name) {
    if (std::find(resolved.begin(), resolved.end(), name) == resolved.end()) resolved.push_back(name);
  };
  for (const auto& item : names) {
    for (const std::string& name : split_list(item)) {
      if (name == "all") {
        for (const auto& info : list())
          if (info.available) add_unique(info.name);
      } else if (name == "all" + std::string(kEmulationSuffix)) {
        for (const auto& info : list(true))
          if (!info.emulates.empty()) add_unique(info.name);
      } else {
        if (!contains(name)) throw_unknown(name);
        add_unique(name);
      }
    }
  }
  if (resolved.empty()) fail(ExitCode::kUsage, "no variant selected: give --variant NAME, a list or 'all'");
  return resolved;
}

VariantRegistrar::VariantRegistrar(VariantInfo info, Registry::Factory factory) {
  Registry::instance().add(std::move(info), std::move(factory));
}

EmulationRegistrar::EmulationRegistrar(Registry::Factory factory) {
  Registry::instance().set_emulation_factory(std::move(factory));
}

}  // namespace fluxjac
