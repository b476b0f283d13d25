#include "ranks/rank_agreement.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

namespace fluxjac {
namespace {

/// At most this many values are named in one message; the others are counted.
constexpr std::size_t kMostValuesShown = 4;

// ---- encoding: each field as "<length>:<bytes>", so any byte may appear in a value -----------------------------

void put(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

class Fields {
 public:
  explicit Fields(const std::string& bytes) : bytes_(bytes) {}
  std::string next() {
    const std::size_t colon = bytes_.find(':', at_);
    if (colon == std::string::npos || colon == at_ || colon - at_ > 19) broken();
    std::size_t length = 0;
    for (std::size_t k = at_; k < colon; ++k) {
      if (bytes_[k] < '0' || bytes_[k] > '9') broken();
      length = length * 10 + static_cast<std::size_t>(bytes_[k] - '0');
    }
    if (length > bytes_.size() - colon - 1) broken();
    at_ = colon + 1 + length;
    return bytes_.substr(colon + 1, length);
  }
  int next_int() {
    const std::string field = next();
    if (field.empty() || field.size() > 9 || field.find_first_not_of("0123456789") != std::string::npos) broken();
    return std::stoi(field);
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  [[noreturn]] static void broken() {
    fail(ExitCode::kRuntime, "the ranks exchanged a command description that is cut");
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

/// The length of the printable character that starts at `at`: 1 for printable ASCII, 2 to 4 for a valid UTF-8
/// sequence of a character that is not a control character (C1 controls, U+0080 to U+009F, included); 0 for a
/// byte that must be escaped (a control character, DEL, a byte of no valid sequence).
std::size_t utf8_sequence_length(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char first = byte(0);
  if (first < 0x80) return first >= 0x20 && first != 0x7f ? 1 : 0;
  const std::size_t length = first >= 0xc2 && first <= 0xdf   ? 2
                             : first >= 0xe0 && first <= 0xef ? 3
                             : first >= 0xf0 && first <= 0xf4 ? 4
                                                              : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k)
    if ((byte(k) & 0xc0) != 0x80) return 0;
  std::uint32_t code = first & (0xff >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) code = code << 6 | (byte(k) & 0x3f);
  const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;  // overlong, surrogate
  return code >= 0x80 && code <= 0x9f ? 0 : length;
}

// ---- messages ----------------------------------------------------------------------------------------------------

/// "rank 3", "ranks 0, 2", "ranks 0-5, 7".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t k = 0; k < ranks.size();) {
    std::size_t last = k;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    if (k > 0) text += ", ";
    text += last > k + 1    ? fmt::format("{}-{}", ranks[k], ranks[last])
            : last == k + 1 ? fmt::format("{}, {}", ranks[k], ranks[last])
                            : std::to_string(ranks[k]);
    k = last + 1;
  }
  return text;
}

/// A long value cut in the middle for a message ("abc...xyz (3000 characters)"), never inside a UTF-8 sequence.
std::string abbreviated(const std::string& value) {
  constexpr std::size_t kLongest = 160, kHead = 100, kTail = 40;
  if (value.size() <= kLongest) return value;
  const auto continuation = [&](std::size_t at) { return (static_cast<unsigned char>(value[at]) & 0xc0) == 0x80; };
  std::size_t head = kHead, tail = value.size() - kTail;
  while (head > 0 && continuation(head)) --head;
  while (tail < value.size() && continuation(tail)) ++tail;
  return fmt::format("{}...{} ({} characters)", value.substr(0, head), value.substr(tail), value.size());
}

/// The item at position index of a rank's list, shown as what stands there when its subject differs from subject.
std::string value_at(const RankIntent& intent, std::size_t index, const std::string& subject) {
  if (index >= intent.items.size()) return "nothing";
  const AgreedItem& item = intent.items[index];
  return item.subject == subject ? item.value : fmt::format("{} {}", item.subject, item.value);
}

Error describe_difference(const std::vector<RankIntent>& intents, std::size_t index) {
  // The subject and exit code of the lowest rank that has an item here.
  const AgreedItem* named = nullptr;
  for (const RankIntent& intent : intents)
    if (index < intent.items.size()) {
      named = &intent.items[index];
      break;
    }
  std::vector<std::pair<std::string, std::vector<int>>> groups;  // value, ranks; in order of the lowest rank
  for (std::size_t r = 0; r < intents.size(); ++r) {
    const std::string value = value_at(intents[r], index, named->subject);
    const auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == value; });
    if (group == groups.end()) {
      groups.push_back({value, {static_cast<int>(r)}});
    } else {
      group->second.push_back(static_cast<int>(r));
    }
  }
  const bool file = named->code == ExitCode::kInvalidInput;
  std::string message = fmt::format("ranks disagree on {}: ", abbreviated(named->subject));
  for (std::size_t g = 0; g < std::min(groups.size(), kMostValuesShown); ++g) {
    const auto& [value, ranks] = groups[g];
    const char* verb = file ? (ranks.size() == 1 ? "sees" : "see") : (ranks.size() == 1 ? "has" : "have");
    message += fmt::format("{}{} {} {}", g > 0 ? ", " : "", rank_list(ranks), verb, abbreviated(value));
  }
  if (groups.size() > kMostValuesShown)
    message += fmt::format(", and {} other values", groups.size() - kMostValuesShown);
  message += file ? " (every rank must read the same file: the same path, size, modification time, inode and partition)"
                  : " (start every rank with the same command and options)";
  return Error(message, named->code);
}

}  // namespace

std::string shown_value(const std::string& value) {
  // Each piece of the value: a printable character or a valid UTF-8 sequence of one (kept), or a byte to escape.
  std::string shown;
  bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ';
  for (std::size_t at = 0; at < value.size();) {
    const auto byte = static_cast<unsigned char>(value[at]);
    if (value[at] == '"' || value[at] == '\\' || value[at] == ',') {
      if (value[at] != ',') shown += '\\';
      shown += value[at++];
      plain = false;
      continue;
    }
    const std::size_t length = utf8_sequence_length(value, at);
    if (length == 0) {
      shown += fmt::format("\\x{:02x}", byte);
      ++at;
      plain = false;
      continue;
    }
    shown.append(value, at, length);
    at += length;
  }
  return plain ? value : "\"" + shown + "\"";
}

std::string encode_intent(const RankIntent& intent) {
  std::string bytes;
  put(bytes, intent.failure);
  put(bytes, std::to_string(static_cast<int>(intent.failure_code)));
  put(bytes, std::to_string(intent.items.size()));
  for (const AgreedItem& item : intent.items) {
    put(bytes, item.subject);
    put(bytes, item.value);
    put(bytes, std::to_string(static_cast<int>(item.code)));
  }
  return bytes;
}

RankIntent decode_intent(const std::string& bytes) {
  Fields fields(bytes);
  RankIntent intent;
  intent.failure = fields.next();
  intent.failure_code = static_cast<ExitCode>(fields.next_int());
  const int count = fields.next_int();
  for (int k = 0; k < count; ++k) {
    AgreedItem item;
    item.subject = fields.next();
    item.value = fields.next();
    item.code = static_cast<ExitCode>(fields.next_int());
    intent.items.push_back(std::move(item));
  }
  if (!fields.done()) fail(ExitCode::kRuntime, "the ranks exchanged a command description with bytes past its end");
  return intent;
}

std::optional<Error> disagreement(const std::vector<RankIntent>& intents, int this_rank) {
  const RankIntent& mine = intents.at(static_cast<std::size_t>(this_rank));
  if (!mine.failure.empty()) return Error(mine.failure, mine.failure_code);
  for (std::size_t r = 0; r < intents.size(); ++r)
    if (!intents[r].failure.empty())
      return Error(fmt::format("{} (on rank {})", intents[r].failure, r), intents[r].failure_code);
  std::size_t longest = 0;
  for (const RankIntent& intent : intents) longest = std::max(longest, intent.items.size());
  for (std::size_t index = 0; index < longest; ++index) {
    const auto item_at = [index](const RankIntent& intent) {
      return index < intent.items.size() ? &intent.items[index] : nullptr;
    };
    const AgreedItem* first = item_at(intents.front());
    for (const RankIntent& intent : intents) {
      const AgreedItem* item = item_at(intent);
      if (!first || !item || !(*item == *first)) return describe_difference(intents, index);
    }
  }
  return std::nullopt;
}

void agree_on_intent(const Communicator& comm, const RankIntent& mine) {
  std::vector<RankIntent> intents;
  if (comm.distributed()) {
    for (const std::string& bytes : comm.all_gather(encode_intent(mine))) intents.push_back(decode_intent(bytes));
  } else {
    intents.push_back(mine);
  }
  if (std::optional<Error> error = disagreement(intents, comm.rank())) throw *error;
}

}  // namespace fluxjac
