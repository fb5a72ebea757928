#include "npuplan/stream/stream_budget.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "npuplan/ir/attribute.h"
#include "npuplan/ir/node_prefetch.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/stream/assign_attached_stream_pass.h"
#include "npuplan/stream/dag_stream_allocator.h"
#include "npuplan/stream/engine_partition.h"
#include "npuplan/stream/logical_stream_assignment.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/stream/stream_options.h"
#include "npuplan/stream/stream_summary.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace stream {

// A count of input values (task counts are the file's): the estimate stays in
// range and physical-stream-split reports the overflow with the node.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

namespace {

// Pairs × simulated nodes per merge step above which the light-stream rule replaces the makespan
// search.
constexpr int64_t kExactPairWork = 200'000'000;

// The split's task limit, or 0 when no split will run.
int64_t SplitLimit(const Plan& plan, const StreamBudgetOptions& o) {
  if (IsDynamicStreamMode(plan.streams.mode) || plan.streams.mode == StreamMode::kSingle) return 0;
  if (o.unlimited_stream_depth) return 0;
  return o.max_tasks_per_stream;
}

// Why a stream may not merge with streams of another class ("" = fixed: merges with none).
struct StreamClass {
  std::string key;  // "compute", an independent engine, or "" (fixed)
  std::string why;  // what fixes it (for the error message)
};

std::vector<StreamClass> Classify(const Plan& plan) {
  const Model& m = plan.model;
  std::vector<StreamClass> cls(static_cast<size_t>(plan.streams.logical),
                               StreamClass{"compute", ""});
  for (const Node& n : m.nodes()) {
    if (n.stream_id < 0 || n.stream_id >= plan.streams.logical) continue;
    StreamClass& c = cls[n.stream_id];
    if (!c.why.empty()) continue;
    if (auto l = GetStringAttr(n.attrs, kAttrUserStreamLabel);
        l && !l->empty() && !IsInputDataNode(n)) {
      c = {"", StrCat("user stream label '", *l, "'")};
    } else if (auto s = GetStringAttr(n.attrs, "_stream_label"); s && !s->empty()) {
      c = {"", StrCat("activation label '", *s, "'")};
    } else if (const EngineConfig* e = m.engine_table.Find(n.engine);
               e != nullptr && e->independent) {
      c.key = StrCat("engine ", n.engine);
    }
  }
  return cls;
}

// One graph's estimate: its DAG and the stream of each local node.
struct GraphEstimate {
  GraphId graph;
  StreamDag dag;
  StreamCostModel costs;
  std::vector<int32_t> stream_of;  // global logical stream (-1 = none)
  std::set<int32_t> streams;
  int64_t makespan = 0;
};

class Merger {
 public:
  Merger(Plan& plan, DecisionLog& log, const std::vector<StreamClass>& cls)
      : plan_(plan), log_(log), cls_(cls) {
    const Model& m = plan.model;
    const std::vector<bool> unknown = UnknownShapeGraphs(plan);
    for (GraphId g : m.GraphsPreOrder()) {
      GraphEstimate ge{g, {}, StreamCostModel(sim::SimOptions{}, !unknown[g.index()]), {}, {}, 0};
      ge.dag = BuildStreamDag(m, g, ge.costs);
      for (NodeId id : ge.dag.nodes) {
        const int64_t s = m.node(id).stream_id;
        ge.stream_of.push_back(s >= 0 ? static_cast<int32_t>(s) : -1);
        if (s >= 0) ge.streams.insert(static_cast<int32_t>(s));
      }
      ge.makespan = EstimateMakespan(ge.dag, ge.stream_of, ge.costs);
      graphs_.push_back(std::move(ge));
    }
    work_.assign(static_cast<size_t>(plan.streams.logical), 0);
    for (const GraphEstimate& ge : graphs_) {
      for (size_t v = 0; v < ge.stream_of.size(); ++v) {
        if (ge.stream_of[v] >= 0) work_[ge.stream_of[v]] += ge.dag.cost[v];
      }
    }
    graphs_of_.assign(work_.size(), {});
    for (size_t i = 0; i < graphs_.size(); ++i) {
      for (int32_t st : graphs_[i].streams) graphs_of_[st].push_back(static_cast<int32_t>(i));
    }
    alive_.assign(work_.size(), 1);
    merged_into_.assign(work_.size(), -1);
    for (int32_t a = 0; a < static_cast<int32_t>(work_.size()); ++a) {
      if (!cls_[a].key.empty()) light_.Add(cls_[a].key, a, work_[a]);
    }
    for (const GraphEstimate& ge : graphs_) nodes_ += static_cast<int64_t>(ge.stream_of.size());
  }

  // One merge by the rules above: (into, from); none when no pair may merge.
  std::optional<std::pair<int32_t, int32_t>> MergeOnce() {
    const int64_t pairs = light_.pairs();
    if (pairs == 0) return std::nullopt;
    std::pair<int32_t, int32_t> best;
    if (pairs * nodes_ <= kExactPairWork) {
      int64_t best_delta = INT64_MAX;
      for (int32_t a = 0; a < static_cast<int32_t>(alive_.size()); ++a) {
        if (!alive_[a] || cls_[a].key.empty()) continue;
        for (int32_t b = a + 1; b < static_cast<int32_t>(alive_.size()); ++b) {
          if (!alive_[b] || cls_[b].key != cls_[a].key) continue;
          const int64_t d = Delta(a, b, nullptr);
          if (d < best_delta) {
            best_delta = d;
            best = {a, b};
          }
        }
      }
    } else {  // the two lightest of one class
      best = *light_.Best();
    }
    Apply(best.first, best.second);
    return best;
  }

  int64_t total_delta() const { return total_delta_; }
  int64_t merges() const { return merges_; }

  // Gives the model's nodes the streams the merges so far left them on:
  // once per batch of merges, not a pass over every node per merge.
  void WriteMerges() {
    // Each merged stream straight to the alive one it ended in (the chains
    // shortened on the way: one step per stream in all).
    for (size_t s = 0; s < merged_into_.size(); ++s) {
      int32_t root = merged_into_[s];
      if (root < 0) continue;
      while (merged_into_[root] >= 0) root = merged_into_[root];
      for (int32_t x = static_cast<int32_t>(s); merged_into_[x] >= 0;) {
        const int32_t next = merged_into_[x];
        merged_into_[x] = root;
        x = next;
      }
    }
    Model& m = plan_.model;
    for (size_t i = 0; i < m.num_nodes(); ++i) {
      Node& n = m.node(NodeId(static_cast<int32_t>(i)));
      if (n.stream_id >= 0 && n.stream_id < static_cast<int64_t>(merged_into_.size()) &&
          merged_into_[n.stream_id] >= 0) {
        n.stream_id = merged_into_[n.stream_id];
      }
    }
  }

 private:
  // Makespan increase of merging b into a (summed over graphs using both);
  // `updated` receives the new per-graph makespans when given.
 public:
  // The estimate of the current assignment (sum over graphs) and a bound no
  // assignment on these streams beats, in the same model: per graph, the
  // longest path (a constant predecessor is ready at the start, as in
  // EstimateMakespan) and the work on streams spread over the graph's streams.
  int64_t Makespan() const {
    int64_t total = 0;
    for (const GraphEstimate& ge : graphs_) total += ge.makespan;  // costs are capped so that sums fit (StreamCostModel)
    return total;
  }
  int64_t LowerBound() const {
    int64_t total = 0;
    for (const GraphEstimate& ge : graphs_) {
      const StreamDag& d = ge.dag;
      std::vector<int64_t> finish(d.size(), 0);
      int64_t path = 0, work = 0;
      for (size_t v = 0; v < d.size(); ++v) {
        int64_t ready = 0;
        for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
          if (!d.constant[d.pred[e]]) ready = std::max(ready, finish[d.pred[e]]);
        }
        finish[v] = ready + d.cost[v];
        path = std::max(path, finish[v]);
        if (ge.stream_of[v] >= 0) work += d.cost[v];
      }
      const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(ge.streams.size()));
      total += std::max(path, (work + k - 1) / k);
    }
    return total;
  }

 private:
  int64_t Delta(int32_t a, int32_t b, std::vector<std::pair<size_t, int64_t>>* updated) {
    int64_t delta = 0;
    std::vector<int32_t> both;
    std::set_intersection(graphs_of_[a].begin(), graphs_of_[a].end(), graphs_of_[b].begin(),
                          graphs_of_[b].end(), std::back_inserter(both));
    for (const int32_t i : both) {
      GraphEstimate& ge = graphs_[i];
      std::vector<int32_t> merged = ge.stream_of;
      for (int32_t& s : merged) s = s == b ? a : s;
      const int64_t ms = EstimateMakespan(ge.dag, merged, ge.costs);
      delta += ms - ge.makespan;
      if (updated) updated->emplace_back(i, ms);
    }
    return delta;
  }

  void Apply(int32_t a, int32_t b) {
    std::vector<std::pair<size_t, int64_t>> updated;
    const int64_t delta = Delta(a, b, &updated);
    for (const auto& [i, ms] : updated) graphs_[i].makespan = ms;
    for (const int32_t i : graphs_of_[b]) {
      GraphEstimate& ge = graphs_[i];
      ge.streams.erase(b);
      ge.streams.insert(a);
      for (int32_t& s : ge.stream_of) s = s == b ? a : s;
    }
    std::vector<int32_t> graphs;
    std::set_union(graphs_of_[a].begin(), graphs_of_[a].end(), graphs_of_[b].begin(),
                   graphs_of_[b].end(), std::back_inserter(graphs));
    graphs_of_[a] = std::move(graphs);
    std::vector<int32_t>().swap(graphs_of_[b]);
    merged_into_[b] = a;  // the nodes follow in WriteMerges
    light_.Remove(cls_[a].key, a, work_[a]);
    light_.Remove(cls_[b].key, b, work_[b]);
    work_[a] += work_[b];
    light_.Add(cls_[a].key, a, work_[a]);
    alive_[b] = 0;
    total_delta_ += delta;
    ++merges_;
    log_.Record(StreamBudget::kName, "StreamsMerged", "", Field("into", a), Field("from", b),
                Field("makespan_delta", delta), Field("graphs", updated.size()));
  }

  Plan& plan_;
  DecisionLog& log_;
  const std::vector<StreamClass>& cls_;
  std::vector<GraphEstimate> graphs_;
  int64_t nodes_ = 0;  // the graphs' simulated nodes
  std::vector<int64_t> work_;
  // Per stream: the graphs (indices into graphs_, ascending) that use it, so
  // a merge visits only those — a pass over every graph per merge was
  // quadratic on models of many subgraphs (thousands of If branches).
  std::vector<std::vector<int32_t>> graphs_of_;
  std::vector<uint8_t> alive_;
  std::vector<int32_t> merged_into_;  // per merged stream: the one it went into (-1: alive)
  LightestPairs light_;  // the alive streams that may merge, by class
  int64_t total_delta_ = 0;
  int64_t merges_ = 0;
};

// Renumbers main streams continuously in id order and rebuilds the stream list.
void Renumber(Plan& plan) {
  Model& m = plan.model;
  std::map<int64_t, int64_t> ids;
  for (const Node& n : m.nodes()) {
    if (n.stream_id >= 0) ids.emplace(n.stream_id, 0);
  }
  int64_t next = 0;
  for (auto& [old, nu] : ids) nu = next++;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    Node& n = m.node(NodeId(static_cast<int32_t>(i)));
    if (n.stream_id >= 0) n.stream_id = ids.at(n.stream_id);
  }
  StreamResult& s = plan.streams;
  s.logical = next;
  s.physical = next;
  s.streams.assign(static_cast<size_t>(next), LogicalStream{});
  for (int64_t i = 0; i < next; ++i) s.streams[i].id = i;
  for (GraphId g : m.GraphsPreOrder()) {
    for (NodeId id : m.graph(g).nodes) {
      const Node& n = m.node(id);
      if (n.stream_id < 0 || n.attrs.empty() || !s.streams[n.stream_id].user_label.empty())
        continue;
      if (IsInputDataNode(n)) continue;
      s.streams[n.stream_id].user_label = StringAttrOrEmpty(n.attrs, kAttrUserStreamLabel);
    }
  }
  const std::vector<int64_t> hccl = HcclFollowedStreamCounts(plan);
  for (int64_t i = 0; i < next; ++i) s.streams[i].hccl_followed_count = hccl[i];
}

}  // namespace

void LightestPairs::Add(const std::string& cls, int32_t stream, int64_t work) {
  by_class_[cls].emplace(work, stream);
}

void LightestPairs::Remove(const std::string& cls, int32_t stream, int64_t work) {
  auto it = by_class_.find(cls);
  if (it == by_class_.end()) return;
  it->second.erase({work, stream});
  if (it->second.empty()) by_class_.erase(it);
}

// In a class, the least sum is that of its two lightest streams x and y
// (by work, then id). Equal works: the pairs of that sum are those among
// the streams of x's work, the first being the two smallest ids, x and y.
// Else x alone has the least work and the pairs are x with each stream of
// y's work, the first being x with the smallest id among them, y.
std::optional<std::pair<int32_t, int32_t>> LightestPairs::Best() const {
  std::optional<std::tuple<int64_t, int32_t, int32_t>> best;
  for (const auto& [cls, streams] : by_class_) {
    if (streams.size() < 2) continue;
    const auto& [wx, x] = *streams.begin();
    const auto& [wy, y] = *std::next(streams.begin());
    const std::tuple<int64_t, int32_t, int32_t> pair{wx + wy, std::min(x, y), std::max(x, y)};
    if (!best || pair < *best) best = pair;
  }
  if (!best) return std::nullopt;
  return std::make_pair(std::get<1>(*best), std::get<2>(*best));
}

int64_t LightestPairs::pairs() const {
  int64_t total = 0;
  for (const auto& [cls, streams] : by_class_) {
    const int64_t n = static_cast<int64_t>(streams.size());
    total += n * (n - 1) / 2;
  }
  return total;
}

namespace {

// Tasks per split piece (GE reserves 27 per physical stream).
int64_t SplitCap(int64_t task_limit) { return std::max<int64_t>(task_limit - 27, 1); }
// Pieces beyond the first that `tasks` need.
int64_t ExtraPieces(int64_t tasks, int64_t cap) {
  return std::max<int64_t>(0, tasks / cap + (tasks % cap != 0) - 1);
}

// The task model of the need estimate, per node with a stream (stream_of(i)
// >= 0): on_node(stream, its tasks), and on_cross(producer's stream,
// consumer's stream) once per (producer, consumer) pair across streams —
// one record there, two wait tasks here.
template <typename StreamOf, typename OnNode, typename OnCross>
void WalkStreamTasks(const Model& m, StreamOf stream_of, OnNode on_node, OnCross on_cross) {
  const size_t n = m.num_nodes();
  std::vector<int32_t> producers;
  EngineRunLookup engines(m.engine_table);
  for (size_t i = 0; i < n; ++i) {
    if (i + kNodePrefetch < n) PrefetchNodeRecord(m.nodes()[i + kNodePrefetch]);
    if (i + kNodePrefetch / 2 < n) {
      const Node& ahead = m.nodes()[i + kNodePrefetch / 2];
      if (!ahead.inputs.empty()) __builtin_prefetch(ahead.inputs.data());
      if (!ahead.control_inputs.empty()) __builtin_prefetch(ahead.control_inputs.data());
    }
    const int64_t self = stream_of(i);
    if (self < 0) continue;
    const Node& node = m.nodes()[i];
    on_node(self, NodeTasks(node, engines.Find(node.engine)));
    producers.clear();
    for (const OutputRef& in : node.inputs) producers.push_back(in.node.value);
    for (NodeId c : node.control_inputs) producers.push_back(c.value);
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    for (int32_t p : producers) {
      const int64_t ps = stream_of(static_cast<size_t>(p));
      if (ps >= 0 && ps != self) on_cross(ps, self);
    }
  }
}

}  // namespace

StreamNeed EstimateStreamNeed(const Plan& plan, int64_t task_limit) {
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  StreamNeed need;
  need.attached = static_cast<int64_t>(plan.streams.attached.size());
  // Main streams in use (ids may have holes while streams are being merged),
  // numbered in id order; every node's number in one compact array, so that
  // the producers' streams below are read there and not from their (scattered)
  // node structs.
  std::vector<int32_t> own(n, -1);
  int64_t max_id = -1;
  for (size_t i = 0; i < n; ++i) {
    if (i + kNodePrefetch < n) __builtin_prefetch(&m.nodes()[i + kNodePrefetch].stream_id);
    const int64_t s = m.nodes()[i].stream_id;
    max_id = std::max(max_id, s);
    if (s >= 0) own[i] = static_cast<int32_t>(std::min<int64_t>(s, INT32_MAX));
  }
  std::vector<int64_t> used;  // the ids in use, ascending
  if (max_id >= 0 && max_id <= 4 * static_cast<int64_t>(n) + 1024) {
    std::vector<int32_t> dense(static_cast<size_t>(max_id) + 1, -1);
    for (int32_t s : own) {
      if (s >= 0) dense[s] = 0;
    }
    for (int64_t s = 0; s <= max_id; ++s) {
      if (dense[s] < 0) continue;
      dense[s] = static_cast<int32_t>(used.size());
      used.push_back(s);
    }
    for (int32_t& s : own) {
      if (s >= 0) s = dense[s];
    }
  } else if (max_id >= 0) {  // sparse ids (never from the passes)
    for (size_t i = 0; i < n; ++i) {
      if (m.nodes()[i].stream_id >= 0) used.push_back(m.nodes()[i].stream_id);
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (size_t i = 0; i < n; ++i) {
      const int64_t s = m.nodes()[i].stream_id;
      if (s >= 0)
        own[i] = static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), s) - used.begin());
    }
  }
  need.main = used.empty() ? plan.streams.logical : static_cast<int64_t>(used.size());
  if (task_limit <= 0 || used.empty()) return need;
  std::vector<int64_t> tasks(used.size(), 0);
  WalkStreamTasks(
      m, [&](size_t i) -> int64_t { return own[i]; },
      [&](int64_t self, int64_t t) { tasks[self] = SaturatingAdd(tasks[self], t); },
      [&](int64_t producer, int64_t consumer) {
        tasks[producer] = SaturatingAdd(tasks[producer], 1);
        tasks[consumer] = SaturatingAdd(tasks[consumer], 2);
      });
  const int64_t cap = SplitCap(task_limit);
  for (int64_t t : tasks) {
    if (t == INT64_MAX) continue;  // overflowed: physical-stream-split names the node
    need.split_extra = SaturatingAdd(need.split_extra, ExtraPieces(t, cap));
  }
  return need;
}

StreamNeedTracker::StreamNeedTracker(const Plan& plan, int64_t task_limit) {
  need_ = EstimateStreamNeed(plan, task_limit);
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  int64_t max_id = -1;
  for (const Node& node : m.nodes()) max_id = std::max(max_id, node.stream_id);
  // The ids EstimateStreamNeed counts densely (it numbers others apart).
  if (max_id < 0 || max_id > 4 * static_cast<int64_t>(n) + 1024) {
    exact_ = false;
    return;
  }
  // The merger's ids go up to the logical count (a stream may have no node).
  const size_t streams =
      static_cast<size_t>(std::max(
          max_id,
          std::min<int64_t>(plan.streams.logical, 4 * static_cast<int64_t>(n) + 1024) - 1)) +
      1;
  tasks_.assign(streams, 0);
  nodes_.assign(streams, 0);
  out_.assign(streams, {});
  in_.assign(streams, {});
  cap_ = task_limit > 0 ? SplitCap(task_limit) : 0;
  for (const Node& node : m.nodes()) {
    if (node.stream_id >= 0) ++nodes_[node.stream_id];
  }
  if (cap_ > 0) {
    WalkStreamTasks(
        m, [&](size_t i) { return m.nodes()[i].stream_id; },
        [&](int64_t self, int64_t t) { tasks_[self] = SaturatingAdd(tasks_[self], t); },
        [&](int64_t producer, int64_t consumer) {
          tasks_[producer] = SaturatingAdd(tasks_[producer], 1);
          tasks_[consumer] = SaturatingAdd(tasks_[consumer], 2);
          ++out_[producer][static_cast<int32_t>(consumer)];
          ++in_[consumer][static_cast<int32_t>(producer)];
        });
  }
  for (int64_t t : tasks_) exact_ &= t < INT64_MAX / 4;
  exact_ &= need_.split_extra < INT64_MAX / 4;
}

int64_t StreamNeedTracker::Extra(int64_t t) const { return cap_ == 0 ? 0 : ExtraPieces(t, cap_); }

void StreamNeedTracker::Merge(int32_t into, int32_t from) {
  if (!exact_) return;
  const size_t streams = tasks_.size();
  if (into < 0 || from < 0 || static_cast<size_t>(into) >= streams ||
      static_cast<size_t>(from) >= streams || into == from) {
    exact_ = false;
    return;
  }
  if (nodes_[into] > 0 && nodes_[from] > 0) --need_.main;
  need_.split_extra -= Extra(tasks_[into]) + Extra(tasks_[from]);
  // Pairs between the two lose their record (1) and wait (2) tasks.
  auto pairs = [](const std::map<int32_t, int64_t>& m, int32_t x) {
    auto it = m.find(x);
    return it == m.end() ? int64_t{0} : it->second;
  };
  const int64_t between = pairs(out_[into], from) + pairs(out_[from], into);
  tasks_[into] += tasks_[from] - 3 * between;
  tasks_[from] = 0;
  nodes_[into] += nodes_[from];
  nodes_[from] = 0;
  out_[into].erase(from);
  in_[into].erase(from);
  for (const auto& [x, count] : out_[from]) {
    if (x == into) continue;
    out_[into][x] += count;
    in_[x].erase(from);
    in_[x][into] += count;
  }
  for (const auto& [x, count] : in_[from]) {
    if (x == into) continue;
    in_[into][x] += count;
    out_[x].erase(from);
    out_[x][into] += count;
  }
  out_[from].clear();
  in_[from].clear();
  need_.split_extra += Extra(tasks_[into]);
  exact_ = tasks_[into] < INT64_MAX / 4;
}

}  // namespace stream

absl::StatusOr<bool> StreamBudget::Run(Plan& plan, PassContext& ctx) {
  using namespace stream;  // NOLINT
  const StreamBudgetOptions options = ReadStreamBudgetOptions(ctx.options);
  const int64_t budget = options.max_streams;
  const int64_t limit = SplitLimit(plan, options);
  StreamNeed need = EstimateStreamNeed(plan, limit);
  const StreamNeed before = need;
  int64_t merges = 0;
  if (need.total() > budget && plan.streams.logical > 1) {
    const std::vector<StreamClass> cls = Classify(plan);
    Merger merger(plan, ctx.log, cls);
    // j merges leave main − j main streams and at least no split pieces:
    // the need stays above the budget for the first need − budget −
    // split_extra of them, which are made before the need is estimated
    // again — the same merges as estimating after each, without an
    // O(nodes) estimate per merge.
    // The tracker says when the need fits, so the estimate runs once per
    // batch and the batches stop at the first merge after which it fits.
    StreamNeedTracker tracker(plan, limit);
    bool mergeable = true;
    while (need.total() > budget && mergeable) {
      const int64_t sure = need.total() - budget - need.split_extra;
      for (int64_t todo = std::max<int64_t>(sure, 1);
           mergeable && (todo > 0 || (tracker.exact() && tracker.need().total() > budget));
           --todo) {
        const auto merged = merger.MergeOnce();
        mergeable = merged.has_value();
        if (merged) tracker.Merge(merged->first, merged->second);
      }
      merger.WriteMerges();
      need = EstimateStreamNeed(plan, limit);
    }
    merges = merger.merges();
    if (merges > 0) {
      Renumber(plan);
      // The auto mode's figures described the assignment before the merges;
      // both are now this pass's, from one model (the mode's own estimate
      // and the merge deltas come from different ones, and mixing them put
      // the estimate under the bound).
      if (plan.streams.estimated_makespan > 0) {
        plan.streams.estimated_makespan = merger.Makespan();
        plan.streams.makespan_lower_bound = merger.LowerBound();
      }
      // Attached streams come after the main ones: assign them again.
      NPUPLAN_RETURN_IF_ERROR(AssignAttachedStreamPass().Run(plan, ctx).status());
      need = EstimateStreamNeed(plan, limit);
    }
  }
  ctx.log.Record(kName, "StreamBudget", "", Field("budget", budget),
                 Field("needed", before.total()), Field("main", need.main),
                 Field("attached", need.attached), Field("split_extra", need.split_extra),
                 Field("merges", merges));
  ctx.stats.Set(kName, "stream_budget", budget);
  ctx.stats.Set(kName, "streams_merged", merges);
  ctx.stats.Set(kName, "streams_needed", need.total());
  if (need.total() > budget) {
    std::vector<StreamClass> cls = Classify(plan);
    std::map<std::string, int64_t> fixed;  // by what fixes them
    std::set<std::string> classes;
    for (const StreamClass& c : cls) {
      if (c.key.empty()) {
        ++fixed[c.why.substr(0, c.why.find(" '"))];
      } else {
        classes.insert(c.key);
      }
    }
    std::string forced = StrCat(need.main, " main streams that may not merge further (");
    if (!classes.empty()) {
      forced += StrCat("one per class: ",
                       StrJoin(std::vector<std::string>(classes.begin(), classes.end()), ", "));
    }
    for (const auto& [why, count] : fixed) {
      forced += StrCat(classes.empty() && why == fixed.begin()->first ? "" : "; ", count,
                       " fixed by a ", why);
    }
    forced += ")";
    if (need.attached > 0) forced += StrCat(", ", need.attached, " attached streams");
    if (need.split_extra > 0) {
      forced += StrCat(", ", need.split_extra,
                       " more pieces of streams the physical split divides (at most ", limit - 27,
                       " tasks each: npuplan.device.maxTasksPerStream)");
    }
    return absl::ResourceExhaustedError(
        StrCat("[", kName, "] the plan needs at least ", need.total(),
               " device streams but the budget is ", budget,
               " (npuplan.maxStreams / npuplan.device.maxStreams): ", forced));
  }
  return merges > 0;
}

}  // namespace npuplan
