// Attribute values <-> JSON, shared by the graph and plan formats: a value is
// written by its type (lists and maps as JSON arrays and objects); a JSON list
// is read by the type of its elements (integers before other numbers; an empty
// list is an integer list), a mix of types is refused.
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

using json = nlohmann::json;

void graph_json_internal::WriteAttrMap(const AttrMap& m, JsonWriter& w) {
  w.BeginObject();
  for (const auto& [k, v] : m) {
    w.Key(k);
    WriteAttr(v, w);
  }
  w.EndObject();
}

json AttrToJson(const AttrValue& v) {
  std::string text;
  JsonWriter w(&text, -1);
  WriteAttr(v, w);
  w.Flush();
  return json::parse(text);
}

void WriteAttr(const AttrValue& v, JsonWriter& w) {
  std::visit(
      [&w](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, AttrMap>) {
          graph_json_internal::WriteAttrMap(x, w);
        } else if constexpr (std::is_same_v<T, AttrValue::MapList>) {
          w.BeginArray();
          for (const auto& m : x) graph_json_internal::WriteAttrMap(m, w);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::BoolList>) {
          w.BeginArray();
          for (bool b : x) w.Bool(b);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::IntList>) {
          w.IntArray(x);
        } else if constexpr (std::is_same_v<T, AttrValue::FloatList>) {
          w.BeginArray();
          for (double d : x) w.Double(d);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::StringList>) {
          w.StringArray(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.Int(x);
        } else if constexpr (std::is_same_v<T, double>) {
          w.Double(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.Bool(x);
        } else {
          w.String(x);
        }
      },
      v.get());
}

absl::StatusOr<AttrValue> AttrFromJson(const json& j, const std::string& where) {
  switch (j.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return absl::InvalidArgumentError("integer attribute out of int64 range");
      }
      return AttrValue(j.get<int64_t>());
    case json::value_t::number_float:
      return AttrValue(j.get<double>());
    case json::value_t::boolean:
      return AttrValue(j.get<bool>());
    case json::value_t::string:
      return AttrValue(j.get<std::string>());
    case json::value_t::object: {
      AttrMap m;
      for (const auto& [k, v] : j.items()) {
        NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(v, where + "." + k));
        m.emplace(k, std::move(av));
      }
      return AttrValue(std::move(m));
    }
    case json::value_t::array: {
      if (j.empty()) return AttrValue(AttrValue::IntList{});
      auto all = [&](auto pred) {
        for (const auto& e : j) {
          if (!pred(e)) return false;
        }
        return true;
      };
      if (all([](const json& e) { return e.is_number_integer(); })) {
        AttrValue::IntList l;
        for (const auto& e : j) {
          if (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
            return absl::InvalidArgumentError("integer attribute out of int64 range");
          }
          l.push_back(e.get<int64_t>());
        }
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_number(); })) {
        AttrValue::FloatList l;
        for (const auto& e : j) l.push_back(e.get<double>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_boolean(); })) {
        AttrValue::BoolList l;
        for (const auto& e : j) l.push_back(e.get<bool>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_string(); })) {
        AttrValue::StringList l;
        for (const auto& e : j) l.push_back(e.get<std::string>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_object(); })) {
        AttrValue::MapList l;
        for (size_t i = 0; i < j.size(); ++i) {
          NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(j[i], StrCat(where, "[", i, "]")));
          l.push_back(std::move(*std::get_if<AttrMap>(&av.get())));
        }
        return AttrValue(std::move(l));
      }
      return absl::InvalidArgumentError("list attribute mixes element types");
    }
    default:
      return absl::InvalidArgumentError(
          StrCat("unsupported attribute value of type ", j.type_name()));
  }
}

}  // namespace npuplan
