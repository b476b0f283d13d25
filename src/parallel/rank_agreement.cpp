#include "parallel/rank_agreement.hpp"

#include <algorithm>
#include <cstddef>
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
  std::string message = fmt::format("ranks disagree on {}: ", named->subject);
  for (std::size_t g = 0; g < std::min(groups.size(), kMostValuesShown); ++g) {
    const auto& [value, ranks] = groups[g];
    const char* verb = file ? (ranks.size() == 1 ? "sees" : "see") : (ranks.size() == 1 ? "has" : "have");
    message += fmt::format("{}{} {} {}", g > 0 ? ", " : "", rank_list(ranks), verb, value);
  }
  if (groups.size() > kMostValuesShown)
    message += fmt::format(", and {} other values", groups.size() - kMostValuesShown);
  message += file ? " (every rank must read the same file: the same path, size, modification time and partition)"
                  : " (start every rank with the same command and options)";
  return Error(message, named->code);
}

}  // namespace

std::string shown_value(const std::string& value) {
  const bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ' &&
                     std::none_of(value.begin(), value.end(), [](char c) {
                       const auto byte = static_cast<unsigned char>(c);
                       return byte < 0x20 || byte == 0x7f || c == ',' || c == '"' || c == '\\';
                     });
  if (plain) return value;
  std::string shown = "\"";
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      shown += '\\';
      shown += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      shown += fmt::format("\\x{:02x}", byte);
    } else {
      shown += c;
    }
  }
  return shown + "\"";
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
