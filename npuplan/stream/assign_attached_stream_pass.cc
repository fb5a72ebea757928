#include "npuplan/stream/assign_attached_stream_pass.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "npuplan/ir/node_prefetch.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace stream {
namespace {

constexpr char kInfo[] = "_attached_stream_info";
constexpr char kInfoList[] = "_attached_stream_info_list";
constexpr char kDisable[] = "_disable_attached_resource";
constexpr char kDefaultGroup[] = "_default_stream_info_group";
// GE's names inside the entries (ge_attr_define.cc); npuplan's older short
// names are read as aliases when GE's name is absent.
constexpr char kPolicy[] = "_attached_stream_policy";  // alias "policy"
constexpr char kStreamKey[] = "_attached_stream_key";
constexpr char kResName[] = "_attached_resource_name";                  // alias "name"
constexpr char kResReuseKey[] = "_attached_resource_reuse_key";         // alias "reuse_key"
constexpr char kResForceReuse[] = "_attached_resource_force_reuse";     // alias "force_reuse"
constexpr char kResRequired[] = "_attached_resource_required_flag";     // alias "required"
constexpr char kResId[] = "_attached_resource_id";
constexpr char kResIsValid[] = "_attached_resource_is_valid";

struct Request {
  std::string group;
  std::string key;
  int32_t entry = -1;  // index in `_attached_stream_info_list` (V2), else -1
};

const AttrValue* FindEither(const AttrMap& m, std::string_view ge_name, std::string_view alias) {
  const AttrValue* v = FindAttr(m, ge_name);
  return v != nullptr ? v : FindAttr(m, alias);
}
std::string MapString(const AttrMap& m, std::string_view ge_name, std::string_view alias) {
  const AttrValue* v = FindEither(m, ge_name, alias);
  const std::string* s = v != nullptr ? v->as<std::string>() : nullptr;
  return s != nullptr ? *s : "";
}
std::optional<bool> MapBool(const AttrMap& m, std::string_view ge_name, std::string_view alias) {
  const AttrValue* v = FindEither(m, ge_name, alias);
  const bool* b = v != nullptr ? v->as<bool>() : nullptr;
  return b != nullptr ? std::optional<bool>(*b) : std::nullopt;
}

absl::Status Bad(const Node& n, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("[", AssignAttachedStreamPass::kName, "] node '", n.name, "': ", what));
}

// The attached-stream requests of one node (at most one).
absl::StatusOr<std::vector<Request>> ParseRequests(const Node& n) {
  std::vector<Request> out;
  const std::string main = StrCat("_stream_", n.stream_id);
  if (const AttrValue* v2 = FindAttr(n.attrs, kInfoList)) {
    const auto* list = v2->as<AttrValue::MapList>();
    if (list == nullptr) return Bad(n, StrCat(kInfoList, " must be a list of maps"));
    for (size_t i = 0; i < list->size(); ++i) {
      const AttrMap& e = (*list)[i];
      const bool ge_names = HasAttr(e, kResName);
      std::string name = MapString(e, kResName, "name");
      if (name.empty()) return Bad(n, StrCat(kInfoList, "[", i, "]: '", kResName, "' is required"));
      // GE's required flag defaults to false; the npuplan alias spelling
      // (`name`, ...) keeps its documented default true.
      if (!MapBool(e, kResRequired, "required").value_or(!ge_names)) continue;
      const bool force = MapBool(e, kResForceReuse, "force_reuse").value_or(false);
      out.push_back({kDefaultGroup, StrCat(MapString(e, kResReuseKey, "reuse_key"), name, force ? "" : main),
                     static_cast<int32_t>(i)});
    }
  } else if (const AttrValue* v1 = FindAttr(n.attrs, kInfo)) {
    if (const auto* m = v1->as<AttrMap>()) {
      const std::string policy = MapString(*m, kPolicy, "policy");
      if (policy != "group") {
        return Bad(n, StrCat(kInfo, ": ", kPolicy, " must be \"group\", got \"", policy, "\""));
      }
      out.push_back({GetStringAttr(n.attrs, "group").value_or(""), MapString(*m, kStreamKey, kStreamKey)});
    } else if (const auto* list = v1->as<AttrValue::MapList>()) {
      for (const AttrMap& e : *list) out.push_back({kDefaultGroup, StrCat(MapString(e, kStreamKey, kStreamKey), main)});
    } else {
      return Bad(n, StrCat(kInfo, " must be a map or a list of maps"));
    }
  }
  if (out.size() > 1) {
    return Bad(n, StrCat("requests ", out.size(), " attached streams; a node has at most one attached stream (SPEC S7)"));
  }
  return out;
}

// GE's SetAttachedStreamV2: the allocated id and is_valid go back into the
// V2 entry that asked for it.
void WriteBack(Node& n, int32_t entry, int64_t stream) {
  AttrValue* v = nullptr;
  if (auto it = n.attrs.find(kInfoList); it != n.attrs.end()) v = &it->second;
  auto* list = v != nullptr ? std::get_if<AttrValue::MapList>(&v->get()) : nullptr;
  if (list == nullptr || entry < 0 || static_cast<size_t>(entry) >= list->size()) return;
  (*list)[entry].insert_or_assign(kResId, AttrValue(int64_t{stream}));
  (*list)[entry].insert_or_assign(kResIsValid, AttrValue(true));
}

}  // namespace

}  // namespace stream

absl::StatusOr<bool> AssignAttachedStreamPass::Run(Plan& plan, PassContext& ctx) {
  using namespace stream;  // NOLINT
  Model& m = plan.model;
  // Both walks read a line or two of each node's struct, cache misses that
  // are fetched ahead; a list already empty is not written (its line stays
  // clean).
  const size_t count = m.num_nodes();
  for (size_t i = 0; i < count; ++i) {
    if (i + kNodePrefetch < count)
      __builtin_prefetch(
          &m.node(NodeId(static_cast<int32_t>(i + kNodePrefetch))).attached_stream_ids);
    std::vector<int64_t>& ids = m.node(NodeId(static_cast<int32_t>(i))).attached_stream_ids;
    if (!ids.empty()) ids.clear();
  }
  int64_t next = plan.streams.logical;
  std::vector<NodeId> attached_nodes;  // the only nodes with attached ids after the walks
  for (GraphId g : m.GraphsPreOrder()) {
    std::vector<std::string> group_order;
    std::map<std::string, std::map<std::string, std::vector<std::pair<NodeId, int32_t>>>> groups;
    const std::vector<NodeId>& graph_nodes = m.graph(g).nodes;
    for (size_t k = 0; k < graph_nodes.size(); ++k) {
      if (k + kNodePrefetch < graph_nodes.size())
        __builtin_prefetch(&m.node(graph_nodes[k + kNodePrefetch]).attrs);
      const NodeId id = graph_nodes[k];
      const Node& n = m.node(id);
      if (n.attrs.empty()) continue;
      if (!HasAttr(n.attrs, "_attached_stream_info") && !HasAttr(n.attrs, "_attached_stream_info_list")) continue;
      if (HasAttr(n.attrs, kDisable)) {  // GE tests presence, not the value
        ctx.log.Record(kName, "AttachedResourceDisabled", "", Field("node", n.name));
        continue;
      }
      NPUPLAN_ASSIGN_OR_RETURN(std::vector<Request> reqs, ParseRequests(n));
      for (const Request& r : reqs) {
        if (!groups.count(r.group)) group_order.push_back(r.group);
        groups[r.group][r.key].emplace_back(id, r.entry);
      }
    }
    for (const std::string& group : group_order) {
      for (const auto& [key, nodes] : groups[group]) {
        const int64_t s = next++;
        for (const auto& [id, entry] : nodes) {
          m.node(id).attached_stream_ids.push_back(s);
          attached_nodes.push_back(id);
          WriteBack(m.node(id), entry, s);
          ctx.log.Record(kName, "AttachedStream", "", Field("node", m.node(id).name), Field("group", group),
                         Field("key", key), Field("stream", s));
        }
      }
    }
  }
  StreamResult& sr = plan.streams;
  sr.attached.clear();
  for (int64_t s = sr.logical; s < next; ++s) sr.attached.push_back(s);
  std::vector<std::set<int64_t>> per_main(sr.streams.size());
  for (NodeId id : attached_nodes) {
    const Node& n = m.node(id);
    if (n.stream_id < 0 || n.stream_id >= static_cast<int64_t>(per_main.size())) continue;
    per_main[n.stream_id].insert(n.attached_stream_ids.begin(), n.attached_stream_ids.end());
  }
  for (size_t i = 0; i < sr.streams.size(); ++i) {
    sr.streams[i].attached_ids.assign(per_main[i].begin(), per_main[i].end());
  }
  ctx.stats.Set(kName, "attached_streams", static_cast<int64_t>(sr.attached.size()));
  return !sr.attached.empty();
}

}  // namespace npuplan
