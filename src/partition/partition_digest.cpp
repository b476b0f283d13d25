#include "partition/partition_digest.hpp"

#include <cstdint>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "partition/partition_io.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/input_identity.hpp"

namespace fluxjac {
namespace {

/// Offsets datasets longer than this are summed by their shape only: the digest stays a cheap read even for a file
/// that declares absurd part counts (its reader refuses it later).
constexpr std::int64_t kMaxSummedOffsets = std::int64_t{1} << 24;

/// FNV-1a, 64 bits, over the bytes of each value.
class Checksum {
 public:
  void add(std::int64_t value) {
    auto bits = static_cast<std::uint64_t>(value);
    for (int byte = 0; byte < 8; ++byte, bits >>= 8) {
      hash_ ^= bits & 0xffu;
      hash_ *= 0x100000001b3u;
    }
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325u;
};

}  // namespace

std::string partition_digest(const std::string& path) {
  try {
    const h5::File file = h5::File::open(path);
    if (!h5::exists(file, kPartitionGroup)) return "not partitioned";
    const std::string group = kPartitionGroup;
    const auto parts = h5::read_integer_attribute(file, group, "parts");
    Checksum checksum;
    checksum.add(parts ? *parts : -1);
    for (const char* name : {"node_offsets", "edge_offsets", "ghost_offsets", "halo_edge_offsets"}) {
      const std::string dataset = group + "/" + name;
      if (!h5::exists(file, dataset)) {
        checksum.add(-2);
        continue;
      }
      const h5::DatasetInfo info = h5::describe_dataset(file, dataset);
      for (const std::int64_t extent : info.shape) checksum.add(extent);
      if (info.type == h5::kInt64 && info.shape.size() == 1 && info.element_count() <= kMaxSummedOffsets)
        for (const std::int64_t offset : h5::read<std::int64_t>(file, info)) checksum.add(offset);
    }
    return fmt::format("{} parts, offsets checksum {:016x}", parts ? fmt::to_string(*parts) : "no count of",
                       checksum.value());
  } catch (const InputChanged&) {
    throw;  // not a property of the file but of the moment: the ranks would compare versions
  } catch (const std::exception& error) {
    return fmt::format("not readable as a partitioned mesh: {}", error.what());
  }
}

}  // namespace fluxjac
