// Property test: thousands of small random DAGs are partitioned and checked
// against invariants and against a brute-force oracle — an independent
// re-implementation of GE's merge order with explicit sets and full
// reachability (no rank windows, no union-find, no lazy edge lists).
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::partition {
namespace {

using ::npuplan::testing::IsOk;

// A random root graph: Data and Const sources, ops with 1–3 data inputs and
// occasional control inputs, some forced unknown / HostCpu / stage nodes, a
// NetOutput reading every sink.
Model RandomGraph(std::mt19937& rng, int n_ops, double p_unknown, bool with_groups) {
  Model m;
  m.set_name("r");
  auto uni = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](int hi) { return std::uniform_int_distribution<int>(0, hi - 1)(rng); };
  std::vector<NodeId> ids;
  auto add = [&](Node n) {
    n.engine = m.engine_table.EngineForOp(n.type);
    if (n.type != "NetOutput") n.outputs.push_back(TensorDesc{{4}, "float32"});
    ids.push_back(m.AddNode(kRootGraph, std::move(n)));
  };
  int n_data = 1 + pick(2), n_const = pick(3);
  auto named = [](std::string name, std::string type) {
    Node n;
    n.name = std::move(name);
    n.type = std::move(type);
    return n;
  };
  for (int i = 0; i < n_data; ++i) add(named(StrCat("x", i), "Data"));
  for (int i = 0; i < n_const; ++i) add(named(StrCat("c", i), "Const"));
  std::vector<int> consumers(n_data + n_const + n_ops, 0);
  for (int i = 0; i < n_ops; ++i) {
    Node n;
    n.name = StrCat("n", i);
    n.type = "Add";
    if (uni(0.04)) n.type = "HostCpuOp";
    if (uni(0.03)) {
      n.type = "PartitionedCall";
      n.attrs["_stage_level"] = int64_t{1};
    }
    bool ctrl_const = uni(0.03);
    if (ctrl_const) n.type = "Const";
    if (n.type != "Const") {
      int fanin = 1 + pick(3);
      for (int k = 0; k < fanin; ++k) {
        int p = pick(static_cast<int>(ids.size()));
        n.inputs.push_back(OutputRef{ids[p], 0});
        ++consumers[p];
      }
    }
    if (uni(0.15) || ctrl_const) {
      int p = pick(static_cast<int>(ids.size()));
      n.control_inputs.push_back(ids[p]);
      ++consumers[p];
    }
    if (uni(p_unknown)) n.attrs["_force_unknown_shape"] = true;
    add(std::move(n));
  }
  // Sometimes one or two _control_flow_group groups of 2–3 plain ops (some
  // cannot be merged without a cycle: the partition must then refuse).
  if (with_groups) {
    std::vector<NodeId> ops;
    for (NodeId id : ids) {
      if (m.node(id).type == "Add") ops.push_back(id);
    }
    const int n_groups = ops.size() >= 2 ? 1 + pick(2) : 0;
    for (int g = 0; g < n_groups; ++g) {
      const int k = 2 + pick(2);
      for (int j = 0; j < k; ++j) {
        Node& member = m.node(ops[pick(static_cast<int>(ops.size()))]);
        if (!HasAttr(member.attrs, "_control_flow_group")) member.attrs["_control_flow_group"] = int64_t{g};
      }
    }
  }
  Node out;
  out.name = "out";
  out.type = "NetOutput";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (consumers[i] == 0 && m.node(ids[i]).type != "Data") out.inputs.push_back(OutputRef{ids[i], 0});
  }
  if (out.inputs.empty()) out.inputs.push_back(OutputRef{ids.back(), 0});
  add(std::move(out));
  RenumberTopoIds(m);
  return m;
}

// ---------------------------------------------------------------------------
// The brute-force oracle.
class Oracle {
 public:
  enum Mode { kNormal, kKnownFirst, kStable };
  Oracle(const Model& m, const MarkResult& marks, int64_t limit, Mode mode) : m_(m), limit_(limit) {
    const Graph& g = m.root();
    n_ = static_cast<int>(g.nodes.size());
    succ_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      const Node& node = m.node(g.nodes[i]);
      std::string t;
      if ((node.type == "Data") && node.inputs.empty()) {
        t = "data";
      } else if (node.type == "Const" && node.inputs.empty() && node.control_inputs.empty()) {
        t = "input";
      } else if (node.type == "NetOutput") {
        t = "netoutput";
      } else if (node.type == "PartitionedCall" && HasAttr(node.attrs, "_stage_level")) {
        t = "stage";
      } else {
        t = marks.IsUnknown(g.nodes[i]) ? "unknown" : "known";
      }
      clusters_.push_back(C{{i}, t, i, i, true});
      of_.push_back(i);
      for (const OutputRef& in : node.inputs) succ_[in.node.index()].insert(i);
      for (NodeId c : node.control_inputs) succ_[c.index()].insert(i);
      if (auto g = GetIntAttr(node.attrs, "_control_flow_group")) groups_[*g].push_back(i);
    }
    if (!Groups()) {
      error_ = true;
      return;
    }
    if (mode == kStable) {
      Stable();
      Inputs();
    } else if (mode == kKnownFirst) {
      TryMergeAll(Topo(), "known");
      Demote();
      Inputs();
      TryMergeAll(Topo(), "unknown");
    } else {
      Paths(Topo());
      TryMergeAll(Topo(), "known");
      Inputs();
      Demote();
      TryMergeAll(Topo(), "unknown");
    }
  }

  // True when the partition must fail (a group cannot be merged).
  bool error() const { return error_; }
  // (kind, sorted member names) of every framed cluster.
  std::set<std::pair<std::string, std::vector<std::string>>> Frames() const {
    std::set<std::pair<std::string, std::vector<std::string>>> out;
    for (const C& c : clusters_) {
      if (!c.alive || (c.type != "known" && c.type != "unknown" && c.type != "input")) continue;
      std::vector<std::string> names;
      for (int v : c.nodes) names.push_back(m_.node(m_.root().nodes[v]).name);
      std::sort(names.begin(), names.end());
      out.emplace(c.type, names);
    }
    return out;
  }

 private:
  struct C {
    std::set<int> nodes;
    std::string type;
    int lo, hi;
    bool alive;
    int first() const { return *nodes.begin(); }
  };
  std::set<int> Outs(int c) const {
    std::set<int> o;
    for (int v : clusters_[c].nodes)
      for (int w : succ_[v])
        if (of_[w] != c) o.insert(of_[w]);
    return o;
  }
  std::set<int> Ins(int c) const {
    std::set<int> in;
    for (size_t d = 0; d < clusters_.size(); ++d) {
      if (clusters_[d].alive && static_cast<int>(d) != c && Outs(d).count(c)) in.insert(d);
    }
    return in;
  }
  bool Reach(int a, int b) const {  // path a → … → b of length >= 1
    std::set<int> seen;
    std::vector<int> st = {a};
    while (!st.empty()) {
      int x = st.back();
      st.pop_back();
      for (int y : Outs(x)) {
        if (y == b) return true;
        if (seen.insert(y).second) st.push_back(y);
      }
    }
    return false;
  }
  void Merge(int into, int other) {
    C& a = clusters_[into];
    C& b = clusters_[other];
    for (int v : b.nodes) {
      a.nodes.insert(v);
      of_[v] = into;
    }
    if (b.type == "unknown") a.type = "unknown";
    a.lo = std::min(a.lo, b.lo);
    a.hi = std::max(a.hi, b.hi);
    b.alive = false;
    b.nodes.clear();
  }
  std::vector<int> Topo() {
    std::vector<int> order;
    std::map<int, int> pending;
    std::set<std::pair<int, int>> ready;
    for (size_t c = 0; c < clusters_.size(); ++c) {
      if (!clusters_[c].alive) continue;
      pending[c] = static_cast<int>(Ins(c).size());
      if (pending[c] == 0) ready.emplace(clusters_[c].first(), c);
    }
    while (!ready.empty()) {
      int c = ready.begin()->second;
      ready.erase(ready.begin());
      clusters_[c].lo = clusters_[c].hi = static_cast<int>(order.size());
      order.push_back(c);
      for (int y : Outs(c))
        if (--pending[y] == 0) ready.emplace(clusters_[y].first(), y);
    }
    return order;
  }
  std::vector<int> SortedIns(int c) const {
    std::set<int> s = Ins(c);
    std::vector<int> v(s.begin(), s.end());
    std::sort(v.begin(), v.end(), [&](int a, int b) {
      return clusters_[a].hi != clusters_[b].hi ? clusters_[a].hi < clusters_[b].hi
                                                : clusters_[a].first() < clusters_[b].first();
    });
    return v;
  }
  void Paths(const std::vector<int>& order) {
    for (int c : order) {
      if (!clusters_[c].alive || clusters_[c].type != "unknown") continue;
      for (int in0 : SortedIns(c)) {
        if (!clusters_[in0].alive) continue;  // merged into c meanwhile
        const int in = in0;
        if (in == c || clusters_[in].type != "unknown") continue;
        std::vector<int> path = {in};
        bool blocked = false;
        for (size_t x = 0; x < clusters_.size(); ++x) {
          int xi = static_cast<int>(x);
          if (!clusters_[x].alive || xi == c || xi == in) continue;
          if (Reach(in, xi) && Reach(xi, c)) {
            path.push_back(xi);
            if (clusters_[x].type != "known" && clusters_[x].type != "unknown") blocked = true;
          }
        }
        if (blocked) continue;
        for (int p : path) Merge(c, p);
      }
    }
  }
  void TryMergeAll(const std::vector<int>& order, const std::string& type) {
    for (int c : order) {
      if (!clusters_[c].alive || clusters_[c].type != type) continue;
      for (int in : SortedIns(c)) {
        if (!clusters_[in].alive || clusters_[in].type != type) continue;
        bool second = false;
        for (int y : Outs(in)) {
          if (y != c && Reach(y, c)) second = true;
        }
        if (!second) Merge(c, in);
      }
    }
  }
  void Inputs() {
    int first = -1;
    std::vector<int> live;
    for (size_t c = 0; c < clusters_.size(); ++c)
      if (clusters_[c].alive && clusters_[c].type == "input") live.push_back(c);
    std::sort(live.begin(), live.end(), [&](int a, int b) { return clusters_[a].first() < clusters_[b].first(); });
    for (int c : live) {
      if (first < 0) {
        first = c;
      } else {
        Merge(first, c);
      }
    }
  }
  bool Mergeable(int c) const { return clusters_[c].type == "known" || clusters_[c].type == "unknown"; }
  // A path from → x → … → to through some x other than from and to.
  bool Second(int from, int to) const {
    for (int y : Outs(from)) {
      if (y != to && Reach(y, to)) return true;
    }
    return false;
  }
  // _control_flow_group: the last member takes every earlier one (latest
  // first) with every cluster on a path between them; false = refused.
  bool Groups() {
    for (const auto& [g, members] : groups_) {
      const int last = members.back();
      for (auto it = members.rbegin() + 1; it != members.rend(); ++it) {
        const int into = of_[last], from = of_[*it];
        if (into == from) continue;
        if (!Mergeable(into) || !Mergeable(from) || Reach(into, from)) return false;
        std::vector<int> path = {from};
        for (size_t x = 0; x < clusters_.size(); ++x) {
          const int xi = static_cast<int>(x);
          if (!clusters_[x].alive || xi == into || xi == from) continue;
          if (Reach(from, xi) && Reach(xi, into)) {
            if (!Mergeable(xi)) return false;
            path.push_back(xi);
          }
        }
        for (int p : path) Merge(into, p);
      }
    }
    return true;
  }
  // ge.topoSortingMode=3: runs of equal type in node order (docs/partition.md §3).
  void Stable() {
    std::vector<int> runs;
    auto can_merge = [&](int a, int b) { return !Second(a, b) && !Second(b, a); };
    auto finish = [&]() {
      const int r = runs.back();
      if (clusters_[r].type != "known" || static_cast<int64_t>(clusters_[r].nodes.size()) >= limit_) return;
      clusters_[r].type = "unknown";  // a small known run is demoted and joins the unknown run before it
      if (runs.size() >= 2) {
        const int prev = runs[runs.size() - 2];
        if (clusters_[prev].type == "unknown" && can_merge(prev, r)) {
          Merge(prev, r);
          runs.pop_back();
        }
      }
    };
    for (int v = 0; v < n_; ++v) {
      const int c = of_[v];
      if (clusters_[c].first() != v || !Mergeable(c)) continue;
      const std::string t = clusters_[c].type;
      if (!runs.empty() && clusters_[runs.back()].type == t && can_merge(runs.back(), c)) {
        Merge(runs.back(), c);
        continue;
      }
      if (!runs.empty()) finish();
      if (!runs.empty() && clusters_[runs.back()].type == t && can_merge(runs.back(), c)) {
        Merge(runs.back(), c);
        continue;
      }
      runs.push_back(c);
    }
    if (!runs.empty()) finish();
  }
  void Demote() {
    for (C& c : clusters_) {
      if (c.alive && c.type == "known" && static_cast<int64_t>(c.nodes.size()) < limit_) c.type = "unknown";
    }
  }

  const Model& m_;
  int64_t limit_;
  int n_ = 0;
  std::vector<std::set<int>> succ_;
  std::vector<C> clusters_;
  std::vector<int> of_;
  std::map<int64_t, std::vector<int>> groups_;
  bool error_ = false;
};

// Follows Data → call input and call output → NetOutput input back to an
// anchor of the original model (ids below `orig_n`).
OutputRef Resolve(const Model& m, OutputRef r, size_t orig_n) {
  for (int guard = 0; guard < 64 && r.node.index() >= orig_n; ++guard) {
    const Node& n = m.node(r.node);
    if (n.type == "Data") {
      const Node& call = m.node(m.graph(n.graph).parent_node);
      r = call.inputs[*GetIntAttr(n.attrs, "_parent_node_index")];
    } else {
      const Graph& sg = m.graph(n.subgraphs.at(0));
      for (NodeId id : sg.nodes) {
        if (m.node(id).type == "NetOutput" && id.index() >= orig_n) {
          r = m.node(id).inputs.at(r.index);
          break;
        }
      }
    }
  }
  return r;
}

NodeId Representative(const Model& m, NodeId n) {
  GraphId g = m.node(n).graph;
  return g == kRootGraph ? n : m.graph(g).parent_node;
}

// Brute-force reachability on the original model.
std::vector<std::vector<uint8_t>> Closure(const Model& m) {
  const size_t n = m.num_nodes();
  std::vector<std::vector<uint8_t>> r(n, std::vector<uint8_t>(n, 0));
  // DFS from every node (n is small).
  for (size_t s = 0; s < n; ++s) {
    std::vector<size_t> st = {s};
    while (!st.empty()) {
      size_t x = st.back();
      st.pop_back();
      for (const Node& w : m.nodes()) {
        NodeId wid = m.FindNode(w.name);
        bool edge = false;
        for (const OutputRef& in : w.inputs) edge |= in.node.index() == x;
        for (NodeId c : w.control_inputs) edge |= c.index() == x;
        if (edge && !r[s][wid.index()]) {
          r[s][wid.index()] = 1;
          st.push_back(wid.index());
        }
      }
    }
  }
  return r;
}

// NPUPLAN_PROPERTY_ITERATIONS / NPUPLAN_PROPERTY_SEED (environment) run a
// longer or different sweep by hand; the defaults are what ctest runs.
int64_t EnvOr(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

TEST(PartitionPropertyTest, RandomDagsMatchTheOracleAndKeepEveryInvariant) {
  std::mt19937 rng(static_cast<uint32_t>(EnvOr("NPUPLAN_PROPERTY_SEED", 20240611)));
  const int64_t iterations = std::max<int64_t>(3000, EnvOr("NPUPLAN_PROPERTY_ITERATIONS", 3000));
  int partitioned = 0, refused_groups = 0, stable = 0, grouped = 0;
  for (int64_t iter = 0; iter < iterations; ++iter) {
    const int n_ops = 2 + static_cast<int>(rng() % 20);
    const double p_unknown = (rng() % 4) * 0.1;
    const bool with_groups = rng() % 5 == 0;
    Model original = RandomGraph(rng, n_ops, p_unknown, with_groups);
    const int mode_pick = static_cast<int>(rng() % 8);  // 1/4 known-first, 1/4 stable topo
    const Oracle::Mode mode = mode_pick < 2 ? Oracle::kKnownFirst : mode_pick < 4 ? Oracle::kStable : Oracle::kNormal;
    const int64_t limit = static_cast<int64_t>(rng() % 6);
    CompileOptions opts;
    opts.Set("ge.exec.static_model_ops_lower_limit", std::to_string(limit));
    if (mode == Oracle::kKnownFirst) opts.Set("npuplan.partition.mergeKnownFirst", "true");
    if (mode == Oracle::kStable) opts.Set("ge.topoSortingMode", "3");
    SCOPED_TRACE(StrCat("iteration ", iter, " ops=", n_ops, " limit=", limit, " mode=", static_cast<int>(mode),
                        " groups=", with_groups));
    auto marks = ComputeUnknownShapeMarks(original, opts);
    ASSERT_THAT(marks, IsOk());
    auto popts = ReadPartitionOptions(opts);
    ASSERT_THAT(popts, IsOk());
    Model m = original;
    PartitionResult result;
    absl::Status status = PartitionModel(m, *marks, *popts, nullptr, nullptr, result);
    if (marks->trigger_count > 0) {
      Oracle oracle(original, *marks, limit, mode);
      if (oracle.error()) {
        ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
        ASSERT_THAT(std::string(status.message()), ::testing::HasSubstr("_control_flow_group"));
        ++refused_groups;
        continue;
      }
    }
    ASSERT_THAT(status, IsOk());
    ASSERT_THAT(VerifyStructure(m), IsOk());  // acyclic, edges valid, parent indices in range
    if (result.decision != PartitionDecision::kPartitioned) {
      ASSERT_EQ(m.num_nodes(), original.num_nodes());
      continue;
    }
    ++partitioned;
    stable += mode == Oracle::kStable;
    grouped += with_groups;
    const size_t orig_n = original.num_nodes();
    // 1. Every node in exactly one place; framed nodes in exactly one subgraph.
    std::map<std::string, int> seen;
    for (const PartitionSubgraph& sg : result.subgraphs) {
      for (const std::string& name : sg.NodeNames(m)) {
        ++seen[name];
        ASSERT_EQ(m.graph(m.node(m.FindNode(name)).graph).name, sg.name) << name;
      }
    }
    for (size_t i = 0; i < orig_n; ++i) {
      const Node& n = original.nodes()[i];
      const bool stays = m.node(NodeId(i)).graph == kRootGraph;
      ASSERT_EQ(seen.count(n.name) ? seen[n.name] : 0, stays ? 0 : 1) << n.name;
    }
    // 2. Edges preserved across the boundary.
    for (size_t i = 0; i < orig_n; ++i) {
      const Node& before = original.nodes()[i];
      const Node& after = m.nodes()[i];
      ASSERT_EQ(before.inputs.size(), after.inputs.size()) << before.name;
      for (size_t k = 0; k < before.inputs.size(); ++k) {
        ASSERT_EQ(Resolve(m, after.inputs[k], orig_n), before.inputs[k]) << before.name << " input " << k;
      }
      for (NodeId p : before.control_inputs) {
        NodeId id(static_cast<int32_t>(i));
        if (m.node(p).graph == m.node(id).graph) {
          ASSERT_THAT(after.control_inputs, ::testing::Contains(p)) << before.name;
        } else {
          const Node& rv = m.node(Representative(m, id));
          ASSERT_THAT(rv.control_inputs, ::testing::Contains(Representative(m, p))) << before.name;
        }
      }
    }
    // 3. Exactly GE's clusters (brute-force oracle).
    Oracle oracle(original, *marks, limit, mode);
    std::set<std::pair<std::string, std::vector<std::string>>> got;
    for (const PartitionSubgraph& sg : result.subgraphs) {
      std::vector<std::string> names = sg.NodeNames(m);
      std::sort(names.begin(), names.end());
      got.emplace(SubgraphKindName(sg.kind), names);
    }
    ASSERT_EQ(got, oracle.Frames());
    // 4. Every absorbed static node lies on a path between two unknown nodes
    //    (control-flow groups may pull in any node on a path between members).
    if (n_ops <= 12 && !with_groups) {
      auto reach = Closure(original);
      for (const PartitionSubgraph& sg : result.subgraphs) {
        if (sg.kind != SubgraphKind::kUnknown) continue;
        for (const std::string& name : sg.NodeNames(m)) {
          size_t x = original.FindNode(name).index();
          if (marks->IsUnknown(NodeId(x))) continue;
          bool between = false;
          for (size_t u = 0; u < orig_n && !between; ++u) {
            if (!marks->IsUnknown(NodeId(u)) || !reach[u][x]) continue;
            for (size_t w = 0; w < orig_n && !between; ++w) {
              between = marks->IsUnknown(NodeId(w)) && reach[x][w];
            }
          }
          // Otherwise it must have been demoted (a small static cluster).
          if (!between) {
            ASSERT_TRUE(limit > 0) << name;
          }
        }
      }
    }
  }
  EXPECT_GT(partitioned, 1000);
  // Each extension is exercised (counts are fixed by the seed).
  EXPECT_GT(stable, 200);
  EXPECT_GT(grouped, 100);
  EXPECT_GT(refused_groups, 10);
}

}  // namespace
}  // namespace npuplan::partition
