// Typed node/graph attributes: int, float, bool, string, lists of these, and
// named attribute maps (GE's NamedAttrs) and lists of them, which carry
// attached-stream info (_attached_stream_info, _attached_stream_info_list).
//
// AttrMap is a flat map: one array of (key, value) entries sorted by key
// (iteration order is deterministic, as with the std::map it replaces), with
// interned keys (AttrKey: a pointer to one process-wide copy of each distinct
// key string). Writing `_is_unknown_shape` on a node without attributes is
// one 48-byte allocation instead of a tree node plus a heap copy of the
// 17-character key (std::string keeps at most 15 characters inline); on a
// 1M-node partition those allocations and the memory they touch were the
// largest single cost. Differences from std::map: inserting or erasing
// invalidates references and iterators into the same map (look values up
// again after a write), and inserting out of key order moves the entries
// after the insertion point (bulk readers collect and sort, see FromUnsorted).
//
// Shared maps (AttrMap::Shared): a one-entry map can point to an immutable,
// never-freed block interned per (key, value) instead of owning an array;
// copies share the block, and the first write (any non-const access) copies
// it into the map's own array. The partition writes `_is_unknown_shape` on
// every member and `_parent_node_index` on every boundary Data node: one
// small allocation per node, all of it fresh heap to fault in; with shared
// maps it is none.
#ifndef NPUPLAN_IR_ATTRIBUTE_H_
#define NPUPLAN_IR_ATTRIBUTE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace npuplan {

// The interned copy of `key` (never freed; one per distinct key per process).
const std::string* InternAttrKey(std::string_view key);

// An attribute name: compares and converts like a string.
class AttrKey {
 public:
  explicit AttrKey(std::string_view s) : s_(InternAttrKey(s)) {}
  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT: reads like the std::string key it was
  operator std::string_view() const { return *s_; }    // NOLINT
  size_t size() const { return s_->size(); }
  bool empty() const { return s_->empty(); }
  const char* data() const { return s_->data(); }
  const char* c_str() const { return s_->c_str(); }
  bool starts_with(std::string_view p) const { return std::string_view(*s_).starts_with(p); }
  friend bool operator==(const AttrKey& a, const AttrKey& b) { return a.s_ == b.s_; }
  friend bool operator==(const AttrKey& a, std::string_view b) { return std::string_view(*a.s_) == b; }

 private:
  const std::string* s_;
};

class AttrValue;
struct AttrEntry;  // {first: AttrKey, second: AttrValue}, defined below

class AttrMap {
 public:
  using key_type = AttrKey;
  using mapped_type = AttrValue;
  using value_type = AttrEntry;
  using iterator = std::vector<AttrEntry>::iterator;
  using const_iterator = std::vector<AttrEntry>::const_iterator;

  // Bodies below AttrEntry's definition: they instantiate std::vector<AttrEntry>
  // members, which need the complete type (clang instantiates them at once —
  // AttrValue's inline constructors would otherwise instantiate ~AttrMap).
  AttrMap();
  ~AttrMap();
  AttrMap(const AttrMap&);
  AttrMap(AttrMap&&) noexcept;
  AttrMap& operator=(const AttrMap&);
  AttrMap& operator=(AttrMap&&) noexcept;
  bool empty() const;
  size_t size() const;
  void clear();
  iterator begin();
  iterator end();
  const_iterator begin() const;
  const_iterator end() const;

  iterator find(std::string_view key);
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`, inserted (int 0) when absent.
  AttrValue& operator[](std::string_view key);
  // Inserts when absent; never overwrites.
  template <typename V>
  std::pair<iterator, bool> emplace(std::string_view key, V&& value);
  template <typename V>
  std::pair<iterator, bool> insert_or_assign(std::string_view key, V&& value);
  size_t erase(std::string_view key);
  iterator erase(const_iterator it);

  // A map of the given entries (any order, keys distinct): one sort instead
  // of an insertion per entry.
  static AttrMap FromUnsorted(std::vector<std::pair<std::string, AttrValue>> entries);
  // The one-entry map {key: value}, shared (see the file comment): assigning
  // it to an empty map allocates nothing. One block per distinct (key,
  // value) for the life of the process: meant for a small set of values
  // written on many nodes (flags, small indices). Thread-safe.
  static AttrMap Shared(std::string_view key, const AttrValue& value);
  // True while the map reads a shared block (no write since it was assigned).
  bool shared() const { return shared_ != nullptr; }

  friend bool operator==(const AttrMap& a, const AttrMap& b);

 private:
  // The entries as read: the shared block, else the own array.
  const std::vector<AttrEntry>& Entries() const { return shared_ != nullptr ? *shared_ : entries_; }
  // Before a write: copies a shared block into the own array.
  void Unshare();
  // First entry whose key is not less than `key`.
  size_t LowerBound(std::string_view key) const;

  std::vector<AttrEntry> entries_;  // sorted by key string, keys distinct; empty while shared
  const std::vector<AttrEntry>* shared_ = nullptr;  // immortal interned block, or null
};

class AttrValue {
 public:
  using IntList = std::vector<int64_t>;
  using FloatList = std::vector<double>;
  using BoolList = std::vector<bool>;
  using StringList = std::vector<std::string>;
  using MapList = std::vector<AttrMap>;
  using Variant = std::variant<int64_t, double, bool, std::string, IntList, FloatList, BoolList,
                               StringList, AttrMap, MapList>;

  AttrValue() : v_(int64_t{0}) {}
  template <typename T>
  AttrValue(T&& v) : v_(std::forward<T>(v)) {}  // NOLINT: implicit by design
  AttrValue(int v) : v_(int64_t{v}) {}           // NOLINT
  AttrValue(const char* v) : v_(std::string(v)) {}  // NOLINT

  const Variant& get() const { return v_; }
  Variant& get() { return v_; }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(v_);
  }
  template <typename T>
  const T* as() const {
    return std::get_if<T>(&v_);
  }
  // Name of the held type as used in error messages ("int", "string", …).
  std::string_view TypeName() const;

  friend bool operator==(const AttrValue&, const AttrValue&) = default;

 private:
  Variant v_;
};

struct AttrEntry {
  AttrKey first;
  AttrValue second;
};

inline AttrMap::AttrMap() = default;
inline AttrMap::~AttrMap() = default;
inline AttrMap::AttrMap(const AttrMap&) = default;
inline AttrMap::AttrMap(AttrMap&& o) noexcept
    : entries_(std::move(o.entries_)), shared_(std::exchange(o.shared_, nullptr)) {}
inline AttrMap& AttrMap::operator=(const AttrMap&) = default;
inline AttrMap& AttrMap::operator=(AttrMap&& o) noexcept {
  entries_ = std::move(o.entries_);
  shared_ = std::exchange(o.shared_, nullptr);
  return *this;
}
inline void AttrMap::Unshare() {
  if (shared_ != nullptr) {
    entries_ = *shared_;
    shared_ = nullptr;
  }
}
inline bool AttrMap::empty() const { return Entries().empty(); }
inline size_t AttrMap::size() const { return Entries().size(); }
inline void AttrMap::clear() {
  entries_.clear();
  shared_ = nullptr;
}
inline AttrMap::iterator AttrMap::begin() {
  Unshare();
  return entries_.begin();
}
inline AttrMap::iterator AttrMap::end() {
  Unshare();
  return entries_.end();
}
inline AttrMap::const_iterator AttrMap::begin() const { return Entries().begin(); }
inline AttrMap::const_iterator AttrMap::end() const { return Entries().end(); }
inline AttrMap::iterator AttrMap::erase(const_iterator it) {
  const auto i = it - Entries().begin();  // `it` may point into the shared block
  Unshare();
  return entries_.erase(entries_.begin() + i);
}

inline size_t AttrMap::LowerBound(std::string_view key) const {
  const std::vector<AttrEntry>& entries = Entries();
  size_t lo = 0, hi = entries.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (std::string_view(entries[mid].first) < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

inline AttrMap::iterator AttrMap::find(std::string_view key) {
  Unshare();  // the iterator allows writes
  const size_t i = LowerBound(key);
  return i < entries_.size() && entries_[i].first == key ? entries_.begin() + i : entries_.end();
}
inline AttrMap::const_iterator AttrMap::find(std::string_view key) const {
  const std::vector<AttrEntry>& entries = Entries();
  const size_t i = LowerBound(key);
  return i < entries.size() && entries[i].first == key ? entries.begin() + i : entries.end();
}

template <typename V>
std::pair<AttrMap::iterator, bool> AttrMap::emplace(std::string_view key, V&& value) {
  Unshare();
  const size_t i = LowerBound(key);
  if (i < entries_.size() && entries_[i].first == key) return {entries_.begin() + i, false};
  return {entries_.insert(entries_.begin() + i, AttrEntry{AttrKey(key), AttrValue(std::forward<V>(value))}), true};
}

template <typename V>
std::pair<AttrMap::iterator, bool> AttrMap::insert_or_assign(std::string_view key, V&& value) {
  Unshare();
  const size_t i = LowerBound(key);
  if (i < entries_.size() && entries_[i].first == key) {
    entries_[i].second = AttrValue(std::forward<V>(value));
    return {entries_.begin() + i, false};
  }
  return {entries_.insert(entries_.begin() + i, AttrEntry{AttrKey(key), AttrValue(std::forward<V>(value))}), true};
}

inline AttrValue& AttrMap::operator[](std::string_view key) {
  return emplace(key, AttrValue()).first->second;
}

// Lookups that return nullopt when the attribute is absent or of another type.
std::optional<int64_t> GetIntAttr(const AttrMap& attrs, std::string_view key);
std::optional<bool> GetBoolAttr(const AttrMap& attrs, std::string_view key);
std::optional<std::string> GetStringAttr(const AttrMap& attrs, std::string_view key);
const AttrValue* FindAttr(const AttrMap& attrs, std::string_view key);
inline bool HasAttr(const AttrMap& attrs, std::string_view key) { return attrs.find(key) != attrs.end(); }

}  // namespace npuplan

#endif  // NPUPLAN_IR_ATTRIBUTE_H_
