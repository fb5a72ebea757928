#include "npuplan/partition/cluster_merge.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

// The Stack ops of GE's data-flow re-clustering (ForceSplitDataFlowGroups).
bool IsDataFlowOp(std::string_view t) {
  return t == "Stack" || t == "StackPush" || t == "StackPop" || t == "StackClose";
}

// Clusters and merges one graph (see the header).
class ClusterMerger {
 public:
  ClusterMerger(Model& model, GraphId graph, const MarkResult& marks,
                const PartitionOptions& options, DecisionLog* log, PassCounters& counts)
      : model_(model),
        graph_(graph),
        marks_(marks),
        options_(options),
        log_(log),
        counts_(counts),
        logging_(log != nullptr && log->enabled()) {}

  absl::StatusOr<GraphClusters> Run();

 private:
  absl::Status InitClusters();
  absl::Status MergeControlFlowGroups();
  void MergeNormal();
  void MergeKnownFirst();
  void MergeStable();
  void MergeUnknownPaths(const ClusterList& order);
  void TryMergeInputs(const ClusterList& order, ClusterType type, std::string_view counter);
  void MergeInputNodes();
  void DemoteSmallClusters();
  void Demote(int32_t c);  // KNOWN → UNKNOWN (small cluster), counted and logged
  bool MergeRefVariable(int32_t c);
  absl::StatusOr<bool> ForceSplitDataFlowGroups();

  // Sets the reason of every node that turns unknown by the next merges.
  auto Relabel(MarkReason r) {
    return [this, r](int32_t v) { reason_[v] = r; };
  }
  // c's input clusters by (rank, first node), into `in` (reused buffer).
  void SortedInputs(int32_t c, std::vector<int32_t>& in) {
    auto span = cg_->Ins(c);
    in.assign(span.begin(), span.end());
    std::sort(in.begin(), in.end(), [&](int32_t a, int32_t b) {
      return cg_->max(a) != cg_->max(b) ? cg_->max(a) < cg_->max(b) : cg_->first(a) < cg_->first(b);
    });
  }
  const Node& LocalNode(int32_t v) const { return model_.node(nodes_[v]); }
  void Count(std::string_view counter, int64_t d = 1) { counts_.Count(counter, d); }

  Model& model_;
  GraphId graph_;
  const MarkResult& marks_;
  const PartitionOptions& options_;
  DecisionLog* log_;
  PassCounters& counts_;
  bool logging_;

  // The result's parts (GraphClusters), moved out by Run.
  std::vector<NodeId> nodes_;
  BigVector<int32_t> local_;
  std::vector<MarkReason> reason_;
  std::optional<ClusterGraph> cg_;
  bool name_clash_ = false;  // set by InitClusters (the frame builder's NamesAreFresh)

  std::vector<uint8_t> data_flow_forced_;  // local index → forced unknown by the data-flow rule
  // local index → a Variable/VariableV2 with ref_var_src_var_name (the
  // ref-variable rule's candidates; set by InitClusters, so the merge loops
  // do not read every node again).
  std::vector<uint8_t> ref_variable_;
  // Local indices, ascending (set by InitClusters): nodes with a
  // `_control_flow_group` attribute; Stack / StackPush / StackPop /
  // StackClose nodes.
  std::vector<int32_t> control_flow_nodes_, data_flow_nodes_;
};

absl::StatusOr<GraphClusters> ClusterMerger::Run() {
  // One clustering round, again after each data-flow re-marking (each round
  // forces at least one more node, so this ends).
  for (;;) {
    NPUPLAN_RETURN_IF_ERROR(InitClusters());
    NPUPLAN_RETURN_IF_ERROR(MergeControlFlowGroups());
    if (options_.stable_topo) {
      MergeStable();  // node order; stays unbounded after control-flow merges
    } else if (options_.merge_known_first) {
      MergeKnownFirst();
    } else {
      MergeNormal();
    }
    NPUPLAN_ASSIGN_OR_RETURN(bool again, ForceSplitDataFlowGroups());
    if (!again) break;
    Count("data_flow_rounds");
    // The superseded round's merge counters are dropped; its log lines stay
    // (followed by DataFlowForcedUnknown and the final round's lines).
    counts_.KeepOnly("data_flow_");
  }
  return GraphClusters{std::move(nodes_), std::move(local_), std::move(reason_), std::move(cg_),
                       name_clash_};
}

absl::Status ClusterMerger::InitClusters() {
  const Graph& g = model_.graph(graph_);
  nodes_ = g.nodes;
  const int32_t n = static_cast<int32_t>(nodes_.size());
  local_.assign(model_.num_nodes(), -1);
  for (int32_t i = 0; i < n; ++i) local_[nodes_[i].index()] = i;
  std::vector<ClusterType> types(n);
  const std::string sub_prefix = StrCat(g.name, "_sub_");
  name_clash_ = false;
  control_flow_nodes_.clear();
  data_flow_nodes_.clear();
  reason_.resize(n);
  ref_variable_.assign(n, 0);
  // Data-flow re-marking (ForceSplitDataFlowGroups): forced nodes and, as
  // marking does for unknown nodes, their Const data inputs.
  std::vector<MarkReason> forced;
  if (!data_flow_forced_.empty()) {
    forced.assign(n, MarkReason::kKnown);
    for (int32_t i = 0; i < n; ++i) {
      if (!data_flow_forced_[i]) continue;
      forced[i] = MarkReason::kDataFlowHandle;
      for (const OutputRef& in : LocalNode(i).inputs) {
        const int32_t lp = local_[in.node.index()];
        if (lp >= 0 && IsConstType(LocalNode(lp).type) && forced[lp] == MarkReason::kKnown) {
          forced[lp] = MarkReason::kConstInput;
        }
      }
    }
  }
  BigVector<uint32_t> offs(n + 1, 0);
  BigVector<int32_t> preds;
  preds.reserve(n * 2);
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = model_.node(nodes_[i]);
    reason_[i] = marks_.reason[nodes_[i].index()];
    if (!forced.empty() && reason_[i] == MarkReason::kKnown) reason_[i] = forced[i];
    if (IsDataType(node.type) && node.inputs.empty()) {
      types[i] = ClusterType::kData;
    } else if (IsConstType(node.type) && node.inputs.empty() && node.control_inputs.empty()) {
      types[i] = ClusterType::kInputNode;
    } else if (node.type == "NetOutput") {
      types[i] = ClusterType::kNetOutput;
    } else if (node.type == "PartitionedCall" && HasAttr(node.attrs, "_stage_level")) {
      types[i] = ClusterType::kStage;
    } else if (reason_[i] != MarkReason::kKnown) {
      types[i] = ClusterType::kUnknown;
    } else {
      types[i] = ClusterType::kKnown;
    }
    // NamesAreFresh's test, while the node is read anyway (the name shares
    // the type's cache line).
    name_clash_ |= node.name.starts_with("PartitionedCall_") || node.name.starts_with(sub_prefix);
    ref_variable_[i] = (node.type == "Variable" || node.type == "VariableV2") &&
                       HasAttr(node.attrs, "ref_var_src_var_name");
    // The candidates of the control-flow group and data-flow rules, listed
    // here so that those rules do not read every node again.
    if (!node.attrs.empty() && HasAttr(node.attrs, "_control_flow_group"))
      control_flow_nodes_.push_back(i);
    if (IsDataFlowOp(node.type)) data_flow_nodes_.push_back(i);
    auto add = [&](NodeId p) -> absl::Status {
      int32_t lp = local_[p.index()];
      NPUPLAN_RET_CHECK(lp >= 0 && lp < i)
          << "node '" << node.name << "' has a producer out of topological order";
      preds.push_back(lp);
      return absl::OkStatus();
    };
    for (const OutputRef& in : node.inputs) NPUPLAN_RETURN_IF_ERROR(add(in.node));
    for (NodeId c : node.control_inputs) NPUPLAN_RETURN_IF_ERROR(add(c));
    offs[i + 1] = static_cast<uint32_t>(preds.size());
  }
  cg_.emplace(std::move(types), std::move(offs), std::move(preds));
  return absl::OkStatus();
}

// Members of one `_control_flow_group` end up in one cluster together with
// every cluster on a path between them (GE MergeClustersControlFlow: the
// last member merges all paths from each earlier one).
absl::Status ClusterMerger::MergeControlFlowGroups() {
  std::map<int64_t, std::vector<int32_t>> groups;
  for (int32_t i : control_flow_nodes_) {
    const Node& node = LocalNode(i);
    const AttrValue* v = FindAttr(node.attrs, "_control_flow_group");
    if (v == nullptr) continue;
    const int64_t* gi = v->as<int64_t>();
    if (gi == nullptr) {
      return Bad(StrCat("node '", node.name,
                        "': attribute _control_flow_group must be an int, got ", v->TypeName()));
    }
    groups[*gi].push_back(i);
  }
  // Groups merge out of rank order: searches run unbounded (see ClusterGraph::set_bounded).
  cg_->set_bounded(groups.empty());
  for (const auto& [group, members] : groups) {
    Count("control_flow_groups");
    const int32_t last = members.back();
    for (auto it = members.rbegin() + 1; it != members.rend(); ++it) {
      int32_t into = cg_->Find(last);
      int32_t from = cg_->Find(*it);
      if (into == from) continue;
      for (int32_t member : {*it, last}) {
        ClusterType t = cg_->type(cg_->Find(member));
        if (t != ClusterType::kKnown && t != ClusterType::kUnknown) {
          return Bad(StrCat("_control_flow_group ", group, ": node '", LocalNode(member).name,
                            "' is a ", ClusterTypeName(t), " node and cannot be grouped"));
        }
      }
      if (cg_->Reaches(into, from)) {
        return Bad(StrCat("_control_flow_group ", group, ": nodes '", LocalNode(*it).name,
                          "' and '", LocalNode(last).name,
                          "' cannot be merged without a cycle (after earlier merges, '",
                          LocalNode(last).name, "' reaches '", LocalNode(*it).name, "')"));
      }
      std::vector<int32_t> path = cg_->PathClusters(into, from);
      for (int32_t c : path) {
        if (cg_->type(c) != ClusterType::kKnown && cg_->type(c) != ClusterType::kUnknown) {
          return Bad(StrCat("_control_flow_group ", group, ": merging '", LocalNode(*it).name,
                            "' and '", LocalNode(last).name, "' would absorb the ",
                            ClusterTypeName(cg_->type(c)), " node '", LocalNode(cg_->first(c)).name,
                            "' on a path between them"));
        }
      }
      for (int32_t c : path) cg_->Merge(into, c, Relabel(MarkReason::kControlFlowGroup));
    }
    if (logging_) {
      log_->Record(kPass, "ControlFlowGroupMerged", "", Field("group", group),
                   Field("members", members.size()), Field("nodes", cg_->size(cg_->Find(last))));
    }
  }
  return absl::OkStatus();
}

// GE MergeClustersUnknownShape: every UNKNOWN cluster absorbs the clusters on
// paths from each of its UNKNOWN inputs (path absorption).
void ClusterMerger::MergeUnknownPaths(const ClusterList& order) {
  std::vector<int32_t> inputs;
  for (int32_t c : order) {
    if (!cg_->IsLive(c) || cg_->type(c) != ClusterType::kUnknown) continue;
    SortedInputs(c, inputs);
    for (int32_t in : inputs) {
      in = cg_->Find(in);
      if (in == c || cg_->type(in) != ClusterType::kUnknown) continue;
      std::vector<int32_t> path = cg_->PathClusters(c, in);
      int32_t blocker = -1;
      for (int32_t p : path) {
        if (cg_->type(p) != ClusterType::kKnown && cg_->type(p) != ClusterType::kUnknown)
          blocker = p;
      }
      if (blocker >= 0) {
        // A DATA / STAGE / … cluster cannot join: merging the rest would make a cycle.
        Count("path_merges_refused");
        if (logging_) {
          log_->Record(kPass, "PathMergeRefused", "", Field("into", LocalNode(cg_->first(c)).name),
                       Field("from", LocalNode(cg_->first(in)).name),
                       Field("blocker", LocalNode(cg_->first(blocker)).name));
        }
        continue;
      }
      int64_t absorbed_nodes = 0;
      for (int32_t p : path) {
        if (cg_->type(p) == ClusterType::kKnown) absorbed_nodes += cg_->size(p);
      }
      if (logging_ && path.size() > 1) {
        log_->Record(kPass, "PathAbsorbed", "", Field("into", LocalNode(cg_->first(c)).name),
                     Field("from", LocalNode(cg_->first(in)).name),
                     Field("clusters", path.size() - 1), Field("known_nodes", absorbed_nodes));
      }
      Count("path_absorbed_nodes", absorbed_nodes);
      for (int32_t p : path) cg_->Merge(c, p, Relabel(MarkReason::kPathAbsorption));
    }
  }
}

// GE's ref-variable rule: a lone Variable with ref_var_src_var_name and one
// input cluster joins that cluster.
bool ClusterMerger::MergeRefVariable(int32_t c) {
  if (cg_->size(c) != 1 || !ref_variable_[c]) return false;
  auto ins = cg_->Ins(c);
  if (ins.size() != 1) return false;
  int32_t in = ins[0];
  if (cg_->type(in) != ClusterType::kKnown && cg_->type(in) != ClusterType::kUnknown) return false;
  cg_->Merge(in, c, Relabel(MarkReason::kRefVariable));
  Count("ref_variable_merges");
  return true;
}

// GE MergeClustersKnownShape / the final unknown pass: TryMerge each input
// of the same type, inputs in rank order.
void ClusterMerger::TryMergeInputs(const ClusterList& order, ClusterType type,
                                   std::string_view counter) {
  int64_t merged = 0,
          refused = 0;  // counted here, handed to Count once (an entry only when > 0, as before)
  std::vector<int32_t> inputs;
  for (int32_t c : order) {
    if (!cg_->IsLive(c) || cg_->type(c) != type) continue;
    if (type == ClusterType::kKnown && MergeRefVariable(c)) continue;
    SortedInputs(c, inputs);
    for (int32_t in : inputs) {
      in = cg_->Find(in);
      if (in == c || cg_->type(in) != type) continue;
      ++(cg_->TryMerge(c, in, [](int32_t) {}) ? merged : refused);
    }
  }
  if (merged > 0) Count(StrCat(counter, "_merges"), merged);
  if (refused > 0) Count(StrCat(counter, "_merges_refused"), refused);
}

// All INPUT_NODE clusters (input-less Consts) join the first one.
void ClusterMerger::MergeInputNodes() {
  int32_t first = -1;
  for (int32_t c : cg_->LiveClusters()) {
    if (cg_->type(c) != ClusterType::kInputNode) continue;
    if (first < 0) {
      first = c;
    } else {
      cg_->Merge(first, c);
    }
  }
}

// P1g: KNOWN clusters with fewer nodes than the limit become UNKNOWN.
void ClusterMerger::DemoteSmallClusters() {
  const int64_t limit = options_.lower_limit;
  for (int32_t c : cg_->LiveClusters()) {
    if (cg_->type(c) == ClusterType::kKnown && cg_->size(c) < limit) Demote(c);
  }
}

void ClusterMerger::Demote(int32_t c) {
  cg_->set_type(c, ClusterType::kUnknown);
  cg_->ForEachNode(c, Relabel(MarkReason::kSmallCluster));
  Count("demoted_clusters");
  Count("demoted_nodes", cg_->size(c));
  if (logging_) {
    log_->Record(kPass, "ClusterDemoted", "", Field("cluster", LocalNode(cg_->first(c)).name),
                 Field("nodes", cg_->size(c)), Field("limit", options_.lower_limit));
  }
}

void ClusterMerger::MergeNormal() {
  cg_->set_bounded(true);  // ranks are reset by the sort
  MergeUnknownPaths(cg_->TopoSort());
  TryMergeInputs(cg_->TopoSort(), ClusterType::kKnown, "known");
  MergeInputNodes();
  DemoteSmallClusters();
  TryMergeInputs(cg_->TopoSort(), ClusterType::kUnknown, "unknown");
}

void ClusterMerger::MergeKnownFirst() {
  cg_->set_bounded(true);  // ranks are reset by the sort
  TryMergeInputs(cg_->TopoSort(), ClusterType::kKnown, "known");
  DemoteSmallClusters();
  MergeInputNodes();
  TryMergeInputs(cg_->TopoSort(), ClusterType::kUnknown, "unknown");
}

// ge.topoSortingMode=3 (GE MergeClustersWithConsistantId, our reading): walk
// KNOWN/UNKNOWN clusters in node order and merge runs of equal type; a KNOWN
// run below the limit turns UNKNOWN and joins the UNKNOWN run before it (the
// next UNKNOWN run then joins it). Every merge is checked for a second path.
void ClusterMerger::MergeStable() {
  // Without control-flow merges every cluster met so far holds only nodes up
  // to the current one and later singletons cannot lead back: searches stay
  // within clusters whose first node is <= the current node. The rank-window
  // bound does not hold here (no re-sort), so it is off.
  const bool grouped = !cg_->bounded();
  cg_->set_bounded(false);
  int32_t current = 0;
  std::vector<int32_t> runs;
  auto can_merge = [&](int32_t a, int32_t b) {
    const int32_t within = grouped ? INT32_MAX : current;
    return !cg_->ReachesIndirectly(a, b, within) && !cg_->ReachesIndirectly(b, a, within);
  };
  auto finish = [&]() {
    int32_t r = runs.back();
    if (cg_->type(r) == ClusterType::kKnown && cg_->size(r) < options_.lower_limit) {
      Demote(r);
      if (runs.size() >= 2) {
        int32_t prev = runs[runs.size() - 2];
        if (cg_->type(prev) == ClusterType::kUnknown && can_merge(prev, r)) {
          cg_->Merge(prev, r);
          runs.pop_back();
        }
      }
    }
  };
  for (int32_t v = 0; v < static_cast<int32_t>(nodes_.size()); ++v) {
    current = v;
    int32_t c = cg_->Find(v);
    if (cg_->first(c) != v) continue;  // visit each cluster once, at its first node
    ClusterType t = cg_->type(c);
    if (t != ClusterType::kKnown && t != ClusterType::kUnknown) continue;
    if (!runs.empty() && cg_->type(runs.back()) == t && can_merge(runs.back(), c)) {
      cg_->Merge(runs.back(), c);
      Count(t == ClusterType::kKnown ? "known_merges" : "unknown_merges");
      continue;
    }
    if (!runs.empty()) finish();
    if (!runs.empty() && cg_->type(runs.back()) == t && can_merge(runs.back(), c)) {
      cg_->Merge(runs.back(), c);  // a demoted run joined the UNKNOWN run before it
      continue;
    }
    runs.push_back(c);
  }
  if (!runs.empty()) finish();
  for (int32_t c : cg_->LiveClusters()) {
    if (cg_->IsLive(c) && cg_->type(c) == ClusterType::kKnown) MergeRefVariable(c);
  }
  MergeInputNodes();
}

// GE DynamicDataFlowPartitionerPass (our reading): the Stack ops sharing one
// `_data_flow_handle` must all run in the same kind of cluster. When a group
// is split between UNKNOWN and other clusters, every member is forced
// unknown (GE writes `_force_unknown_shape`) and the clustering is redone;
// repeated until no group is split. Returns true when something was forced.
absl::StatusOr<bool> ClusterMerger::ForceSplitDataFlowGroups() {
  std::map<int64_t, std::vector<int32_t>> groups;
  for (int32_t i : data_flow_nodes_) {
    const Node& node = LocalNode(i);
    const AttrValue* v = FindAttr(node.attrs, "_data_flow_handle");
    if (v == nullptr) continue;
    const int64_t* h = v->as<int64_t>();
    if (h == nullptr) {
      return Bad(StrCat("node '", node.name, "': attribute _data_flow_handle must be an int, got ",
                        v->TypeName()));
    }
    groups[*h].push_back(i);
  }
  bool changed = false;
  for (const auto& [handle, members] : groups) {
    if (members.size() < 2) continue;
    auto unknown = [&](int32_t v) { return cg_->type(cg_->Find(v)) == ClusterType::kUnknown; };
    const bool first = unknown(members[0]);
    bool split = false;
    for (int32_t v : members) split |= unknown(v) != first;
    if (!split) continue;
    data_flow_forced_.resize(nodes_.size(), 0);
    for (int32_t v : members) {
      if (data_flow_forced_[v]) continue;
      data_flow_forced_[v] = 1;
      changed = true;
      Node& node = model_.node(nodes_[v]);
      node.attrs["_force_unknown_shape"] = true;
      Count("data_flow_forced_nodes");
      if (logging_) {
        log_->Record(kPass, "DataFlowForcedUnknown", "", Field("node", node.name),
                     Field("handle", handle));
      }
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<GraphClusters> MergeClusters(Model& model, GraphId graph, const MarkResult& marks,
                                            const PartitionOptions& options, DecisionLog* log,
                                            PassCounters& counts) {
  return ClusterMerger(model, graph, marks, options, log, counts).Run();
}

}  // namespace partition
}  // namespace npuplan
