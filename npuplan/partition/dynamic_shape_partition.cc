// The dynamic-shape partition pass has four stages:
//   1. whole-graph decisions (PartitionModel, GE's Partition() order);
//   2. InitClusters: one cluster per root node, typed, with edges;
//   3. MergeClusters: control-flow groups, then the normal / merge-known-first
//      / stable-topo strategy (each merge goes through a cycle-safe primitive
//      of ClusterGraph);
//   4. BuildFrames: PartitionedCall + subgraph per KNOWN / UNKNOWN / INPUT_NODE
//      cluster, edges rewired, `_is_unknown_shape` written and logged, graphs
//      re-sorted.
#include "npuplan/partition/dynamic_shape_partition.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "npuplan/partition/cluster_graph.h"
#include "npuplan/partition/unknown_shape_graphs.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

constexpr std::string_view kPass = DynamicShapePartition::kName;

bool IsDataType(std::string_view t) { return t == "Data" || t == "RefData" || t == "AippData"; }
bool IsConstType(std::string_view t) { return t == "Const" || t == "Constant"; }
// The Stack ops of GE's data-flow re-clustering (ForceSplitDataFlowGroups).
bool IsDataFlowOp(std::string_view t) {
  return t == "Stack" || t == "StackPush" || t == "StackPop" || t == "StackClose";
}
bool IsSpecialType(std::string_view t) {
  static constexpr std::string_view kTypes[] = {
      "PartitionedCall", "StatefulPartitionedCall", "Case", "If", "StatelessIf", "While", "StatelessWhile",
      "StreamActive", "StreamSwitch", "StreamMerge", "Enter", "RefEnter", "NextIteration", "RefNextIteration"};
  return std::find(std::begin(kTypes), std::end(kTypes), t) != std::end(kTypes);
}

bool ParseInt64(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

absl::Status Bad(std::string_view what) { return absl::InvalidArgumentError(StrCat("[", kPass, "] ", what)); }

// A root-level bool attribute, false when absent; an error when not a bool.
absl::StatusOr<bool> GraphFlag(const Graph& g, std::string_view key) {
  const AttrValue* v = FindAttr(g.attrs, key);
  if (v == nullptr) return false;
  if (const bool* b = v->as<bool>()) return *b;
  return Bad(StrCat("graph '", g.name, "': attribute ", key, " must be a bool, got ", v->TypeName()));
}

// The partition of one graph: clusters, merges and frames.
class GraphPartitioner {
 public:
  GraphPartitioner(Model& model, GraphId graph, const MarkResult& marks, const PartitionOptions& options,
                   DecisionLog* log, Statistics* stats)
      : model_(model), graph_(graph), marks_(marks), options_(options), log_(log), stats_(stats),
        logging_(log != nullptr && log->enabled()) {}

  absl::Status Run(PartitionResult& out);

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
  bool MergeRefVariable(int32_t c);
  absl::Status BuildFrames(PartitionResult& out);
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
  // Counters are summed locally (no string building per merge) and handed to
  // `stats_` once, by FlushCounts.
  void Count(std::string_view counter, int64_t d = 1) {
    if (!stats_) return;
    auto it = counts_.find(counter);
    if (it == counts_.end()) it = counts_.emplace(std::string(counter), 0).first;
    it->second += d;
  }
  void FlushCounts() {
    if (stats_) {
      for (const auto& [name, v] : counts_) stats_->Add(kPass, name, v);
    }
    counts_.clear();
  }

  Model& model_;
  GraphId graph_;
  const MarkResult& marks_;
  const PartitionOptions& options_;
  DecisionLog* log_;
  Statistics* stats_;
  bool logging_;

  std::vector<NodeId> nodes_;         // local index → node (topological order)
  BigVector<int32_t> local_;          // NodeId index → local index (-1 = other graph)
  std::vector<MarkReason> reason_;    // local index → why unknown
  std::optional<ClusterGraph> cg_;
  std::map<std::string, int64_t, std::less<>> counts_;
  std::vector<uint8_t> data_flow_forced_;  // local index → forced unknown by the data-flow rule
  // local index → a Variable/VariableV2 with ref_var_src_var_name (the
  // ref-variable rule's candidates; set by InitClusters, so the merge loops
  // do not read every node again).
  std::vector<uint8_t> ref_variable_;
  // Local indices, ascending (set by InitClusters): nodes with a
  // `_control_flow_group` attribute; Stack / StackPush / StackPop /
  // StackClose nodes.
  std::vector<int32_t> control_flow_nodes_, data_flow_nodes_;
  // Some node of the graph has a name starting with `PartitionedCall_` or
  // `<graph>_sub_` (set by InitClusters; see NamesAreFresh).
  bool name_clash_ = false;
};

absl::Status GraphPartitioner::InitClusters() {
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
    ref_variable_[i] =
        (node.type == "Variable" || node.type == "VariableV2") && HasAttr(node.attrs, "ref_var_src_var_name");
    // The candidates of the control-flow group and data-flow rules, listed
    // here so that those rules do not read every node again.
    if (!node.attrs.empty() && HasAttr(node.attrs, "_control_flow_group")) control_flow_nodes_.push_back(i);
    if (IsDataFlowOp(node.type)) data_flow_nodes_.push_back(i);
    auto add = [&](NodeId p) -> absl::Status {
      int32_t lp = local_[p.index()];
      NPUPLAN_RET_CHECK(lp >= 0 && lp < i) << "node '" << node.name << "' has a producer out of topological order";
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
absl::Status GraphPartitioner::MergeControlFlowGroups() {
  std::map<int64_t, std::vector<int32_t>> groups;
  for (int32_t i : control_flow_nodes_) {
    const Node& node = LocalNode(i);
    const AttrValue* v = FindAttr(node.attrs, "_control_flow_group");
    if (v == nullptr) continue;
    const int64_t* gi = v->as<int64_t>();
    if (gi == nullptr) {
      return Bad(StrCat("node '", node.name, "': attribute _control_flow_group must be an int, got ", v->TypeName()));
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
          return Bad(StrCat("_control_flow_group ", group, ": node '", LocalNode(member).name, "' is a ",
                            ClusterTypeName(t), " node and cannot be grouped"));
        }
      }
      if (cg_->Reaches(into, from)) {
        return Bad(StrCat("_control_flow_group ", group, ": nodes '", LocalNode(*it).name, "' and '",
                          LocalNode(last).name, "' cannot be merged without a cycle (after earlier merges, '",
                          LocalNode(last).name, "' reaches '", LocalNode(*it).name, "')"));
      }
      std::vector<int32_t> path = cg_->PathClusters(into, from);
      for (int32_t c : path) {
        if (cg_->type(c) != ClusterType::kKnown && cg_->type(c) != ClusterType::kUnknown) {
          return Bad(StrCat("_control_flow_group ", group, ": merging '", LocalNode(*it).name, "' and '",
                            LocalNode(last).name, "' would absorb the ", ClusterTypeName(cg_->type(c)), " node '",
                            LocalNode(cg_->first(c)).name, "' on a path between them"));
        }
      }
      for (int32_t c : path) cg_->Merge(into, c, Relabel(MarkReason::kControlFlowGroup));
    }
    if (logging_) {
      log_->Record(kPass, "ControlFlowGroupMerged", "", Field("group", group), Field("members", members.size()),
                   Field("nodes", cg_->size(cg_->Find(last))));
    }
  }
  return absl::OkStatus();
}

// GE MergeClustersUnknownShape: every UNKNOWN cluster absorbs the clusters on
// paths from each of its UNKNOWN inputs (path absorption).
void GraphPartitioner::MergeUnknownPaths(const ClusterList& order) {
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
        if (cg_->type(p) != ClusterType::kKnown && cg_->type(p) != ClusterType::kUnknown) blocker = p;
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
                     Field("from", LocalNode(cg_->first(in)).name), Field("clusters", path.size() - 1),
                     Field("known_nodes", absorbed_nodes));
      }
      Count("path_absorbed_nodes", absorbed_nodes);
      for (int32_t p : path) cg_->Merge(c, p, Relabel(MarkReason::kPathAbsorption));
    }
  }
}

// GE's ref-variable rule: a lone Variable with ref_var_src_var_name and one
// input cluster joins that cluster.
bool GraphPartitioner::MergeRefVariable(int32_t c) {
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
void GraphPartitioner::TryMergeInputs(const ClusterList& order, ClusterType type,
                                      std::string_view counter) {
  int64_t merged = 0, refused = 0;  // counted here, handed to Count once (an entry only when > 0, as before)
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
void GraphPartitioner::MergeInputNodes() {
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
void GraphPartitioner::DemoteSmallClusters() {
  const int64_t limit = options_.lower_limit;
  for (int32_t c : cg_->LiveClusters()) {
    if (cg_->type(c) != ClusterType::kKnown || cg_->size(c) >= limit) continue;
    cg_->set_type(c, ClusterType::kUnknown);
    cg_->ForEachNode(c, Relabel(MarkReason::kSmallCluster));
    Count("demoted_clusters");
    Count("demoted_nodes", cg_->size(c));
    if (logging_) {
      log_->Record(kPass, "ClusterDemoted", "", Field("cluster", LocalNode(cg_->first(c)).name),
                   Field("nodes", cg_->size(c)), Field("limit", limit));
    }
  }
}

void GraphPartitioner::MergeNormal() {
  cg_->set_bounded(true);  // ranks are reset by the sort
  MergeUnknownPaths(cg_->TopoSort());
  TryMergeInputs(cg_->TopoSort(), ClusterType::kKnown, "known");
  MergeInputNodes();
  DemoteSmallClusters();
  TryMergeInputs(cg_->TopoSort(), ClusterType::kUnknown, "unknown");
}

void GraphPartitioner::MergeKnownFirst() {
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
void GraphPartitioner::MergeStable() {
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
      cg_->set_type(r, ClusterType::kUnknown);
      cg_->ForEachNode(r, Relabel(MarkReason::kSmallCluster));
      Count("demoted_clusters");
      Count("demoted_nodes", cg_->size(r));
      if (logging_) {
        log_->Record(kPass, "ClusterDemoted", "", Field("cluster", LocalNode(cg_->first(r)).name),
                     Field("nodes", cg_->size(r)), Field("limit", options_.lower_limit));
      }
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

// A member's data input whose producer lies outside the member's frame.
struct BoundaryInput {
  int32_t consumer;  // local index of the member
  int32_t slot;      // its input index
  OutputRef source;  // the producer anchor (before rewiring)
  NodeId data;       // the frame's Data node standing for it
  int32_t frame;     // the member's frame
};

struct Frame {
  int32_t cluster = -1;
  ClusterType type = ClusterType::kKnown;
  std::vector<NodeId> members;  // topological order
  GraphId sg;
  NodeId call;
  std::vector<OutputRef> exports;  // member anchors consumed outside, in output order
  std::vector<NodeId> call_controls;    // control inputs of the call (deduplicated, member order)
  uint32_t reason_bits = 0;               // distinct MarkReasons of the members (unknown frames)
};

// A name not yet used in the model: base, base_1, base_2 … `fresh` = the
// caller knows no existing name can clash (see NamesAreFresh).
std::string UniqueNodeName(const Model& m, std::string base, bool fresh = false) {
  if (fresh || !m.FindNode(base).valid()) return base;
  for (int i = 1;; ++i) {
    std::string s = StrCat(base, "_", i);
    if (!m.FindNode(s).valid()) return s;
  }
}
std::string UniqueGraphName(const Model& m, const std::string& base) {
  if (!m.FindGraph(base).valid()) return base;
  for (int i = 1;; ++i) {
    std::string s = StrCat(base, "_", i);
    if (!m.FindGraph(s).valid()) return s;
  }
}

// True when no node or graph name starts with one of the prefixes of the
// names BuildFrames makes (`PartitionedCall_`, `<root>_sub_`): the generated
// names are then distinct from every existing one and from each other (the
// frame id is followed by `_know` / `_unknow` / `_input`), so the per-name
// lookups can be skipped. One pass over the names instead of one hash lookup
// per created node.
// `nodes_checked`: the caller has already checked every node's name (see
// GraphPartitioner::InitClusters); only the graph names are left.
bool NamesAreFresh(const Model& m, std::string_view root_name, bool nodes_checked = false) {
  const std::string sub = StrCat(root_name, "_sub_");
  auto clashes = [&](std::string_view name) {
    return name.starts_with("PartitionedCall_") || name.starts_with(sub);
  };
  if (!nodes_checked) {
    for (const Node& node : m.nodes()) {
      if (clashes(node.name)) return false;
    }
  }
  for (const Graph& g : m.graphs()) {
    if (clashes(g.name)) return false;
  }
  return true;
}

absl::Status GraphPartitioner::BuildFrames(PartitionResult& out) {
  const int32_t n = static_cast<int32_t>(nodes_.size());
  // Output anchors of the graph's nodes, numbered densely: anchor_base[v] + k
  // is output k of local node v (replaces hashing (node, index) pairs).
  BigVector<uint32_t> anchor_base(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    anchor_base[i + 1] = anchor_base[i] + static_cast<uint32_t>(LocalNode(i).outputs.size());
  }
  auto anchor = [&](const OutputRef& r) { return anchor_base[local_[r.node.index()]] + static_cast<uint32_t>(r.index); };
  // 1. Frames in cluster order, with unique ids.
  std::vector<Frame> frames;
  BigVector<int32_t> frame_of_cluster(n, -1);
  std::array<int64_t, kNumClusterTypes> counts{};
  const ClusterList live = cg_->LiveClusters();
  size_t num_frames = 0;
  for (int32_t c : live) num_frames += IsMergeable(cg_->type(c)) ? 1 : 0;
  frames.reserve(num_frames);
  for (int32_t c : live) {
    ClusterType t = cg_->type(c);
    ++counts[static_cast<int>(t)];
    if (!IsMergeable(t)) continue;
    frame_of_cluster[c] = static_cast<int32_t>(frames.size());
    Frame f;
    f.cluster = c;
    f.type = t;
    f.members.reserve(cg_->size(c));
    frames.push_back(std::move(f));
  }
  // Members in node order (ascending, as ClusterGraph::Members gives them),
  // bucketed in one sequential pass instead of walking each cluster's linked
  // list and sorting it.
  BigVector<int32_t> frame_of;  // NodeId index → frame
  frame_of.reserve(model_.num_nodes() + frames.size());  // + the calls (resize below)
  frame_of.assign(model_.num_nodes(), -1);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t fi = frame_of_cluster[cg_->Find(i)];
    frame_of[nodes_[i].index()] = fi;
    if (fi >= 0) frames[fi].members.push_back(nodes_[i]);
  }

  const std::string root_name = model_.graph(graph_).name;
  // InitClusters checked the node names when this graph holds every node.
  const bool nodes_checked = static_cast<size_t>(n) == model_.num_nodes();
  const bool fresh = !(nodes_checked && name_clash_) && NamesAreFresh(model_, root_name, nodes_checked);
  // With fresh names (no lookup needed), the created nodes enter the name
  // index in one sorted batch at the end of step 3a (Model::AddNodeDeferred).
  auto add_node = [&](GraphId g, Node&& node) {
    return fresh ? model_.AddNodeDeferred(g, std::move(node)) : model_.AddNode(g, std::move(node));
  };
  const std::string& call_engine = model_.engine_table.EngineForOp("PartitionedCall");
  const std::string& data_engine = model_.engine_table.EngineForOp("Data");
  const std::string& netoutput_engine = model_.engine_table.EngineForOp("NetOutput");
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    Frame& f = frames[fi];
    const bool unknown = f.type == ClusterType::kUnknown;
    const char* suffix = f.type == ClusterType::kKnown ? "_know" : unknown ? "_unknow" : "_input";
    Node call;
    call.name = UniqueNodeName(model_, StrCat("PartitionedCall_", fi), fresh);
    call.type = "PartitionedCall";
    call.engine = call_engine;
    call.attrs["_is_unknown_shape"] = unknown;
    // (The inherited stream labels are added by step 2, which reads the members.)
    f.call = add_node(graph_, std::move(call));
    std::string sg_name = StrCat(root_name, "_sub_", fi, suffix);
    f.sg = model_.AddSubgraph(f.call, fresh ? std::move(sg_name) : UniqueGraphName(model_, sg_name));
    Graph& sg = model_.graph(f.sg);
    sg.attrs["_is_unknown_shape"] = unknown;
    if (unknown) sg.attrs["_memory_discontiguous_allocation"] = true;
  }
  frame_of.resize(model_.num_nodes(), -1);

  // 2. Exports: member anchors read outside their frame (in consumer order).
  BigVector<OutputRef> export_ref(anchor_base[n]);  // anchor → (call, output index); invalid node = none
  auto note_export = [&](const OutputRef& in, int32_t consumer_frame) {
    int32_t pf = frame_of[in.node.index()];
    if (pf < 0 || pf == consumer_frame) return;
    OutputRef& ref = export_ref[anchor(in)];
    if (ref.node.valid()) return;
    Frame& f = frames[pf];
    ref = OutputRef{f.call, static_cast<int32_t>(f.exports.size())};
    f.exports.push_back(in);
  };
  // The same pass (graph order, each node read once) lists each frame's
  // boundary inputs, in member order, and finds the stream labels the calls
  // inherit: a label every non-Const member shares (an input frame has Const
  // members only: no label). Per frame and key: the common value so far
  // (null = none yet), or `conflict` once a member lacks it or differs.
  static constexpr std::string_view kLabelKeys[] = {"_stream_label", "_user_stream_label"};
  struct LabelState {
    const std::string* common = nullptr;
    bool conflict = false;
  };
  std::vector<std::array<LabelState, 2>> labels(frames.size());
  // Boundary inputs of all frames in one array, in node order (then input
  // order); boundary_start counts them per frame (prefix sums below). One
  // growing array on huge pages instead of a small vector per frame.
  // Reserved for one per node (untouched pages of a huge-page allocation
  // cost nothing; growing from empty copied the array again at every doubling).
  BigVector<BoundaryInput> boundary;
  boundary.reserve(n);
  std::vector<uint32_t> boundary_start(frames.size() + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = model_.node(nodes_[i]);
    const int32_t fi = frame_of[nodes_[i].index()];
    if (fi >= 0 && frames[fi].type != ClusterType::kInputNode && !IsConstType(node.type)) {
      for (int k = 0; k < 2; ++k) {
        LabelState& ls = labels[fi][k];
        if (ls.conflict) continue;
        const AttrValue* v = node.attrs.empty() ? nullptr : FindAttr(node.attrs, kLabelKeys[k]);
        const std::string* sv = v == nullptr ? nullptr : v->as<std::string>();
        if (sv == nullptr || (ls.common != nullptr && *ls.common != *sv)) {
          ls.conflict = true;
        } else {
          ls.common = sv;
        }
      }
    }
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const OutputRef& in = node.inputs[k];
      note_export(in, fi);
      if (fi >= 0 && frame_of[in.node.index()] != fi) {
        boundary.push_back(BoundaryInput{i, static_cast<int32_t>(k), in, NodeId(), fi});
        ++boundary_start[fi + 1];
      }
    }
  }
  // Each frame's boundary inputs (indices into `boundary`), contiguous, in
  // member order.
  for (size_t fi = 0; fi < frames.size(); ++fi) boundary_start[fi + 1] += boundary_start[fi];
  BigVector<uint32_t> boundary_of_frame(boundary.size());
  {
    std::vector<uint32_t> cursor(boundary_start.begin(), boundary_start.end() - 1);
    for (size_t j = 0; j < boundary.size(); ++j) boundary_of_frame[cursor[boundary[j].frame]++] = static_cast<uint32_t>(j);
  }
  // Nothing has written member attributes yet: the label pointers are valid.
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    for (int k = 0; k < 2; ++k) {
      const LabelState& ls = labels[fi][k];
      if (!ls.conflict && ls.common != nullptr) model_.node(frames[fi].call).attrs[kLabelKeys[k]] = *ls.common;
    }
  }
  auto outside_ref = [&](const OutputRef& in) {
    return frame_of[in.node.index()] < 0 ? in : export_ref[anchor(in)];
  };
  auto outside_node = [&](NodeId p) { return frame_of[p.index()] < 0 ? p : frames[frame_of[p.index()]].call; };

  // 3. Each frame: Data nodes for outside inputs, control edges to the call,
  //    members moved, NetOutput for the exports.
  BigVector<int32_t> data_frame(anchor_base[n], -1);  // anchor → frame whose Data node stands for it
  BigVector<NodeId> data_of(anchor_base[n]);          // … and that Data node
  // Attributes written on every member / Data node: shared one-entry maps
  // (attribute.h), so a node without attributes gets no allocation.
  const std::array<AttrMap, 2> unknown_attr = {AttrMap::Shared("_is_unknown_shape", false),
                                               AttrMap::Shared("_is_unknown_shape", true)};
  std::vector<AttrMap> parent_index_attr;  // by call input index
  // 3a. Frame by frame (node ids and names as before: each frame's Data
  //     nodes, then its NetOutput): Data nodes for the boundary inputs, from
  //     the lists of step 2 (no member is read here).
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    Frame& f = frames[fi];
    const std::string sg_name = model_.graph(f.sg).name;
    // Room for the final node list (Data nodes ≤ boundary inputs, members,
    // NetOutput): the appends below and the rebuild after them do not reallocate.
    model_.graph(f.sg).nodes.reserve(boundary_start[fi + 1] - boundary_start[fi] + f.members.size() + 1);
    std::vector<OutputRef> call_inputs;
    call_inputs.reserve(boundary_start[fi + 1] - boundary_start[fi]);  // one per distinct boundary source
    // The producers are scattered over the node store: their nodes, output
    // lists and shapes are prefetched a few boundary inputs ahead (three
    // dependent cache misses per Data node otherwise).
    const uint32_t* fb = boundary_of_frame.data() + boundary_start[fi];
    const size_t nb = boundary_start[fi + 1] - boundary_start[fi];
    for (size_t j = 0; j < nb; ++j) {
      if (j + 12 < nb) __builtin_prefetch(&model_.node(boundary[fb[j + 12]].source.node));
      if (j + 6 < nb) {
        const OutputRef& r = boundary[fb[j + 6]].source;
        __builtin_prefetch(model_.node(r.node).outputs.data() + r.index);
      }
      if (j + 3 < nb) {
        const OutputRef& r = boundary[fb[j + 3]].source;
        const TensorDesc& t = model_.node(r.node).outputs[r.index];
        __builtin_prefetch(t.shape.data());
      }
      BoundaryInput& b = boundary[fb[j]];
      const OutputRef in = b.source;
      const uint32_t a = anchor(in);
      if (data_frame[a] != static_cast<int32_t>(fi)) {
        data_frame[a] = static_cast<int32_t>(fi);
        Node data;
        data.name = UniqueNodeName(model_, StrCat(sg_name, "_data_", call_inputs.size()), fresh);
        data.type = "Data";
        data.engine = data_engine;
        data.outputs.push_back(model_.node(in.node).outputs[in.index]);
        const size_t k = call_inputs.size();
        while (parent_index_attr.size() <= k) {
          parent_index_attr.push_back(
              AttrMap::Shared("_parent_node_index", static_cast<int64_t>(parent_index_attr.size())));
        }
        data.attrs = parent_index_attr[k];
        data_of[a] = add_node(f.sg, std::move(data));
        call_inputs.push_back(outside_ref(in));
      }
      b.data = data_of[a];
    }
    Node netout;
    netout.name = UniqueNodeName(model_, StrCat(sg_name, "_netoutput"), fresh);
    netout.type = "NetOutput";
    netout.engine = netoutput_engine;
    std::vector<TensorDesc> call_outputs;
    call_outputs.reserve(f.exports.size());
    // The exporting members are scattered too: prefetched as above.
    const size_t ne = f.exports.size();
    for (size_t j = 0; j < ne; ++j) {
      if (j + 12 < ne) __builtin_prefetch(&model_.node(f.exports[j + 12].node));
      if (j + 6 < ne) __builtin_prefetch(model_.node(f.exports[j + 6].node).outputs.data() + f.exports[j + 6].index);
      if (j + 3 < ne) __builtin_prefetch(model_.node(f.exports[j + 3].node).outputs[f.exports[j + 3].index].shape.data());
      const OutputRef& e = f.exports[j];
      call_outputs.push_back(model_.node(e.node).outputs[e.index]);
    }
    netout.inputs = std::move(f.exports);
    NodeId netout_id = add_node(f.sg, std::move(netout));
    Node& call = model_.node(f.call);
    call.inputs = std::move(call_inputs);
    call.outputs = std::move(call_outputs);
    // The subgraph's list is [Data nodes…, NetOutput] (appended by
    // add_node): the members go before the NetOutput.
    Graph& sg = model_.graph(f.sg);
    sg.nodes.pop_back();
    sg.nodes.insert(sg.nodes.end(), f.members.begin(), f.members.end());
    sg.nodes.push_back(netout_id);
  }
  model_.IndexDeferredNodes();
  // 3b. Members in graph order (each node touched once, in memory order
  //     rather than frame by frame): boundary inputs rewired to the Data
  //     nodes, control edges from outside moved to the call, the member moved
  //     into the subgraph. Per frame, everything is appended in member order,
  //     as a frame-by-frame walk would.
  size_t next_boundary = 0;  // boundary is in node order
  for (int32_t i = 0; i < n; ++i) {
    const int32_t fi = frame_of[nodes_[i].index()];
    if (fi < 0) continue;
    Frame& f = frames[fi];
    Node& mn = model_.node(nodes_[i]);
    for (; next_boundary < boundary.size() && boundary[next_boundary].consumer == i; ++next_boundary) {
      const BoundaryInput& b = boundary[next_boundary];
      mn.inputs[b.slot] = OutputRef{b.data, 0};
    }
    std::vector<NodeId>& ctrl = mn.control_inputs;
    size_t w = 0;
    for (NodeId p : ctrl) {
      if (frame_of[p.index()] == fi) {
        ctrl[w++] = p;
      } else {
        NodeId q = outside_node(p);
        if (std::find(f.call_controls.begin(), f.call_controls.end(), q) == f.call_controls.end()) {
          f.call_controls.push_back(q);
        }
      }
    }
    ctrl.resize(w);
    // Members move into the subgraph (their own subgraphs follow them).
    mn.graph = f.sg;
    if (mn.attrs.empty()) {
      mn.attrs = unknown_attr[f.type == ClusterType::kUnknown];
    } else {
      mn.attrs.insert_or_assign("_is_unknown_shape", f.type == ClusterType::kUnknown);
    }
    for (GraphId owned : mn.subgraphs) model_.graph(owned).parent_graph = f.sg;
    if (f.type == ClusterType::kUnknown) f.reason_bits |= uint32_t{1} << static_cast<int>(reason_[i]);
  }
  for (Frame& f : frames) model_.node(f.call).control_inputs = std::move(f.call_controls);
  // 4. Nodes left in the graph read frame outputs through the calls.
  for (int32_t i = 0; i < n; ++i) {
    if (frame_of[nodes_[i].index()] >= 0) continue;
    Node& node = model_.node(nodes_[i]);
    for (OutputRef& in : node.inputs) in = outside_ref(in);
    std::vector<NodeId> ctrl;
    for (NodeId p : node.control_inputs) {
      NodeId q = outside_node(p);
      if (std::find(ctrl.begin(), ctrl.end(), q) == ctrl.end()) ctrl.push_back(q);
    }
    node.control_inputs = std::move(ctrl);
  }
  // Consumers inside other frames were already rewired to Data nodes, whose
  // call inputs used outside_ref. Frame → frame control edges likewise.
  // 5. New graph order: each call where its cluster's first node was.
  std::vector<NodeId> order;
  std::vector<uint8_t> placed(frames.size(), 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t fi = frame_of[nodes_[i].index()];
    if (fi < 0) {
      order.push_back(nodes_[i]);
    } else if (!placed[fi]) {
      placed[fi] = 1;
      order.push_back(frames[fi].call);
    }
  }
  model_.graph(graph_).nodes = std::move(order);

  // 6. Marks, log lines and the plan's record.
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    Frame& f = frames[fi];
    const bool unknown = f.type == ClusterType::kUnknown;
    PartitionSubgraph rec;
    rec.name = model_.graph(f.sg).name;
    rec.kind = f.type == ClusterType::kKnown ? SubgraphKind::kKnown
               : unknown                     ? SubgraphKind::kUnknown
                                             : SubgraphKind::kInput;
    rec.call_node = model_.node(f.call).name;
    // The distinct member reasons (a bit set over MarkReason, turned into
    // sorted texts below) were collected by step 3b. The members are
    // recorded by id (the frame's list, topological order).
    const uint32_t reason_bits = f.reason_bits;
    rec.nodes = std::move(f.members);
    if (logging_) {
      for (NodeId m : rec.nodes) {
        const Node& mn = model_.node(m);
        MarkReason r = reason_[local_[m.index()]];
        const int before = marks_.IsUnknown(m) ? 1 : 0;
        std::string_view why = unknown ? ReasonText(r) : marks_.no_tiling[m.index()] ? "no-tiling" : f.type == ClusterType::kInputNode ? "input node" : "known";
        log_->Record(kPass, "Mark", StrCat("node[", mn.name, ",", mn.type, "] attr[_is_unknown_shape] to ", unknown ? 1 : 0, "."),
                     Field("reason", why), Field("before", before), Field("after", unknown ? 1 : 0));
      }
      const Node& call = model_.node(f.call);
      log_->Record(kPass, "Mark", StrCat("node[", call.name, ",", call.type, "] attr[_is_unknown_shape] to ", unknown ? 1 : 0, "."),
                   Field("reason", StrCat("partitioned call of ", rec.name)), Field("before", "none"),
                   Field("after", unknown ? 1 : 0));
    }
    std::vector<std::string> reasons;
    for (int r = 0; reason_bits >> r != 0; ++r) {
      if ((reason_bits >> r) & 1) reasons.emplace_back(ReasonText(static_cast<MarkReason>(r)));
    }
    std::sort(reasons.begin(), reasons.end());
    reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
    rec.reasons = std::move(reasons);
    Count(StrCat("subgraphs_", SubgraphKindName(rec.kind)));
    out.subgraphs.push_back(std::move(rec));
  }
  int64_t all = 0;
  for (int t = 0; t < kNumClusterTypes; ++t) {
    std::string name(ClusterTypeName(static_cast<ClusterType>(t)));
    out.cluster_counts[name] += counts[t];
    all += counts[t];
    Count(StrCat("clusters_", name), counts[t]);
  }
  out.cluster_counts["all"] += all;
  if (logging_) {
    log_->Record(kPass, "ClusterSummary", "", Field("all", all), Field("data", counts[0]), Field("input", counts[1]),
                 Field("netoutput", counts[2]), Field("stage", counts[3]), Field("unknown", counts[4]),
                 Field("known", counts[5]));
  }
  Count("bfs_visits", cg_->bfs_visits);
  return absl::OkStatus();
}

absl::Status GraphPartitioner::Run(PartitionResult& out) {
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
    for (auto it = counts_.begin(); it != counts_.end();) {
      it = it->first.starts_with("data_flow_") ? std::next(it) : counts_.erase(it);
    }
  }
  absl::Status built = BuildFrames(out);
  FlushCounts();
  return built;
}

// GE DynamicDataFlowPartitionerPass (our reading): the Stack ops sharing one
// `_data_flow_handle` must all run in the same kind of cluster. When a group
// is split between UNKNOWN and other clusters, every member is forced
// unknown (GE writes `_force_unknown_shape`) and the clustering is redone;
// repeated until no group is split. Returns true when something was forced.
absl::StatusOr<bool> GraphPartitioner::ForceSplitDataFlowGroups() {
  std::map<int64_t, std::vector<int32_t>> groups;
  for (int32_t i : data_flow_nodes_) {
    const Node& node = LocalNode(i);
    const AttrValue* v = FindAttr(node.attrs, "_data_flow_handle");
    if (v == nullptr) continue;
    const int64_t* h = v->as<int64_t>();
    if (h == nullptr) {
      return Bad(StrCat("node '", node.name, "': attribute _data_flow_handle must be an int, got ", v->TypeName()));
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
        log_->Record(kPass, "DataFlowForcedUnknown", "", Field("node", node.name), Field("handle", handle));
      }
    }
  }
  return changed;
}

bool OnlyDataAndNetOutputWithUnknownTensor(const Model& m, const Graph& g) {
  bool unknown_tensor = false;
  for (NodeId id : g.nodes) {
    const Node& n = m.node(id);
    if (!IsDataType(n.type) && n.type != "NetOutput") return false;
    for (const TensorDesc& t : n.outputs) unknown_tensor |= t.IsDynamic();
    for (const OutputRef& in : n.inputs) unknown_tensor |= m.node(in.node).outputs[in.index].IsDynamic();
  }
  return unknown_tensor;
}

void Decide(PartitionResult& out, PartitionDecision decision, std::string reason, DecisionLog* log,
            Statistics* stats) {
  out.ran = true;
  out.decision = decision;
  out.reason = std::move(reason);
  if (stats) stats->Add(kPass, StrCat("decision_", PartitionDecisionName(decision)));
  if (log && log->enabled()) {
    log->Record(kPass, "PartitionDecision", "", Field("decision", PartitionDecisionName(decision)),
                Field("reason", out.reason));
  }
}

// Whole graph dynamic: every graph is flagged, nothing is cut (GE SetRootGraphUnknown).
void MarkWholeGraphDynamic(Model& model) {
  for (GraphId g : model.GraphsPreOrder()) model.graph(g).attrs["_is_unknown_shape"] = true;
  model.root().attrs["_dynamic_shape_partitioned"] = false;
}

// GE GetMultiBatchIndependCompileGraphs: with root attr _enable_dynamic_batch,
// the branches of every root Case with _insert_by_mbatch, in node order.
absl::StatusOr<std::vector<GraphId>> MultiBatchBranches(const Model& model) {
  std::vector<GraphId> branches;
  NPUPLAN_ASSIGN_OR_RETURN(bool enabled, GraphFlag(model.root(), "_enable_dynamic_batch"));
  if (!enabled) return branches;
  for (NodeId id : model.root().nodes) {
    const Node& n = model.node(id);
    if (n.type != "Case") continue;
    const AttrValue* v = FindAttr(n.attrs, "_insert_by_mbatch");
    if (v == nullptr) continue;
    const bool* b = v->as<bool>();
    if (b == nullptr) {
      return Bad(StrCat("node '", n.name, "': attribute _insert_by_mbatch must be a bool, got ", v->TypeName()));
    }
    if (*b) branches.insert(branches.end(), n.subgraphs.begin(), n.subgraphs.end());
  }
  return branches;
}

// GE CtrlEdgeTransfer, run once before a compile graph is cut: in every
// subgraph (not the root), a Const/Constant with incoming control edges loses
// them and each of its consumers (data or control) gets them instead. The
// Const then has no inputs and becomes an input node of its graph's partition.
void TransferConstControlEdges(Model& model, DecisionLog* log, Statistics* stats) {
  const bool logging = log != nullptr && log->enabled();
  int64_t moved = 0;
  std::vector<std::vector<NodeId>> consumers;  // per NodeId; sized at the first graph that needs it
  for (GraphId g : model.GraphsPreOrder()) {
    if (g == kRootGraph) continue;
    const Graph& graph = model.graph(g);
    bool any = false;
    for (NodeId id : graph.nodes) {
      const Node& n = model.node(id);
      any |= IsConstType(n.type) && !n.control_inputs.empty();
    }
    if (!any) continue;
    if (consumers.empty()) consumers.resize(model.num_nodes());
    // Consumers of each Const, in node order, deduplicated.
    for (NodeId id : graph.nodes) {
      const Node& n = model.node(id);
      auto note = [&](NodeId p) {
        if (!IsConstType(model.node(p).type)) return;
        std::vector<NodeId>& c = consumers[p.index()];
        if (c.empty() || c.back() != id) c.push_back(id);
      };
      for (const OutputRef& in : n.inputs) note(in.node);
      for (NodeId p : n.control_inputs) note(p);
    }
    for (NodeId id : graph.nodes) {
      Node& c = model.node(id);
      if (!IsConstType(c.type) || c.control_inputs.empty()) continue;
      std::vector<NodeId> preds = std::move(c.control_inputs);
      model.node(id).control_inputs.clear();
      for (NodeId o : consumers[id.index()]) {
        std::vector<NodeId>& ctrl = model.node(o).control_inputs;
        for (NodeId p : preds) {
          if (p == o || std::find(ctrl.begin(), ctrl.end(), p) != ctrl.end()) continue;
          ctrl.push_back(p);
          ++moved;
          if (logging) {
            log->Record(kPass, "CtrlEdgeTransferred", "", Field("const", model.node(id).name),
                        Field("from", model.node(p).name), Field("to", model.node(o).name));
          }
        }
      }
    }
  }
  if (stats && moved > 0) stats->Add(kPass, "ctrl_edges_transferred", moved);
}

}  // namespace

namespace {

absl::Status SortPartitioned(Model& model, const PartitionOptions& options) {
  absl::Status sorted = TopologicalSort(model, options.topo_mode);
  if (!sorted.ok()) {
    return absl::InternalError(StrCat("[", kPass, "] the partitioned graph is not acyclic: ", sorted.message()));
  }
  return absl::OkStatus();
}

// The root compile graph's decision (GE IsGraphNeedUnknownShapePartition) and cut.
absl::Status PartitionRoot(Model& model, const MarkResult& marks, const PartitionOptions& options, DecisionLog* log,
                           Statistics* stats, PartitionResult& out) {
  Graph& root = model.root();
  NPUPLAN_ASSIGN_OR_RETURN(bool no_need, GraphFlag(root, "_no_need_dynamic_shape_partition"));
  if (no_need) {
    Decide(out, PartitionDecision::kSkipped, "graph attribute _no_need_dynamic_shape_partition",
           log, stats);
    return absl::OkStatus();
  }
  // Does the graph enter the partition flow (P1 a–d, P2)? GE also enters it
  // when the only no-tiling nodes are Data-like nodes and NetOutputs.
  const bool io_only_no_tiling = marks.no_tiling_count > 0 && marks.no_tiling_op_count == 0;
  if (marks.trigger_count == 0 && !io_only_no_tiling) {
    bool special = false;
    for (NodeId id : root.nodes) {
      const Node& n = model.node(id);
      special |= !n.subgraphs.empty() || IsSpecialType(n.type);
    }
    const int64_t known = static_cast<int64_t>(root.nodes.size());
    if (known < options.host_scheduling_threshold && !special) {
      MarkWholeGraphDynamic(model);
      Decide(
          out, PartitionDecision::kWholeDynamic,
          StrCat("host scheduling: ", known, " known nodes < ge.exec.hostSchedulingMaxThreshold=",
                 options.host_scheduling_threshold),
          log, stats);
      return absl::OkStatus();
    }
    for (size_t i = 0; i < model.num_nodes(); ++i) {
      if (marks.no_tiling[i]) model.node(NodeId(static_cast<int32_t>(i))).attrs["_op_no_tiling"] = true;
    }
    root.attrs["_dynamic_shape_partitioned"] = false;
    Decide(out, PartitionDecision::kStatic,
           marks.no_tiling_count > 0 ? "dynamic-shape nodes all run no-tiling; no (a)-(d) node"
                                     : "no node hits rules (a)-(d)",
           log, stats);
    return absl::OkStatus();
  }
  NPUPLAN_ASSIGN_OR_RETURN(bool single_op, GraphFlag(root, "_single_op_scene"));
  if (single_op) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic,
           "single-op scene (graph attribute _single_op_scene)", log, stats);
    return absl::OkStatus();
  }
  // Partition the root.
  root.attrs["_dynamic_shape_partitioned"] = true;
  TransferConstControlEdges(model, log, stats);
  GraphPartitioner partitioner(model, kRootGraph, marks, options, log, stats);
  NPUPLAN_RETURN_IF_ERROR(partitioner.Run(out));
  NPUPLAN_RETURN_IF_ERROR(SortPartitioned(model, options));
  Decide(out, PartitionDecision::kPartitioned,
         marks.trigger_count > 0
             ? StrCat(marks.trigger_count, " node(s) hit rules (a)-(d)")
             : "dynamic-shape Data/NetOutput nodes with no other no-tiling node",
         log, stats);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PartitionOptions> ReadPartitionOptions(const CompileOptions& options) {
  PartitionOptions o;
  auto bad = [](std::string_view name, std::string_view value, std::string_view why) {
    return absl::InvalidArgumentError(StrCat("option ", name, ": invalid value '", value, "': ", why));
  };
  o.merge_known_first = options.GetBool("npuplan.partition.mergeKnownFirst");
  if (auto v = options.GetIfSet("npuplan.partition.mergeKnownFirst");
      v && *v != "true" && *v != "false" && *v != "1" && *v != "0" && !v->empty()) {
    return bad("npuplan.partition.mergeKnownFirst", *v, "expected \"true\" or \"false\"");
  }
  o.lower_limit = o.merge_known_first ? 6 : 4;
  if (auto v = options.GetIfSet("ge.exec.static_model_ops_lower_limit")) {
    int64_t n;
    if (v->empty()) return bad("ge.exec.static_model_ops_lower_limit", *v, "must not be empty (an integer >= -1)");
    if (!ParseInt64(*v, n) || n < -1) return bad("ge.exec.static_model_ops_lower_limit", *v, "expected an integer >= -1");
    o.lower_limit = n;
  }
  if (auto v = options.GetIfSet("ge.exec.hostSchedulingMaxThreshold"); v && !v->empty()) {
    int64_t n;
    if (!ParseInt64(*v, n) || n < 0) {
      return bad("ge.exec.hostSchedulingMaxThreshold", *v, "expected a non-negative integer");
    }
    o.host_scheduling_threshold = n;
  }
  if (auto v = options.GetIfSet("ge.exec.placement"); v && !v->empty()) {
    if (*v != "HOST" && *v != "DEVICE") return bad("ge.exec.placement", *v, "expected \"HOST\" or \"DEVICE\"");
    o.host_exec = *v == "HOST";
  }
  std::string mode = options.Get("ge.topoSortingMode");
  if (mode.empty()) mode = "0";
  NPUPLAN_ASSIGN_OR_RETURN(o.topo_mode, ParseTopoSortMode(mode));
  o.stable_topo = o.topo_mode == TopoSortMode::kStableRdfs;
  return o;
}

absl::Status PartitionModel(Model& model, const MarkResult& marks, const PartitionOptions& options,
                            DecisionLog* log, Statistics* stats, PartitionResult& out) {
  out.subgraphs.clear();
  out.cluster_counts.clear();
  Graph& root = model.root();
  // 1. Whole-graph shortcuts (GE: before any per-graph work).
  if (options.host_exec) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic, "ge.exec.placement=HOST (host exec)", log, stats);
    return absl::OkStatus();
  }
  if (options.lower_limit == -1) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic, "ge.exec.static_model_ops_lower_limit=-1", log,
           stats);
    return absl::OkStatus();
  }
  if (OnlyDataAndNetOutputWithUnknownTensor(model, root)) {
    MarkWholeGraphDynamic(model);
    Decide(out, PartitionDecision::kWholeDynamic,
           "only Data/NetOutput nodes with an unknown tensor", log, stats);
    return absl::OkStatus();
  }
  NPUPLAN_ASSIGN_OR_RETURN(std::vector<GraphId> branches, MultiBatchBranches(model));
  NPUPLAN_RETURN_IF_ERROR(PartitionRoot(model, marks, options, log, stats, out));
  if (out.decision == PartitionDecision::kWholeDynamic || branches.empty()) return absl::OkStatus();
  // 2. Multi-batch Case branches: compile graphs of their own (GE), each cut
  //    when it holds an (a)-(d) node itself.
  bool cut = out.decision == PartitionDecision::kPartitioned;
  int64_t cut_branches = 0;
  for (GraphId b : branches) {
    Graph& branch = model.graph(b);
    PartitionDecision decision = PartitionDecision::kStatic;
    std::string reason = "no node hits rules (a)-(d)";
    int64_t triggers = 0;
    for (NodeId id : branch.nodes) triggers += EntersPartitionFlow(marks.reason[id.index()]) ? 1 : 0;
    NPUPLAN_ASSIGN_OR_RETURN(bool no_need, GraphFlag(branch, "_no_need_dynamic_shape_partition"));
    if (no_need) {
      decision = PartitionDecision::kSkipped;
      reason = "graph attribute _no_need_dynamic_shape_partition";
    } else if (triggers > 0) {
      decision = PartitionDecision::kPartitioned;
      reason = StrCat(triggers, " node(s) hit rules (a)-(d)");
      if (!cut) TransferConstControlEdges(model, log, stats);
      cut = true;
      ++cut_branches;
      model.graph(b).attrs["_dynamic_shape_partitioned"] = true;
      GraphPartitioner partitioner(model, b, marks, options, log, stats);
      NPUPLAN_RETURN_IF_ERROR(partitioner.Run(out));
    } else {
      model.graph(b).attrs["_dynamic_shape_partitioned"] = false;
    }
    if (stats) stats->Add(kPass, StrCat("branch_decision_", PartitionDecisionName(decision)));
    if (log && log->enabled()) {
      log->Record(kPass, "PartitionDecision", "", Field("graph", model.graph(b).name),
                  Field("decision", PartitionDecisionName(decision)), Field("reason", reason));
    }
  }
  if (cut_branches > 0) {
    if (out.decision != PartitionDecision::kPartitioned) {
      out.decision = PartitionDecision::kPartitioned;
      out.reason = StrCat("root: ", out.reason, "; ", cut_branches, " multi-batch branch(es) partitioned");
    } else {
      out.reason = StrCat(out.reason, "; ", cut_branches, " multi-batch branch(es) partitioned");
    }
    NPUPLAN_RETURN_IF_ERROR(SortPartitioned(model, options));
  }
  return absl::OkStatus();
}

}  // namespace partition

absl::StatusOr<bool> DynamicShapePartition::Run(Plan& plan, PassContext& ctx) {
  NPUPLAN_ASSIGN_OR_RETURN(partition::PartitionOptions options, partition::ReadPartitionOptions(ctx.options));
  // Marks are recomputed (cheap, deterministic); logged only if the marking
  // pass did not run before.
  const bool log_marks = !plan.partition.marked;
  NPUPLAN_ASSIGN_OR_RETURN(partition::MarkResult marks,
                           partition::ComputeUnknownShapeMarks(plan.model, ctx.options, log_marks ? &ctx.log : nullptr,
                                                               log_marks ? &ctx.stats : nullptr));
  NPUPLAN_RETURN_IF_ERROR(partition::PartitionModel(plan.model, marks, options, &ctx.log, &ctx.stats, plan.partition));
  plan.partition.unknown_shape_graphs = partition::ComputeUnknownShapeGraphs(plan);
  plan.EnsureNodeVectors();
  return plan.partition.decision != PartitionDecision::kSkipped;
}

}  // namespace npuplan
