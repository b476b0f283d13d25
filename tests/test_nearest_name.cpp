// ctest-label: unit
// Unit tests of the "did you mean" helper (util/nearest_name.hpp): edit distances and when a name is near enough
// to be suggested.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/nearest_name.hpp"

namespace fluxjac {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("run", "run"), 0u);
  EXPECT_EQ(edit_distance("runn", "run"), 1u);       // deletion
  EXPECT_EQ(edit_distance("dn52", "dn5_2"), 1u);     // insertion
  EXPECT_EQ(edit_distance("--repz", "--reps"), 1u);  // substitution
  EXPECT_EQ(edit_distance("bnech", "bench"), 1u);    // swap of neighbours
  EXPECT_EQ(edit_distance("RUN", "run"), 0u);        // case is ignored
  EXPECT_EQ(edit_distance("", "list"), 4u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(NearestName, SuggestsOnlyANearName) {
  const std::vector<std::string> variants = {"reference", "dn5_2", "dn_10", "dn_2", "dn_5", "edn5_2", "edn_5", "hd"};
  EXPECT_EQ(nearest_name("dn52", variants), "dn5_2");
  EXPECT_EQ(nearest_name("refrence", variants), "reference");
  EXPECT_EQ(nearest_name("no_such_variant", variants), "");
  EXPECT_EQ(nearest_name("xy", variants), "");  // two letters: at most one edit, and "hd" needs two
  EXPECT_EQ(nearest_name("--repz", {"--help", "--reps", "--mesh"}), "--reps");
  EXPECT_EQ(nearest_name("--zz", {"-q", "--help"}), "");  // the dashes do not count as letters
  EXPECT_EQ(nearest_name("dn5", variants), "dn_5");
  EXPECT_EQ(nearest_name("dn_7", variants), "dn_2");  // of equally near names (dn_2, dn_5), the first
  EXPECT_EQ(nearest_name("anything", {}), "");
}

TEST(NearestName, DidYouMeanIsEmptyWithoutASuggestion) {
  EXPECT_EQ(did_you_mean("runn", {"run", "list"}), "; did you mean 'run'?");
  EXPECT_EQ(did_you_mean("assemble", {"run", "list"}), "");
}

}  // namespace
}  // namespace fluxjac
