// ctest-label: unit
// The counting sort behind node -> cells, node adjacency, renumbering, face matching and the block-CSR pattern.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "util/bucket_sort.hpp"

namespace fluxjac {
namespace {

TEST(BucketSort, GroupsByKeyStablyLikeAStableSort) {
  std::mt19937 engine(7);
  std::uniform_int_distribution<int> key_of(0, 49);
  std::vector<std::pair<int, int>> items;  // (key, position in the input)
  for (int i = 0; i < 1000; ++i) items.emplace_back(key_of(engine), i);

  const Buckets<int> buckets = bucket_by_key<int>(60, [&](auto&& add) {
    for (const auto& [key, position] : items) add(key, position);
  });

  std::vector<std::pair<int, int>> sorted = items;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_EQ(buckets.n_keys(), 60);
  ASSERT_EQ(buckets.values.size(), items.size());
  EXPECT_EQ(buckets.start.front(), 0);
  EXPECT_EQ(buckets.start.back(), 1000);
  std::size_t k = 0;
  for (std::int64_t key = 0; key < buckets.n_keys(); ++key) {
    EXPECT_LE(buckets.start[key], buckets.start[key + 1]);
    for (auto it = buckets.begin(key); it != buckets.end(key); ++it, ++k) {
      EXPECT_EQ(sorted[k].first, key);
      EXPECT_EQ(*it, sorted[k].second) << "key " << key << ": not in input order";
    }
  }
  EXPECT_EQ(k, items.size());
  for (std::int64_t key = 50; key < 60; ++key) EXPECT_EQ(buckets.begin(key), buckets.end(key)) << "key " << key;
}

TEST(BucketSort, HandlesNoItemsNoKeysAndItemsThatAddSeveralEntries) {
  const Buckets<double> empty = bucket_by_key<double>(3, [](auto&&) {});
  EXPECT_EQ(empty.start, (std::vector<std::int64_t>{0, 0, 0, 0}));
  EXPECT_TRUE(empty.values.empty());
  const Buckets<double> none = bucket_by_key<double>(0, [](auto&&) {});
  EXPECT_EQ(none.start, (std::vector<std::int64_t>{0}));

  // Each edge (a, b) adds b to bucket a and a to bucket b: the symmetric adjacency of a path 0-1-2-3.
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}};
  const Buckets<std::string> adjacency = bucket_by_key<std::string>(4, [&](auto&& add) {
    for (const auto& [a, b] : edges) {
      add(a, std::to_string(b));
      add(b, std::to_string(a));
    }
  });
  EXPECT_EQ(adjacency.start, (std::vector<std::int64_t>{0, 1, 3, 5, 6}));
  EXPECT_EQ(adjacency.values, (std::vector<std::string>{"1", "0", "2", "1", "3", "2"}));
}

}  // namespace
}  // namespace fluxjac
