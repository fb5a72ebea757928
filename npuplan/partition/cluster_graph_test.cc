// ClusterGraph::PathClusters against a brute-force reference on random DAGs:
// the clusters on paths other → … → into computed from full reachability
// over the node edges (no windows, no lazy lists), after every merge.
#include "npuplan/partition/cluster_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace npuplan::partition {
namespace {

struct Dag {
  std::vector<std::vector<int32_t>> preds;  // node → producers (all smaller)
};

// Random DAG with a few hubs (many consumers: long edge lists on one side).
Dag RandomDag(std::mt19937& rng, int n) {
  Dag d;
  d.preds.resize(n);
  std::vector<int32_t> hubs;
  for (int v = 1; v < n; ++v) {
    const int fanin = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int k = 0; k < fanin; ++k) {
      int32_t p = std::uniform_int_distribution<int32_t>(std::max(0, v - 12), v - 1)(rng);
      if (!hubs.empty() && rng() % 3 == 0) p = hubs[rng() % hubs.size()];
      d.preds[v].push_back(p);
    }
    if (rng() % 25 == 0) hubs.push_back(v);
  }
  return d;
}

ClusterGraph Build(const Dag& d, std::mt19937& rng) {
  const int n = static_cast<int>(d.preds.size());
  std::vector<ClusterType> types(n);
  for (auto& t : types) t = rng() % 3 == 0 ? ClusterType::kUnknown : ClusterType::kKnown;
  BigVector<uint32_t> offs(n + 1, 0);
  BigVector<int32_t> preds;
  for (int v = 0; v < n; ++v) {
    for (int32_t p : d.preds[v]) preds.push_back(p);
    offs[v + 1] = static_cast<uint32_t>(preds.size());
  }
  return ClusterGraph(std::move(types), std::move(offs), std::move(preds));
}

// [other] + {x ∉ {other, into} : other →+ x →+ into}, by (min, first).
std::vector<int32_t> ReferencePath(ClusterGraph& cg, const Dag& d, int32_t into, int32_t other) {
  const int n = static_cast<int>(d.preds.size());
  std::vector<std::set<int32_t>> succ(n), pred(n);
  for (int v = 0; v < n; ++v) {
    for (int32_t p : d.preds[v]) {
      const int32_t a = cg.Find(p), b = cg.Find(v);
      if (a == b) continue;
      succ[a].insert(b);
      pred[b].insert(a);
    }
  }
  auto reach = [&](int32_t s, const std::vector<std::set<int32_t>>& adj) {
    std::vector<char> seen(n, 0);
    std::vector<int32_t> stack = {s};
    while (!stack.empty()) {
      const int32_t x = stack.back();
      stack.pop_back();
      for (int32_t y : adj[x]) {
        if (!seen[y]) {
          seen[y] = 1;
          stack.push_back(y);
        }
      }
    }
    return seen;
  };
  const std::vector<char> from_other = reach(other, succ), to_into = reach(into, pred);
  std::vector<int32_t> path = {other};
  for (int32_t x = 0; x < n; ++x) {
    if (x != other && x != into && cg.IsLive(x) && from_other[x] && to_into[x]) path.push_back(x);
  }
  std::sort(path.begin() + 1, path.end(), [&](int32_t a, int32_t b) {
    return cg.min(a) != cg.min(b) ? cg.min(a) < cg.min(b) : cg.first(a) < cg.first(b);
  });
  return path;
}

// Bounded searches, merges in GE's order (MergeClustersUnknownShape): each
// cluster in rank order absorbs the paths from some of its inputs.
TEST(ClusterGraphTest, PathClustersMatchFullReachabilityInRankOrderMerges) {
  std::mt19937 rng(7);
  int64_t checked = 0, nontrivial = 0;
  for (int round = 0; round < 150; ++round) {
    const Dag d = RandomDag(rng, 20 + static_cast<int>(rng() % 200));
    ClusterGraph cg = Build(d, rng);
    for (int pass = 0; pass < 2; ++pass) {
      const ClusterList order = cg.TopoSort();
      for (int32_t c : order) {
        if (!cg.IsLive(c)) continue;
        const auto span = cg.Ins(c);
        const std::vector<int32_t> ins(span.begin(), span.end());
        for (int32_t in : ins) {
          in = cg.Find(in);
          if (in == c) continue;
          const std::vector<int32_t> want = ReferencePath(cg, d, c, in);
          ASSERT_EQ(cg.PathClusters(c, in), want)
              << "round " << round << " into " << c << " from " << in;
          ++checked;
          nontrivial += want.size() > 1;
          if (rng() % 2 == 0) {
            for (int32_t p : want) cg.Merge(c, p);
          }
        }
      }
    }
  }
  EXPECT_GT(nontrivial, 100);  // paths of more than the input itself were compared
  EXPECT_GT(checked, 5000);
}

// Unbounded searches (control-flow groups): any two clusters, merged along
// their paths when no path leads back.
TEST(ClusterGraphTest, PathClustersMatchFullReachabilityUnbounded) {
  std::mt19937 rng(11);
  int64_t nontrivial = 0;
  for (int round = 0; round < 150; ++round) {
    const Dag d = RandomDag(rng, 20 + static_cast<int>(rng() % 200));
    ClusterGraph cg = Build(d, rng);
    cg.set_bounded(false);
    const int n = cg.num_nodes();
    for (int step = 0; step < 40; ++step) {
      const int32_t into = cg.Find(static_cast<int32_t>(rng() % n));
      const int32_t other = cg.Find(static_cast<int32_t>(rng() % n));
      if (into == other || cg.Reaches(into, other)) continue;
      const std::vector<int32_t> want = ReferencePath(cg, d, into, other);
      ASSERT_EQ(cg.PathClusters(into, other), want) << "round " << round << " step " << step;
      nontrivial += want.size() > 1;
      for (int32_t p : want) cg.Merge(into, p);
    }
  }
  EXPECT_GT(nontrivial, 100);
}

}  // namespace
}  // namespace npuplan::partition
