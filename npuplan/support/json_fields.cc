#include "npuplan/support/json_fields.h"

#include <nlohmann/json.hpp>

#include "npuplan/support/str_util.h"

namespace npuplan {

using json = nlohmann::json;

std::string DescribeJsonValue(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: return "a string";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return v.dump();
    default: return "a binary value";
  }
}

namespace {

// "an integer", "an integer >= 0", "an integer in [0, 12]".
std::string IntRange(int64_t lo, int64_t hi) {
  if (lo == JsonFields::kMin && hi == JsonFields::kMax) return "an integer";
  if (hi == JsonFields::kMax) return StrCat("an integer >= ", lo);
  if (lo == JsonFields::kMin) return StrCat("an integer <= ", hi);
  return StrCat("an integer in [", lo, ", ", hi, "]");
}

}  // namespace

absl::Status JsonFields::Error(std::string_view path, std::string_view what) const {
  return absl::InvalidArgumentError(StrCat(source_, ": ", path, ": ", what));
}

std::string JsonFields::Member(std::string_view path, std::string_view key) { return StrCat(path, ".", key); }
std::string JsonFields::Element(std::string_view path, size_t i) { return StrCat(path, "[", i, "]"); }

absl::StatusOr<int64_t> JsonFields::Int(const json& v, std::string_view path, int64_t lo, int64_t hi) const {
  const bool in_int64 = v.is_number_integer() &&
                        (!v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(kMax));
  if (!in_int64) {
    if (v.is_number_unsigned()) {
      return Error(path, StrCat("expected ", IntRange(lo, hi), ", found ", v.dump(), " (beyond int64)"));
    }
    return Error(path, StrCat("expected ", IntRange(lo, hi), ", found ", DescribeJsonValue(v)));
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) return Error(path, StrCat("expected ", IntRange(lo, hi), ", found ", x));
  return x;
}

absl::StatusOr<std::string> JsonFields::String(const json& v, std::string_view path) const {
  if (!v.is_string()) return Error(path, StrCat("expected a string, found ", DescribeJsonValue(v)));
  return v.get<std::string>();
}

absl::StatusOr<bool> JsonFields::Bool(const json& v, std::string_view path) const {
  if (!v.is_boolean()) return Error(path, StrCat("expected true or false, found ", DescribeJsonValue(v)));
  return v.get<bool>();
}

absl::Status JsonFields::Object(const json& v, std::string_view path) const {
  if (!v.is_object()) return Error(path, StrCat("expected an object, found ", DescribeJsonValue(v)));
  return absl::OkStatus();
}

absl::Status JsonFields::Array(const json& v, std::string_view path) const {
  if (!v.is_array()) return Error(path, StrCat("expected an array, found ", DescribeJsonValue(v)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> JsonFields::IntList(const json& v, std::string_view path, int64_t lo,
                                                         int64_t hi) const {
  if (!v.is_array()) return Error(path, StrCat("expected an array of integers, found ", DescribeJsonValue(v)));
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    absl::StatusOr<int64_t> x = Int(v[i], Element(path, i), lo, hi);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> JsonFields::StringList(const json& v, std::string_view path) const {
  if (!v.is_array()) return Error(path, StrCat("expected an array of strings, found ", DescribeJsonValue(v)));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    absl::StatusOr<std::string> s = String(v[i], Element(path, i));
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

absl::StatusOr<std::map<std::string, int64_t>> JsonFields::IntMap(const json& v, std::string_view path, int64_t lo,
                                                                  int64_t hi) const {
  if (!v.is_object()) return Error(path, StrCat("expected an object of integers, found ", DescribeJsonValue(v)));
  std::map<std::string, int64_t> out;
  for (const auto& [k, e] : v.items()) {
    absl::StatusOr<int64_t> x = Int(e, Member(path, k), lo, hi);
    if (!x.ok()) return x.status();
    out.emplace(k, *x);
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> JsonFields::StringMap(const json& v, std::string_view path) const {
  if (!v.is_object()) return Error(path, StrCat("expected an object of strings, found ", DescribeJsonValue(v)));
  std::map<std::string, std::string> out;
  for (const auto& [k, e] : v.items()) {
    absl::StatusOr<std::string> s = String(e, Member(path, k));
    if (!s.ok()) return s.status();
    out.emplace(k, std::move(s).value());
  }
  return out;
}

const json* JsonFields::Find(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

absl::StatusOr<int64_t> JsonFields::IntOr(const json& obj, std::string_view path, std::string_view key, int64_t def,
                                          int64_t lo, int64_t hi) const {
  const json* v = Find(obj, key);
  return v == nullptr ? absl::StatusOr<int64_t>(def) : Int(*v, Member(path, key), lo, hi);
}

absl::StatusOr<std::string> JsonFields::StringOr(const json& obj, std::string_view path, std::string_view key,
                                                 std::string def) const {
  const json* v = Find(obj, key);
  return v == nullptr ? absl::StatusOr<std::string>(std::move(def)) : String(*v, Member(path, key));
}

absl::StatusOr<bool> JsonFields::BoolOr(const json& obj, std::string_view path, std::string_view key,
                                        bool def) const {
  const json* v = Find(obj, key);
  return v == nullptr ? absl::StatusOr<bool>(def) : Bool(*v, Member(path, key));
}

absl::StatusOr<std::vector<int64_t>> JsonFields::IntListOr(const json& obj, std::string_view path,
                                                           std::string_view key, int64_t lo, int64_t hi) const {
  const json* v = Find(obj, key);
  return v == nullptr ? absl::StatusOr<std::vector<int64_t>>(std::vector<int64_t>{})
                      : IntList(*v, Member(path, key), lo, hi);
}

absl::StatusOr<std::vector<std::string>> JsonFields::StringListOr(const json& obj, std::string_view path,
                                                                  std::string_view key) const {
  const json* v = Find(obj, key);
  return v == nullptr ? absl::StatusOr<std::vector<std::string>>(std::vector<std::string>{})
                      : StringList(*v, Member(path, key));
}

absl::StatusOr<int64_t> JsonFields::RequiredInt(const json& obj, std::string_view path, std::string_view key,
                                                int64_t lo, int64_t hi) const {
  const json* v = Find(obj, key);
  if (v == nullptr) return Error(path, StrCat("missing field '", key, "'"));
  return Int(*v, Member(path, key), lo, hi);
}

absl::StatusOr<std::string> JsonFields::RequiredString(const json& obj, std::string_view path,
                                                       std::string_view key) const {
  const json* v = Find(obj, key);
  if (v == nullptr) return Error(path, StrCat("missing field '", key, "'"));
  return String(*v, Member(path, key));
}

}  // namespace npuplan
