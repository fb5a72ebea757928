#include "npuplan/ir/attribute.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace npuplan {

const std::string* InternAttrKey(std::string_view key) {
  // Per-thread direct-mapped cache in front of the shared table: the same
  // few keys are written over and over (a pass writing one attribute on every
  // node), so most calls take no lock.
  thread_local std::array<const std::string*, 32> cache{};
  const size_t h = key.empty() ? 0 : key.size() * 7 + static_cast<unsigned char>(key[key.size() / 2]) * 3 +
                                          static_cast<unsigned char>(key.back());
  const std::string*& slot = cache[h % cache.size()];
  if (slot != nullptr && *slot == key) return slot;
  // Immortal (never destroyed): keys stay valid during static destruction.
  static std::mutex* mu = new std::mutex;
  static std::set<std::string, std::less<>>* table = new std::set<std::string, std::less<>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(key);
  if (it == table->end()) it = table->emplace(key).first;
  slot = &*it;
  return slot;
}

size_t AttrMap::erase(std::string_view key) {
  const size_t i = LowerBound(key);
  if (i >= Entries().size() || !(Entries()[i].first == key)) return 0;  // absent: a shared map stays shared
  Unshare();
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
  return 1;
}

AttrMap AttrMap::Shared(std::string_view key, const AttrValue& value) {
  using Block = const std::vector<AttrEntry>*;
  // Immortal, like the key table: blocks stay valid during static destruction.
  // Int and bool values are found through an ordered index on (key, type,
  // value): the partition interns one `_parent_node_index` per input of its
  // widest subgraph, and scanning every earlier block for each new value made
  // that quadratic. Other values are scanned (few distinct values).
  static std::mutex* mu = new std::mutex;
  static std::map<std::tuple<const std::string*, size_t, int64_t>, Block>* scalars =
      new std::map<std::tuple<const std::string*, size_t, int64_t>, Block>;
  static std::map<const std::string*, std::vector<Block>>* others =
      new std::map<const std::string*, std::vector<Block>>;
  const AttrKey k(key);
  const std::string* kp = &k.str();
  AttrMap m;
  std::lock_guard<std::mutex> lock(*mu);
  const int64_t* i = value.as<int64_t>();
  const bool* b = value.as<bool>();
  if (i != nullptr || b != nullptr) {
    Block& block = (*scalars)[{kp, value.get().index(), i != nullptr ? *i : int64_t{*b}}];
    if (block == nullptr) block = new std::vector<AttrEntry>{AttrEntry{k, value}};
    m.shared_ = block;
    return m;
  }
  std::vector<Block>& blocks = (*others)[kp];
  for (Block bl : blocks) {
    if ((*bl)[0].second == value) {
      m.shared_ = bl;
      return m;
    }
  }
  blocks.push_back(new std::vector<AttrEntry>{AttrEntry{k, value}});
  m.shared_ = blocks.back();
  return m;
}

AttrMap AttrMap::FromUnsorted(std::vector<std::pair<std::string, AttrValue>> entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  AttrMap m;
  m.entries_.reserve(entries.size());
  for (auto& [k, v] : entries) {
    if (!m.entries_.empty() && m.entries_.back().first == std::string_view(k)) continue;  // keeps the first
    m.entries_.push_back(AttrEntry{AttrKey(k), std::move(v)});
  }
  return m;
}

bool operator==(const AttrMap& a, const AttrMap& b) {
  const std::vector<AttrEntry>& x = a.Entries();
  const std::vector<AttrEntry>& y = b.Entries();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i].first == y[i].first) || !(x[i].second == y[i].second)) return false;
  }
  return true;
}

std::string_view AttrValue::TypeName() const {
  static constexpr std::string_view kNames[] = {"int",         "float",       "bool",
                                                "string",      "list(int)",   "list(float)",
                                                "list(bool)",  "list(string)", "map",
                                                "list(map)"};
  return kNames[v_.index()];
}

const AttrValue* FindAttr(const AttrMap& attrs, std::string_view key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

std::optional<int64_t> GetIntAttr(const AttrMap& attrs, std::string_view key) {
  const AttrValue* v = FindAttr(attrs, key);
  if (v == nullptr) return std::nullopt;
  if (auto* i = v->as<int64_t>()) return *i;
  if (auto* b = v->as<bool>()) return *b ? 1 : 0;
  return std::nullopt;
}

std::optional<bool> GetBoolAttr(const AttrMap& attrs, std::string_view key) {
  const AttrValue* v = FindAttr(attrs, key);
  if (v == nullptr) return std::nullopt;
  if (auto* b = v->as<bool>()) return *b;
  if (auto* i = v->as<int64_t>()) return *i != 0;
  if (auto* s = v->as<std::string>()) {
    if (*s == "true" || *s == "1") return true;
    if (*s == "false" || *s == "0") return false;
  }
  return std::nullopt;
}

std::optional<std::string> GetStringAttr(const AttrMap& attrs, std::string_view key) {
  const AttrValue* v = FindAttr(attrs, key);
  if (v == nullptr) return std::nullopt;
  if (auto* s = v->as<std::string>()) return *s;
  return std::nullopt;
}

}  // namespace npuplan
