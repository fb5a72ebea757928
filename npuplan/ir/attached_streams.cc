#include "npuplan/ir/attached_streams.h"

#include <set>
#include <string>
#include <string_view>

#include "npuplan/ir/attribute.h"
#include "npuplan/ir/control_flow_types.h"

namespace npuplan {

std::vector<int64_t> AttachedDependIndices(const Node& node, int32_t attached) {
  // GE's names: V1 `_attached_stream_depend_value_list`, V2 entries
  // `_attached_resource_depend_value_list_int` (the V1 name read there as an
  // npuplan alias).
  constexpr std::string_view kKey = "_attached_stream_depend_value_list";
  constexpr std::string_view kKeyV2 = "_attached_resource_depend_value_list_int";
  auto from_map = [&](const AttrMap& m, std::string_view key) -> std::vector<int64_t> {
    if (const AttrValue* v = FindAttr(m, key); v != nullptr && v->is<AttrValue::IntList>()) {
      return *v->as<AttrValue::IntList>();
    }
    return {};
  };
  if (const AttrValue* v = FindAttr(node.attrs, "_attached_stream_info_list"); v != nullptr) {
    const auto* list = v->as<AttrValue::MapList>();
    if (list == nullptr || attached < 0) return {};
    // The entries that got a stream carry `_attached_resource_is_valid`
    // (written by assign-attached-stream-pass; entries that are not required
    // get none); without any, entries count in order.
    std::vector<const AttrMap*> valid;
    for (const AttrMap& e : *list) {
      if (GetBoolAttr(e, "_attached_resource_is_valid").value_or(false)) valid.push_back(&e);
    }
    if (valid.empty()) {
      for (const AttrMap& e : *list) valid.push_back(&e);
    }
    if (static_cast<size_t>(attached) >= valid.size()) return {};
    const AttrMap& entry = *valid[attached];
    return from_map(entry, HasAttr(entry, kKeyV2) ? kKeyV2 : kKey);
  }
  if (const AttrValue* v = FindAttr(node.attrs, "_attached_stream_info"); v != nullptr) {
    if (const auto* m = v->as<AttrMap>(); m != nullptr && attached == 0) return from_map(*m, kKey);
    if (const auto* list = v->as<AttrValue::MapList>(); list != nullptr && attached >= 0 &&
                                                         static_cast<size_t>(attached) < list->size()) {
      return from_map((*list)[attached], kKey);
    }
  }
  return {};
}

std::vector<int32_t> AttachedReadersOf(const Node& node, NodeId producer) {
  std::vector<int32_t> out;
  for (int32_t a = 0; a < static_cast<int32_t>(node.attached_stream_ids.size()); ++a) {
    for (int64_t idx : AttachedDependIndices(node, a)) {
      if (idx >= 0 && static_cast<size_t>(idx) < node.inputs.size() &&
          node.inputs[idx].node == producer) {
        out.push_back(a);
        break;
      }
    }
  }
  return out;
}

bool IsDataOrConst(const Node& node) {
  static const std::set<std::string, std::less<>> kTypes = {
      "Data", "RefData", "AippData", "Const", "Constant", "ConstPlaceHolder", "FileConstant", "Variable", "VariableV2"};
  return kTypes.count(node.type) > 0;
}

bool IsSyncNode(const Node& node) {
  // Walks over a million nodes ask this of each: most types differ in length
  // from all four (Send/Recv: 4, SendNotify/RecvNotify: 10).
  const std::string_view t = node.type;
  if (t.size() != 4 && t.size() != 10) return false;
  return t == "Send" || t == "Recv" || t == "SendNotify" || t == "RecvNotify";
}

bool CarriesOnlyOrder(const Node& node) { return IsSyncNode(node) || IsLoopGate(node); }

}  // namespace npuplan
