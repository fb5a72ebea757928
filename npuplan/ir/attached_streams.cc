#include "npuplan/ir/attached_streams.h"

#include <set>
#include <string>
#include <string_view>

#include "npuplan/ir/attribute.h"

namespace npuplan {

std::vector<int64_t> AttachedDependIndices(const Node& node, int32_t attached) {
  constexpr std::string_view kKey = "_attached_stream_depend_value_list";
  auto from_map = [&](const AttrMap& m) -> std::vector<int64_t> {
    if (const AttrValue* v = FindAttr(m, kKey); v != nullptr && v->is<AttrValue::IntList>()) {
      return *v->as<AttrValue::IntList>();
    }
    return {};
  };
  if (const AttrValue* v = FindAttr(node.attrs, "_attached_stream_info_list"); v != nullptr) {
    if (const auto* list = v->as<AttrValue::MapList>(); list != nullptr && attached >= 0 &&
                                                         static_cast<size_t>(attached) < list->size()) {
      return from_map((*list)[attached]);
    }
  }
  if (const AttrValue* v = FindAttr(node.attrs, "_attached_stream_info"); v != nullptr) {
    if (const auto* m = v->as<AttrMap>(); m != nullptr && attached == 0) return from_map(*m);
    if (const auto* list = v->as<AttrValue::MapList>(); list != nullptr && attached >= 0 &&
                                                         static_cast<size_t>(attached) < list->size()) {
      return from_map((*list)[attached]);
    }
  }
  return {};
}

bool IsDataOrConst(const Node& node) {
  static const std::set<std::string, std::less<>> kTypes = {
      "Data", "RefData", "AippData", "Const", "Constant", "ConstPlaceHolder", "FileConstant", "Variable", "VariableV2"};
  return kTypes.count(node.type) > 0;
}

bool IsSyncNode(const Node& node) {
  return node.type == "Send" || node.type == "Recv" || node.type == "SendNotify" || node.type == "RecvNotify";
}

}  // namespace npuplan
