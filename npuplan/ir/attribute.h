// Typed node/graph attributes: int, float, bool, string, lists of these, and
// named attribute maps (GE's NamedAttrs) and lists of them, which carry
// attached-stream info (_attached_stream_info, _attached_stream_info_list).
#ifndef NPUPLAN_IR_ATTRIBUTE_H_
#define NPUPLAN_IR_ATTRIBUTE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace npuplan {

class AttrValue;
// Sorted by key: iteration order is deterministic.
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

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

// Lookups that return nullopt when the attribute is absent or of another type.
std::optional<int64_t> GetIntAttr(const AttrMap& attrs, std::string_view key);
std::optional<bool> GetBoolAttr(const AttrMap& attrs, std::string_view key);
std::optional<std::string> GetStringAttr(const AttrMap& attrs, std::string_view key);
const AttrValue* FindAttr(const AttrMap& attrs, std::string_view key);
inline bool HasAttr(const AttrMap& attrs, std::string_view key) { return attrs.find(key) != attrs.end(); }

}  // namespace npuplan

#endif  // NPUPLAN_IR_ATTRIBUTE_H_
