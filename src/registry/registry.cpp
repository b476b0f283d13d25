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
  entries_.push_back({std::move(info), std::move(factory)});
}

std::vector<VariantInfo> Registry::list() const {
  std::vector<VariantInfo> infos;
  for (const auto& entry : entries_) infos.push_back(entry.info);
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
           "(-DFLUXJAC_CUDA=ON) and run on a machine with an NVIDIA GPU",
           name);
    return entry.factory(entry.info);
  }
  throw_unknown(name);
}

void Registry::throw_unknown(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& info : list()) names.push_back(info.name);
  fail(ExitCode::kUsage, "unknown variant '{}'{} (registered: {}; see 'fluxjac list')", name, did_you_mean(name, names),
       fmt::join(names, ", "));
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

}  // namespace fluxjac
