// The frame builder works in the graph's node order wherever it can (each
// member read once, in memory order, rather than frame by frame), and writes
// nodes in the order a frame-by-frame build would (node ids and names are
// part of the plan):
//   1. frames in cluster order, members bucketed; a call and a subgraph each;
//   2. one pass over the graph: exports (member outputs read outside their
//      frame), boundary inputs, the stream labels the calls inherit;
//   3. frame by frame: Data nodes for the boundary inputs, the NetOutput;
//   4. members in node order: rewired to the Data nodes, control edges from
//      outside moved to the call, moved into the subgraph;
//   5. nodes left in the graph read through the calls; the graph's new order;
//   6. `Mark` log lines, the plan's record, the cluster counts.
#include "npuplan/partition/frame_builder.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/partition/cluster_graph.h"
#include "npuplan/support/big_vector.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace partition {
namespace {

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
  std::vector<OutputRef> exports;     // member anchors consumed outside, in output order
  std::vector<NodeId> call_controls;  // control inputs of the call (deduplicated, member order)
  uint32_t reason_bits = 0;           // distinct MarkReasons of the members (unknown frames)
};

// The stream labels a call inherits: a label every non-Const member shares.
constexpr std::string_view kLabelKeys[] = {"_stream_label", "_user_stream_label"};

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
// GraphClusters::name_clash); only the graph names are left.
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

// Builds the frames of one graph: the steps of the file comment, one method
// each, sharing the tables below.
class FrameBuilder {
 public:
  FrameBuilder(Model& model, GraphId graph, GraphClusters& clusters, const MarkResult& marks,
               DecisionLog* log, PassCounters& counts)
      : model_(model),
        graph_(graph),
        nodes_(clusters.nodes),
        local_(clusters.local),
        reason_(clusters.reason),
        cg_(*clusters.cg),
        name_clash_(clusters.name_clash),
        marks_(marks),
        log_(log),
        counts_(counts),
        logging_(log != nullptr && log->enabled()),
        n_(static_cast<int32_t>(nodes_.size())),
        call_engine_(model.engine_table.EngineForOp("PartitionedCall")),
        data_engine_(model.engine_table.EngineForOp("Data")),
        netoutput_engine_(model.engine_table.EngineForOp("NetOutput")) {}

  void Run(PartitionResult& out) {
    NumberAnchors();
    MakeFrames();
    CreateCalls();
    ScanMembers();
    data_frame_.assign(anchor_base_[n_], -1);
    data_of_.resize(anchor_base_[n_]);
    for (size_t fi = 0; fi < frames_.size(); ++fi) AddFrameIo(fi);
    model_.IndexDeferredNodes();
    MoveMembers();
    RewireOutside();
    ReorderGraph();
    for (Frame& f : frames_) RecordFrame(f, out);
    RecordClusterCounts(out);
  }

 private:
  void NumberAnchors();
  void MakeFrames();
  void CreateCalls();
  void ScanMembers();
  void NoteExport(const OutputRef& in, int32_t consumer_frame);
  void AddFrameIo(size_t fi);
  std::vector<OutputRef> AddDataNodes(size_t fi, const std::string& sg_name);
  void MoveMembers();
  void RewireOutside();
  void ReorderGraph();
  void RecordFrame(Frame& f, PartitionResult& out);
  void LogMarks(const Frame& f, const PartitionSubgraph& rec);
  void RecordClusterCounts(PartitionResult& out);

  // Output k of local node v is anchor anchor_base_[v] + k.
  uint32_t Anchor(const OutputRef& r) const {
    return anchor_base_[local_[r.node.index()]] + static_cast<uint32_t>(r.index);
  }
  // What a reader outside r's frame reads instead: the call's output (or r
  // itself when r's producer is in no frame).
  OutputRef OutsideRef(const OutputRef& r) const {
    return frame_of_[r.node.index()] < 0 ? r : export_ref_[Anchor(r)];
  }
  NodeId OutsideNode(NodeId p) const {
    return frame_of_[p.index()] < 0 ? p : frames_[frame_of_[p.index()]].call;
  }
  const Node& LocalNode(int32_t v) const { return model_.node(nodes_[v]); }
  // With fresh names (no lookup needed), the created nodes enter the name
  // index in one sorted batch after step 3 (Model::AddNodeDeferred).
  NodeId AddNode(GraphId g, Node&& node) {
    return fresh_ ? model_.AddNodeDeferred(g, std::move(node)) : model_.AddNode(g, std::move(node));
  }

  Model& model_;
  const GraphId graph_;
  const std::vector<NodeId>& nodes_;       // local index → node
  const BigVector<int32_t>& local_;        // NodeId index → local index
  const std::vector<MarkReason>& reason_;  // local index → why unknown
  ClusterGraph& cg_;
  const bool name_clash_;
  const MarkResult& marks_;
  DecisionLog* log_;
  PassCounters& counts_;
  const bool logging_;
  const int32_t n_;  // nodes in the graph
  const std::string& call_engine_;
  const std::string& data_engine_;
  const std::string& netoutput_engine_;

  // Output anchors of the graph's nodes, numbered densely (replaces hashing
  // (node, index) pairs); anchor_base_[n_] = number of anchors.
  BigVector<uint32_t> anchor_base_;
  std::vector<Frame> frames_;
  std::array<int64_t, kNumClusterTypes> cluster_counts_{};  // live clusters by type
  BigVector<int32_t> frame_of_;      // NodeId index → frame (-1 = none; calls included)
  bool fresh_ = false;               // NamesAreFresh
  BigVector<OutputRef> export_ref_;  // anchor → (call, output index); invalid node = none
  // Boundary inputs of all frames in one array, in node order (then input
  // order); each frame's are boundary_[boundary_of_frame_[k]] for k in
  // [boundary_start_[fi], boundary_start_[fi + 1]), in member order.
  BigVector<BoundaryInput> boundary_;
  std::vector<uint32_t> boundary_start_;
  BigVector<uint32_t> boundary_of_frame_;
  // Step 3: anchor → frame whose Data node stands for it, and that node.
  BigVector<int32_t> data_frame_;
  BigVector<NodeId> data_of_;
  std::vector<AttrMap> parent_index_attr_;  // shared `_parent_node_index` maps, by call input
};

void FrameBuilder::NumberAnchors() {
  anchor_base_.assign(n_ + 1, 0);
  for (int32_t i = 0; i < n_; ++i) {
    anchor_base_[i + 1] = anchor_base_[i] + static_cast<uint32_t>(LocalNode(i).outputs.size());
  }
}

// 1. Frames in cluster order, with unique ids; members in node order.
void FrameBuilder::MakeFrames() {
  BigVector<int32_t> frame_of_cluster(n_, -1);
  const ClusterList live = cg_.LiveClusters();
  size_t num_frames = 0;
  for (int32_t c : live) num_frames += IsMergeable(cg_.type(c)) ? 1 : 0;
  frames_.reserve(num_frames);
  for (int32_t c : live) {
    ClusterType t = cg_.type(c);
    ++cluster_counts_[static_cast<int>(t)];
    if (!IsMergeable(t)) continue;
    frame_of_cluster[c] = static_cast<int32_t>(frames_.size());
    Frame f;
    f.cluster = c;
    f.type = t;
    f.members.reserve(cg_.size(c));
    frames_.push_back(std::move(f));
  }
  // Members in node order (ascending, as ClusterGraph::Members gives them),
  // bucketed in one sequential pass instead of walking each cluster's linked
  // list and sorting it.
  frame_of_.reserve(model_.num_nodes() + frames_.size());  // + the calls (CreateCalls)
  frame_of_.assign(model_.num_nodes(), -1);
  for (int32_t i = 0; i < n_; ++i) {
    const int32_t fi = frame_of_cluster[cg_.Find(i)];
    frame_of_[nodes_[i].index()] = fi;
    if (fi >= 0) frames_[fi].members.push_back(nodes_[i]);
  }
}

// 1b. Each frame's PartitionedCall and subgraph.
void FrameBuilder::CreateCalls() {
  const std::string root_name = model_.graph(graph_).name;
  // The clustering checked the node names when this graph holds every node.
  const bool nodes_checked = static_cast<size_t>(n_) == model_.num_nodes();
  fresh_ = !(nodes_checked && name_clash_) && NamesAreFresh(model_, root_name, nodes_checked);
  for (size_t fi = 0; fi < frames_.size(); ++fi) {
    Frame& f = frames_[fi];
    const bool unknown = f.type == ClusterType::kUnknown;
    const char* suffix = f.type == ClusterType::kKnown ? "_know" : unknown ? "_unknow" : "_input";
    Node call;
    call.name = UniqueNodeName(model_, StrCat("PartitionedCall_", fi), fresh_);
    call.type = "PartitionedCall";
    call.engine = call_engine_;
    call.attrs["_is_unknown_shape"] = unknown;
    // (The inherited stream labels are added by step 2, which reads the members.)
    f.call = AddNode(graph_, std::move(call));
    std::string sg_name = StrCat(root_name, "_sub_", fi, suffix);
    f.sg =
        model_.AddSubgraph(f.call, fresh_ ? std::move(sg_name) : UniqueGraphName(model_, sg_name));
    Graph& sg = model_.graph(f.sg);
    sg.attrs["_is_unknown_shape"] = unknown;
    if (unknown) sg.attrs["_memory_discontiguous_allocation"] = true;
  }
  frame_of_.resize(model_.num_nodes(), -1);
}

// A member anchor read from frame `consumer_frame` (-1 = outside all frames)
// becomes the next output of its own frame's call, once.
void FrameBuilder::NoteExport(const OutputRef& in, int32_t consumer_frame) {
  int32_t pf = frame_of_[in.node.index()];
  if (pf < 0 || pf == consumer_frame) return;
  OutputRef& ref = export_ref_[Anchor(in)];
  if (ref.node.valid()) return;
  Frame& f = frames_[pf];
  ref = OutputRef{f.call, static_cast<int32_t>(f.exports.size())};
  f.exports.push_back(in);
}

// 2. Exports (in consumer order), each frame's boundary inputs, and the
//    stream labels the calls inherit, in one pass over the graph (each node
//    read once). An input frame has Const members only: no label.
void FrameBuilder::ScanMembers() {
  export_ref_.resize(anchor_base_[n_]);
  // Per frame and key: the common value so far (null = none yet), or
  // `conflict` once a member lacks it or differs.
  struct LabelState {
    const std::string* common = nullptr;
    bool conflict = false;
  };
  std::vector<std::array<LabelState, 2>> labels(frames_.size());
  // Reserved for one per node (untouched pages of a huge-page allocation
  // cost nothing; growing from empty copied the array again at every doubling).
  boundary_.reserve(n_);
  boundary_start_.assign(frames_.size() + 1, 0);  // counts per frame, prefix sums below
  for (int32_t i = 0; i < n_; ++i) {
    const Node& node = model_.node(nodes_[i]);
    const int32_t fi = frame_of_[nodes_[i].index()];
    if (fi >= 0 && frames_[fi].type != ClusterType::kInputNode && !IsConstType(node.type)) {
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
      NoteExport(in, fi);
      if (fi >= 0 && frame_of_[in.node.index()] != fi) {
        boundary_.push_back(BoundaryInput{i, static_cast<int32_t>(k), in, NodeId(), fi});
        ++boundary_start_[fi + 1];
      }
    }
  }
  for (size_t fi = 0; fi < frames_.size(); ++fi) boundary_start_[fi + 1] += boundary_start_[fi];
  boundary_of_frame_.resize(boundary_.size());
  std::vector<uint32_t> cursor(boundary_start_.begin(), boundary_start_.end() - 1);
  for (size_t j = 0; j < boundary_.size(); ++j) {
    boundary_of_frame_[cursor[boundary_[j].frame]++] = static_cast<uint32_t>(j);
  }
  // Nothing has written member attributes yet: the label pointers are valid.
  for (size_t fi = 0; fi < frames_.size(); ++fi) {
    for (int k = 0; k < 2; ++k) {
      const LabelState& ls = labels[fi][k];
      if (!ls.conflict && ls.common != nullptr) {
        model_.node(frames_[fi].call).attrs[kLabelKeys[k]] = *ls.common;
      }
    }
  }
}

// 3. One frame's Data nodes (from the lists of step 2; no member is read
//    here), then its NetOutput; the call's inputs and outputs.
void FrameBuilder::AddFrameIo(size_t fi) {
  Frame& f = frames_[fi];
  const std::string sg_name = model_.graph(f.sg).name;
  // Room for the final node list (Data nodes ≤ boundary inputs, members,
  // NetOutput): the appends below and the rebuild after them do not reallocate.
  model_.graph(f.sg).nodes.reserve(boundary_start_[fi + 1] - boundary_start_[fi] +
                                   f.members.size() + 1);
  std::vector<OutputRef> call_inputs = AddDataNodes(fi, sg_name);
  Node netout;
  netout.name = UniqueNodeName(model_, StrCat(sg_name, "_netoutput"), fresh_);
  netout.type = "NetOutput";
  netout.engine = netoutput_engine_;
  std::vector<TensorDesc> call_outputs;
  call_outputs.reserve(f.exports.size());
  // The exporting members are scattered over the node store: prefetched a
  // few ahead, as in AddDataNodes.
  const size_t ne = f.exports.size();
  for (size_t j = 0; j < ne; ++j) {
    if (j + 12 < ne) __builtin_prefetch(&model_.node(f.exports[j + 12].node));
    if (j + 6 < ne) {
      __builtin_prefetch(model_.node(f.exports[j + 6].node).outputs.data() +
                         f.exports[j + 6].index);
    }
    if (j + 3 < ne) {
      __builtin_prefetch(
          model_.node(f.exports[j + 3].node).outputs[f.exports[j + 3].index].shape.data());
    }
    const OutputRef& e = f.exports[j];
    call_outputs.push_back(model_.node(e.node).outputs[e.index]);
  }
  netout.inputs = std::move(f.exports);
  NodeId netout_id = AddNode(f.sg, std::move(netout));
  Node& call = model_.node(f.call);
  call.inputs = std::move(call_inputs);
  call.outputs = std::move(call_outputs);
  // The subgraph's list is [Data nodes…, NetOutput] (appended by AddNode):
  // the members go before the NetOutput.
  Graph& sg = model_.graph(f.sg);
  sg.nodes.pop_back();
  sg.nodes.insert(sg.nodes.end(), f.members.begin(), f.members.end());
  sg.nodes.push_back(netout_id);
}

// One Data node per distinct source of frame fi's boundary inputs, in member
// order; returns the call's inputs (one per Data node).
std::vector<OutputRef> FrameBuilder::AddDataNodes(size_t fi, const std::string& sg_name) {
  const Frame& f = frames_[fi];
  std::vector<OutputRef> call_inputs;
  call_inputs.reserve(boundary_start_[fi + 1] - boundary_start_[fi]);  // one per distinct source
  // The producers are scattered over the node store: their nodes, output
  // lists and shapes are prefetched a few boundary inputs ahead (three
  // dependent cache misses per Data node otherwise).
  const uint32_t* fb = boundary_of_frame_.data() + boundary_start_[fi];
  const size_t nb = boundary_start_[fi + 1] - boundary_start_[fi];
  for (size_t j = 0; j < nb; ++j) {
    if (j + 12 < nb) __builtin_prefetch(&model_.node(boundary_[fb[j + 12]].source.node));
    if (j + 6 < nb) {
      const OutputRef& r = boundary_[fb[j + 6]].source;
      __builtin_prefetch(model_.node(r.node).outputs.data() + r.index);
    }
    if (j + 3 < nb) {
      const OutputRef& r = boundary_[fb[j + 3]].source;
      const TensorDesc& t = model_.node(r.node).outputs[r.index];
      __builtin_prefetch(t.shape.data());
    }
    BoundaryInput& b = boundary_[fb[j]];
    const OutputRef in = b.source;
    const uint32_t a = Anchor(in);
    if (data_frame_[a] != static_cast<int32_t>(fi)) {
      data_frame_[a] = static_cast<int32_t>(fi);
      Node data;
      data.name = UniqueNodeName(model_, StrCat(sg_name, "_data_", call_inputs.size()), fresh_);
      data.type = "Data";
      data.engine = data_engine_;
      data.outputs.push_back(model_.node(in.node).outputs[in.index]);
      const size_t k = call_inputs.size();
      while (parent_index_attr_.size() <= k) {
        parent_index_attr_.push_back(
            AttrMap::Shared("_parent_node_index", static_cast<int64_t>(parent_index_attr_.size())));
      }
      data.attrs = parent_index_attr_[k];
      data_of_[a] = AddNode(f.sg, std::move(data));
      call_inputs.push_back(OutsideRef(in));
    }
    b.data = data_of_[a];
  }
  return call_inputs;
}

// 4. Members in graph order: boundary inputs rewired to the Data nodes,
//    control edges from outside moved to the call, the member moved into the
//    subgraph. Per frame, everything is appended in member order, as a
//    frame-by-frame walk would.
void FrameBuilder::MoveMembers() {
  // Attributes written on every member: shared one-entry maps
  // (attribute.h), so a node without attributes gets no allocation.
  const std::array<AttrMap, 2> unknown_attr = {AttrMap::Shared("_is_unknown_shape", false),
                                               AttrMap::Shared("_is_unknown_shape", true)};
  size_t next_boundary = 0;  // boundary_ is in node order
  for (int32_t i = 0; i < n_; ++i) {
    const int32_t fi = frame_of_[nodes_[i].index()];
    if (fi < 0) continue;
    Frame& f = frames_[fi];
    Node& mn = model_.node(nodes_[i]);
    for (; next_boundary < boundary_.size() && boundary_[next_boundary].consumer == i;
         ++next_boundary) {
      const BoundaryInput& b = boundary_[next_boundary];
      mn.inputs[b.slot] = OutputRef{b.data, 0};
    }
    std::vector<NodeId>& ctrl = mn.control_inputs;
    size_t w = 0;
    for (NodeId p : ctrl) {
      if (frame_of_[p.index()] == fi) {
        ctrl[w++] = p;
      } else {
        NodeId q = OutsideNode(p);
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
    if (f.type == ClusterType::kUnknown) {
      f.reason_bits |= uint32_t{1} << static_cast<int>(reason_[i]);
    }
  }
  for (Frame& f : frames_) model_.node(f.call).control_inputs = std::move(f.call_controls);
}

// 5a. Nodes left in the graph read frame outputs through the calls. (Readers
//     inside other frames were rewired to Data nodes, whose call inputs used
//     OutsideRef; frame → frame control edges likewise.)
void FrameBuilder::RewireOutside() {
  for (int32_t i = 0; i < n_; ++i) {
    if (frame_of_[nodes_[i].index()] >= 0) continue;
    Node& node = model_.node(nodes_[i]);
    for (OutputRef& in : node.inputs) in = OutsideRef(in);
    std::vector<NodeId> ctrl;
    for (NodeId p : node.control_inputs) {
      NodeId q = OutsideNode(p);
      if (std::find(ctrl.begin(), ctrl.end(), q) == ctrl.end()) ctrl.push_back(q);
    }
    node.control_inputs = std::move(ctrl);
  }
}

// 5b. The graph's new order: each call where its cluster's first node was.
void FrameBuilder::ReorderGraph() {
  std::vector<NodeId> order;
  std::vector<uint8_t> placed(frames_.size(), 0);
  for (int32_t i = 0; i < n_; ++i) {
    int32_t fi = frame_of_[nodes_[i].index()];
    if (fi < 0) {
      order.push_back(nodes_[i]);
    } else if (!placed[fi]) {
      placed[fi] = 1;
      order.push_back(frames_[fi].call);
    }
  }
  model_.graph(graph_).nodes = std::move(order);
}

// 6. A frame's log lines and its record in the plan (the members move there).
void FrameBuilder::RecordFrame(Frame& f, PartitionResult& out) {
  const bool unknown = f.type == ClusterType::kUnknown;
  PartitionSubgraph rec;
  rec.name = model_.graph(f.sg).name;
  rec.kind = f.type == ClusterType::kKnown ? SubgraphKind::kKnown
             : unknown                     ? SubgraphKind::kUnknown
                                           : SubgraphKind::kInput;
  rec.call_node = model_.node(f.call).name;
  // The members are recorded by id (the frame's list, topological order).
  rec.nodes = std::move(f.members);
  if (logging_) LogMarks(f, rec);
  // The distinct member reasons (a bit set over MarkReason, collected by
  // MoveMembers), as sorted texts.
  std::vector<std::string> reasons;
  for (int r = 0; f.reason_bits >> r != 0; ++r) {
    if ((f.reason_bits >> r) & 1) reasons.emplace_back(ReasonText(static_cast<MarkReason>(r)));
  }
  std::sort(reasons.begin(), reasons.end());
  reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
  rec.reasons = std::move(reasons);
  counts_.Count(StrCat("subgraphs_", SubgraphKindName(rec.kind)));
  out.subgraphs.push_back(std::move(rec));
}

// GE's `Mark node[…]` lines: one per member, then the call.
void FrameBuilder::LogMarks(const Frame& f, const PartitionSubgraph& rec) {
  const bool unknown = f.type == ClusterType::kUnknown;
  for (NodeId m : rec.nodes) {
    const Node& mn = model_.node(m);
    MarkReason r = reason_[local_[m.index()]];
    const int before = marks_.IsUnknown(m) ? 1 : 0;
    std::string_view why = unknown                             ? ReasonText(r)
                           : marks_.no_tiling[m.index()]       ? "no-tiling"
                           : f.type == ClusterType::kInputNode ? "input node"
                                                               : "known";
    log_->Record(kPass, "Mark",
                 StrCat("node[", mn.name, ",", mn.type, "] attr[_is_unknown_shape] to ",
                        unknown ? 1 : 0, "."),
                 Field("reason", why), Field("before", before), Field("after", unknown ? 1 : 0));
  }
  const Node& call = model_.node(f.call);
  log_->Record(kPass, "Mark",
               StrCat("node[", call.name, ",", call.type, "] attr[_is_unknown_shape] to ",
                      unknown ? 1 : 0, "."),
               Field("reason", StrCat("partitioned call of ", rec.name)), Field("before", "none"),
               Field("after", unknown ? 1 : 0));
}

// 6b. The live clusters by type (summed over the graphs partitioned).
void FrameBuilder::RecordClusterCounts(PartitionResult& out) {
  const std::array<int64_t, kNumClusterTypes>& counts = cluster_counts_;
  int64_t all = 0;
  for (int t = 0; t < kNumClusterTypes; ++t) {
    std::string name(ClusterTypeName(static_cast<ClusterType>(t)));
    out.cluster_counts[name] += counts[t];
    all += counts[t];
    counts_.Count(StrCat("clusters_", name), counts[t]);
  }
  out.cluster_counts["all"] += all;
  if (logging_) {
    log_->Record(kPass, "ClusterSummary", "", Field("all", all), Field("data", counts[0]),
                 Field("input", counts[1]), Field("netoutput", counts[2]),
                 Field("stage", counts[3]), Field("unknown", counts[4]), Field("known", counts[5]));
  }
  counts_.Count("bfs_visits", cg_.bfs_visits);
}

}  // namespace

void BuildFrames(Model& model, GraphId graph, GraphClusters& clusters, const MarkResult& marks,
                 DecisionLog* log, PassCounters& counts, PartitionResult& out) {
  FrameBuilder(model, graph, clusters, marks, log, counts).Run(out);
}

}  // namespace partition
}  // namespace npuplan
