// ctest-label: unit
// Ranks agree before they work (docs/design.md, "Many GPUs", "Errors"): a rank's command as the items the ranks
// compare (every option as parsed, defaults in the form of given values, files by path, size, time, inode and
// partition), each input then pinned so that a file replaced or rewritten after its description is refused when read,
// the bytes the ranks exchange, and the one error every rank reports for the first item they disagree on. In
// process, on one rank; the many-rank runs are in test_mpi.cpp.
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/command_intent.hpp"
#include "cli/commands.hpp"
#include "mesh/mesh_io.hpp"
#include "partition/partition.hpp"
#include "partition/partition_digest.hpp"
#include "partition/partition_io.hpp"
#include "ranks/communicator.hpp"
#include "ranks/rank_agreement.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/hdf5.hpp"
#include "util/input_identity.hpp"

namespace fluxjac {
namespace {

using test::TempDir;

RankIntent intent_of(std::vector<AgreedItem> items) { return RankIntent{std::move(items), {}, ExitCode::kUsage}; }

RankIntent reps(const std::string& value) {
  return intent_of({{"the command", "fluxjac run"}, {"--reps", value}, {"--warmup", "1"}});
}

// ---- the error of a disagreement --------------------------------------------------------------------------------

TEST(RankAgreement, RanksWithTheSameItemsAgree) {
  EXPECT_FALSE(disagreement({reps("5"), reps("5"), reps("5")}, 1).has_value());
}

TEST(RankAgreement, TheFirstDifferentItemIsNamedWithEveryRanksValueAndTheOptionsExitCode) {
  const std::optional<Error> error = disagreement({reps("5"), reps("3")}, 0);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), ExitCode::kUsage);
  EXPECT_EQ(
      std::string(error->what()),
      "ranks disagree on --reps: rank 0 has 5, rank 1 has 3 (start every rank with the same command and options)");
  // Every rank reports the same line.
  EXPECT_EQ(std::string(disagreement({reps("5"), reps("3")}, 1)->what()), error->what());
}

TEST(RankAgreement, RanksWithTheSameValueAreGroupedAndManyValuesCounted) {
  const std::optional<Error> grouped = disagreement({reps("5"), reps("5"), reps("5"), reps("3"), reps("5")}, 2);
  ASSERT_TRUE(grouped.has_value());
  EXPECT_NE(std::string(grouped->what()).find("ranks 0-2, 4 have 5, rank 3 has 3"), std::string::npos)
      << grouped->what();
  std::vector<RankIntent> many;
  for (int r = 0; r < 7; ++r) many.push_back(reps(std::to_string(r)));
  const std::string message = disagreement(many, 0)->what();
  EXPECT_NE(message.find("rank 3 has 3, and 3 other values"), std::string::npos) << message;
}

TEST(RankAgreement, LongValuesAreCutInTheMiddleOfTheMessage) {
  const std::string head(150, 'a'), tail(150, 'b');
  const std::string message = disagreement({reps(head + tail), reps("3")}, 0)->what();
  EXPECT_NE(message.find(fmt::format("rank 0 has {}...{} (300 characters), rank 1 has 3", std::string(100, 'a'),
                                     std::string(40, 'b'))),
            std::string::npos)
      << message;
}

TEST(RankAgreement, AFileThatDiffersIsInvalidInputSeenByTheRanks) {
  const auto file = [](const std::string& size) {
    return intent_of({{"the command", "fluxjac run"},
                      {"the size and modification time of --mesh m.h5", size, ExitCode::kInvalidInput}});
  };
  const std::optional<Error> error = disagreement({file("10 bytes"), file("12 bytes")}, 1);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), ExitCode::kInvalidInput);
  EXPECT_NE(std::string(error->what())
                .find("ranks disagree on the size and modification time of --mesh m.h5: rank 0 sees 10 bytes, rank 1 "
                      "sees 12 bytes"),
            std::string::npos)
      << error->what();
}

TEST(RankAgreement, ListsOfOtherLengthsOrOtherSubjectsDisagreeWhereTheyPart) {
  RankIntent shorter = reps("5");
  shorter.items.pop_back();
  const std::string missing = disagreement({reps("5"), shorter}, 0)->what();
  EXPECT_NE(missing.find("ranks disagree on --warmup: rank 0 has 1, rank 1 has nothing"), std::string::npos) << missing;
  const RankIntent other = intent_of({{"the command", "fluxjac run"}, {"--mesh", "m.h5"}});
  const std::string subject = disagreement({reps("5"), other}, 1)->what();
  EXPECT_NE(subject.find("ranks disagree on --reps: rank 0 has 5, rank 1 has --mesh m.h5"), std::string::npos)
      << subject;
}

TEST(RankAgreement, ARankThatFailedReportsItsOwnErrorAndTheOthersItsErrorOnItsRank) {
  RankIntent failed;
  failed.failure = "run.toml:3: unknown key 'rep'";
  failed.failure_code = ExitCode::kUsage;
  const std::vector<RankIntent> intents{reps("5"), failed, reps("3")};
  const std::optional<Error> own = disagreement(intents, 1);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(std::string(own->what()), failed.failure);
  const std::optional<Error> other = disagreement(intents, 2);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(std::string(other->what()), failed.failure + " (on rank 1)");
  EXPECT_EQ(other->code(), ExitCode::kUsage);
}

TEST(RankAgreement, OneRankThrowsOnlyItsOwnFailure) {
  EXPECT_NO_THROW(agree_on_intent(Communicator::world(), reps("5")));
  RankIntent failed;
  failed.failure = "cannot parse";
  failed.failure_code = ExitCode::kUsage;
  try {
    agree_on_intent(Communicator::world(), failed);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "cannot parse");
    EXPECT_EQ(error.code(), ExitCode::kUsage);
  }
}

TEST(RankGuard, AGuardThrowsEveryErrorAsAnAgreedErrorOfItsGuardWithItsCode) {
  const Communicator& one = Communicator::world();
  EXPECT_NO_THROW(one.agree([] {}));
  try {
    one.agree([] { fail(ExitCode::kInvalidInput, "m.h5: /mesh/areas[3] is negative"); }, Guard::kCase);
    ADD_FAILURE() << "no error";
  } catch (const AgreedError& error) {
    EXPECT_EQ(std::string(error.what()), "m.h5: /mesh/areas[3] is negative");
    EXPECT_EQ(error.code(), ExitCode::kInvalidInput);
    EXPECT_TRUE(error.case_only());
    EXPECT_EQ(error.origin(), one.rank());
  }
  // Anything else thrown is an Error as as_error makes it: an allocation that failed is a run-time error.
  try {
    one.agree([] { throw std::bad_alloc(); });
    ADD_FAILURE() << "no error";
  } catch (const AgreedError& error) {
    EXPECT_EQ(error.code(), ExitCode::kRuntime);
    EXPECT_FALSE(error.case_only()) << "met at the command's guard: it ends the command";
  }
}

TEST(RankGuard, AFailureMetAtACaseGuardPassesAnOuterGuardUnchanged) {
  const Communicator& one = Communicator::world();
  try {
    one.agree([&] { one.agree([] { fail(ExitCode::kRuntime, "out of memory"); }, Guard::kCase); });
    ADD_FAILURE() << "no error";
  } catch (const AgreedError& error) {
    EXPECT_EQ(std::string(error.what()), "out of memory");
    EXPECT_TRUE(error.case_only()) << "met once, where it happened";
  }
}

TEST(RankGuard, CollectivesOfOneRankAreTheIdentityAndCarryNoFailure) {
  const Communicator& one = Communicator::world();
  EXPECT_NO_THROW(one.barrier());
  EXPECT_EQ(one.sum(std::int64_t{7}), 7);
  EXPECT_EQ(one.all_gather(std::string("a")), std::vector<std::string>{"a"});
}

// ---- what the ranks exchange --------------------------------------------------------------------------------

TEST(RankAgreement, AnIntentTravelsByteForByteAndCutBytesAreRefused) {
  RankIntent intent = intent_of(
      {{"the file of --mesh a:b.h5", std::string("x\0y:12:", 7), ExitCode::kInvalidInput}, {"", "", ExitCode::kUsage}});
  intent.failure = "9:not a length";
  intent.failure_code = ExitCode::kRuntime;
  const std::string bytes = encode_intent(intent);
  const RankIntent back = decode_intent(bytes);
  EXPECT_EQ(back.items, intent.items);
  EXPECT_EQ(back.failure, intent.failure);
  EXPECT_EQ(back.failure_code, intent.failure_code);
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_THROW(decode_intent(bytes.substr(0, cut)), Error) << "cut at " << cut;
  EXPECT_THROW(decode_intent(bytes + "0:"), Error);
}

TEST(RankAgreement, ValuesAreShownUnambiguouslyAndWithoutControlCharacters) {
  EXPECT_EQ(shown_value("box.h5"), "box.h5");
  EXPECT_EQ(shown_value(""), "\"\"");
  EXPECT_EQ(shown_value("a,b"), "\"a,b\"");
  EXPECT_EQ(shown_value(" lead"), "\" lead\"");
  EXPECT_EQ(shown_value("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(shown_value("a\nb\x1b[2J"), "\"a\\x0ab\\x1b[2J\"");
  // UTF-8 stays as it is; bytes of no valid sequence, overlong forms and C1 controls are escaped.
  EXPECT_EQ(shown_value("maillage-\xc3\xa9t\xc3\xa9.h5"), "maillage-\xc3\xa9t\xc3\xa9.h5");
  EXPECT_EQ(shown_value("m\xff.h5"), "\"m\\xff.h5\"");
  EXPECT_EQ(shown_value("\xc0\xaf"), "\"\\xc0\\xaf\"");
  EXPECT_EQ(shown_value("a\xc2\x9b"
                        "2J"),
            "\"a\\xc2\\x9b2J\"");
  EXPECT_EQ(shown_value("\xe2\x82"), "\"\\xe2\\x82\"");
  // Distinct values stay distinct once shown.
  const std::vector<std::string> values{"a", "\"a\"", "a,b", "\"a,b\"", "a\\x0a", "a\n", "", "a\xff", "a\\xff"};
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = i + 1; j < values.size(); ++j)
      EXPECT_NE(shown_value(values[i]), shown_value(values[j])) << i << " " << j;
}

// ---- a command's items --------------------------------------------------------------------------------------------

/// The intent of `fluxjac ARGS` (the real subcommands), parsed in process.
RankIntent command_intent(const std::vector<std::string>& args, bool with_files = false) {
  CLI::App app{"fluxjac", "fluxjac"};
  app.require_subcommand(1);
  CommandAction action;
  add_run_command(app, action);
  add_bench_command(app, action);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return read_command_intent(app, with_files);
}

const AgreedItem* find_item(const RankIntent& intent, const std::string& subject) {
  for (const AgreedItem& item : intent.items)
    if (item.subject == subject) return &item;
  return nullptr;
}

TEST(CommandIntent, OptionsCompareAsParsedWithDefaultsInTheFormOfGivenValues) {
  const RankIntent plain = command_intent({"bench", "--mesh", "m.h5"});
  EXPECT_EQ(plain.items.front().subject, "the command");
  EXPECT_EQ(plain.items.front().value, "fluxjac bench");
  EXPECT_TRUE(plain.failure.empty()) << plain.failure;
  // The default given explicitly, a list given in pieces, a flag given twice: the same work, the same items.
  EXPECT_EQ(command_intent({"bench", "--mesh", "m.h5", "--reps", "20"}).items, plain.items);
  EXPECT_EQ(command_intent({"bench", "--mesh", "m.h5", "--variant", "all"}).items, plain.items);
  EXPECT_EQ(command_intent({"run", "--mesh", "m.h5", "--variant", "hd,dn_5"}).items,
            command_intent({"run", "--mesh", "m.h5", "--variant", "hd", "--variants", "dn_5"}).items);
  EXPECT_EQ(command_intent({"run", "--mesh", "m.h5", "-q", "-q"}).items,
            command_intent({"run", "--mesh", "m.h5", "-q"}).items);
  // Any option that changes the work changes an item, named by the option.
  for (const std::vector<std::string>& changed : std::vector<std::vector<std::string>>{
           {"--reps", "3"}, {"--warmup", "0"}, {"--no-validate"}, {"--json", "r.json"}, {"--mode", "compute-only"}}) {
    std::vector<std::string> args{"bench", "--mesh", "m.h5"};
    args.insert(args.end(), changed.begin(), changed.end());
    const RankIntent other = command_intent(args);
    std::string differing;
    for (std::size_t k = 0; k < plain.items.size(); ++k)
      if (!(plain.items[k] == other.items.at(k))) differing = other.items[k].subject;
    EXPECT_NE(differing.find(changed.front().substr(0, 6)), std::string::npos) << changed.front() << ": " << differing;
  }
  const AgreedItem* validate =
      find_item(command_intent({"run", "--mesh", "m.h5", "--no-validate"}), "--validate/--no-validate");
  ASSERT_NE(validate, nullptr);
  EXPECT_EQ(validate->value, "false");
}

TEST(CommandIntent, TheConfigFileIsAppliedAndItsValuesCompareLikeTheCommandLines) {
  const TempDir dir;
  const std::string config = dir.file("run.toml");
  std::ofstream(config) << "reps = 7\nvariant = [\"reference\"]\n";
  const RankIntent from_file = command_intent({"run", "--mesh", "m.h5", "--config", config});
  ASSERT_TRUE(from_file.failure.empty()) << from_file.failure;
  ASSERT_NE(find_item(from_file, "--reps"), nullptr);
  EXPECT_EQ(find_item(from_file, "--reps")->value, "7");
  EXPECT_EQ(find_item(from_file, "--reps")->value,
            find_item(command_intent({"run", "--mesh", "m.h5", "--reps", "7"}), "--reps")->value);
  // A config file that cannot be applied is the rank's failure, with its exit code.
  std::ofstream(config) << "rep = 7\n";
  const RankIntent broken = command_intent({"run", "--mesh", "m.h5", "--config", config});
  EXPECT_NE(broken.failure.find("unknown key 'rep'"), std::string::npos) << broken.failure;
  EXPECT_EQ(broken.failure_code, ExitCode::kUsage);
}

TEST(CommandIntent, InputFilesAreNamedByFullPathSizeTimeAndPartitionAndOutputsByWhereTheyGo) {
  const TempDir dir;
  const std::string mesh = dir.file("m.h5");
  const GeneratedMesh generated = test::generate_mesh("tet", 2);
  write_edge_mesh(mesh, generated.mesh, &generated.state);
  const RankIntent intent = command_intent({"run", "--mesh", mesh, "-o", dir.file("J.h5"), "--json", "-"}, true);
  const std::string named = "--mesh " + shown_value(mesh);
  const AgreedItem* full = find_item(intent, "the file of " + named);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->value, shown_value(std::filesystem::canonical(mesh).string()));
  EXPECT_EQ(full->code, ExitCode::kInvalidInput);
  const AgreedItem* size = find_item(intent, "the size and modification time of " + named);
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->value.find(fmt::format("{} bytes, modified ", std::filesystem::file_size(mesh))), 0u) << size->value;
  // One process is one machine: the inode is compared.
  struct stat status {};
  ASSERT_EQ(::stat(mesh.c_str(), &status), 0);
  const AgreedItem* inode = find_item(intent, "the inode of " + named);
  ASSERT_NE(inode, nullptr);
  EXPECT_EQ(inode->value, std::to_string(status.st_ino));
  EXPECT_EQ(inode->code, ExitCode::kInvalidInput);
  const AgreedItem* partition = find_item(intent, "the partition of " + named);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->value, "not partitioned");
  const AgreedItem* output = find_item(intent, "where --output " + shown_value(dir.file("J.h5")) + " is written");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->code, ExitCode::kUsage);
  for (const AgreedItem& item : intent.items) EXPECT_EQ(item.subject.find("--json -"), std::string::npos);
  // A missing file is compared as missing (its reader names it after the ranks agree); a generator spec by its text.
  const RankIntent missing = command_intent({"run", "--mesh", dir.file("none.h5")}, true);
  const AgreedItem* none = find_item(missing, "the file of --mesh " + shown_value(dir.file("none.h5")));
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->value.find("no file"), 0u) << none->value;
  const RankIntent spec = command_intent({"bench", "--mesh", "tet:2:rcm", "--cache", dir.file("cache")}, true);
  const AgreedItem* cache = find_item(spec, "the mesh cache folder (--cache, or from $XDG_CACHE_HOME or $HOME)");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->value, shown_value(dir.file("cache")));
}

TEST(CommandIntent, AnInputReplacedOrRewrittenAfterItsDescriptionIsRefusedWhenRead) {
  const TempDir dir;
  const GeneratedMesh generated = test::generate_mesh("tet", 2);
  FlowState other = generated.state;
  for (double& q : other.Q) q *= 1.01;
  const std::string mesh = dir.file("m.h5"), state = dir.file("s.h5"), replacement = dir.file("m-other.h5");
  write_edge_mesh(mesh, generated.mesh, &generated.state);
  write_flow_state(state, generated.state);
  write_edge_mesh(replacement, generated.mesh, &other);
  const RankIntent intent = command_intent({"run", "--mesh", mesh, "--state", state}, true);
  ASSERT_TRUE(intent.failure.empty()) << intent.failure;
  // The files described are the files read, as often as they are opened.
  EXPECT_NO_THROW(read_edge_mesh(mesh));
  EXPECT_NO_THROW(read_edge_mesh(mesh));
  EXPECT_NO_THROW(read_flow_state(state, generated.mesh.n_nodes));
  // Renamed over: the same path, size and time, another file.
  const auto modified = std::filesystem::last_write_time(mesh);
  std::filesystem::last_write_time(replacement, modified);
  std::filesystem::rename(replacement, mesh);
  test::expect_invalid([&] { read_edge_mesh(mesh); }, {"m.h5: the file changed while the ranks started"});
  EXPECT_THROW(h5::File::open(mesh), InputChanged);
  // Rewritten in place, the same size, its modification time set back: the change time tells (after a pause: file
  // times advance by the kernel's clock tick).
  const auto state_modified = std::filesystem::last_write_time(state);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    h5::File file = h5::File::open(state, h5::File::Mode::kReadWrite);
    h5::write_rows(file, "/state/Q", {{0, generated.mesh.n_nodes}}, other.Q);
    file.close();
  }
  std::filesystem::last_write_time(state, state_modified);
  test::expect_invalid([&] { read_flow_state(state, generated.mesh.n_nodes); },
                       {"s.h5: the file changed while the ranks started"});
}

// ---- a partitioned file's digest -------------------------------------------------------------------------------

/// A tet mesh partitioned into `parts` slabs of x, written with its /partition.
std::string write_slab_partitioned(const TempDir& dir, const std::string& name, int parts) {
  const GeneratedMesh generated = test::generate_mesh("tet", 3);
  NodePartition partition;
  partition.parts = parts;
  for (std::int64_t i = 0; i < generated.mesh.n_nodes; ++i)
    partition.part_of_node.push_back(
        std::min(parts - 1, static_cast<int>(std::floor(generated.mesh.coords[3 * i] * parts))));
  const PartitionedMesh partitioned = renumber_by_part(generated.mesh, partition);
  const std::string path = dir.file(name);
  write_edge_mesh(path, partitioned.mesh, nullptr);
  const h5::File file = h5::File::open(path, h5::File::Mode::kReadWrite);
  write_partition(file, partitioned.layout, "slabs");
  return path;
}

TEST(PartitionDigest, DiffersWithThePartCountAndAnyOffsetAndSaysWhenThereIsNone) {
  const TempDir dir;
  const std::string two = write_slab_partitioned(dir, "two.h5", 2), three = write_slab_partitioned(dir, "three.h5", 3);
  const std::string digest = partition_digest(two);
  EXPECT_EQ(digest.find("2 parts, offsets checksum "), 0u) << digest;
  EXPECT_EQ(partition_digest(three).find("3 parts, offsets checksum "), 0u) << partition_digest(three);
  EXPECT_EQ(partition_digest(write_slab_partitioned(dir, "again.h5", 2)), digest)
      << "the same partition, the same digest";
  {
    const h5::File file = h5::File::open(two, h5::File::Mode::kReadWrite);
    const h5::DatasetInfo info = h5::describe_dataset(file, "/partition/halo_edge_offsets");
    std::vector<std::int64_t> offsets = h5::read<std::int64_t>(file, info);
    offsets[1] -= 1;
    h5::replace(file, "/partition/halo_edge_offsets", offsets, {static_cast<std::int64_t>(offsets.size())});
  }
  EXPECT_NE(partition_digest(two), digest);
  const std::string plain = dir.file("plain.h5");
  const GeneratedMesh generated = test::generate_mesh("tet", 2);
  write_edge_mesh(plain, generated.mesh, &generated.state);
  EXPECT_EQ(partition_digest(plain), "not partitioned");
  std::ofstream(dir.file("text.h5")) << "not HDF5\n";
  EXPECT_EQ(partition_digest(dir.file("text.h5")).find("not readable as a partitioned mesh: "), 0u);
}

}  // namespace
}  // namespace fluxjac
