#include "npuplan/ir/attribute.h"

namespace npuplan {

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
