#include "npuplan/sim/control_flow.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "npuplan/support/echo.h"
#include "npuplan/support/split_mix.h"
#include "npuplan/support/str_util.h"

namespace npuplan::sim {

int64_t ControlFlow::Pow(size_t d) const {
  int64_t p = 1;
  for (size_t i = 0; i < d; ++i) p *= options.loop_iterations;
  return p;
}

std::vector<double> NodeWork(const Plan& plan, const CostModelOptions& cost, double launch_overhead_us) {
  const std::vector<double> c = NodeCosts(plan, cost);
  const std::vector<int64_t> t = NodeTaskCounts(plan);
  std::vector<double> w(plan.model.num_nodes(), 0.0);
  for (size_t i = 0; i < w.size(); ++i) {
    if (t[i] > 0) w[i] = c[i] + static_cast<double>(t[i]) * launch_overhead_us;
  }
  return w;
}

absl::StatusOr<ControlFlow> ResolveControlFlow(const Plan& plan, const ControlFlowOptions& options,
                                               const std::vector<double>& node_work) {
  if (options.loop_iterations < 1) {
    return absl::InvalidArgumentError(StrCat("loop iterations must be >= 1, not ", options.loop_iterations));
  }
  const Model& m = plan.model;
  const size_t n = m.num_nodes();
  ControlFlow cf;
  cf.options = options;
  const int64_t k = options.loop_iterations;
  const std::vector<NodeId> order = m.ExecutionOrder();

  // 1. Which node enters each graph (the first to list it, as ExecutionOrder
  // does), and the loops around every graph.
  std::vector<NodeId> enterer(m.num_graphs());
  std::vector<std::vector<GraphId>> children(n);  // per node: the graphs it enters, subgraph order
  cf.loop_chain.assign(m.num_graphs(), {});
  for (NodeId id : order) {
    const Node& node = m.node(id);
    for (GraphId g : node.subgraphs) {
      if (!g.valid() || g.index() >= m.num_graphs() || g == kRootGraph || enterer[g.index()].valid()) continue;
      enterer[g.index()] = id;
      children[id.index()].push_back(g);
      cf.loop_chain[g.index()] = cf.loop_chain[node.graph.index()];
      if (IsLoopNode(node)) cf.loop_chain[g.index()].push_back(id);
    }
  }
  auto branch_index = [&](NodeId owner, GraphId g) {
    const auto& subs = m.node(owner).subgraphs;
    return static_cast<int32_t>(std::find(subs.begin(), subs.end(), g) - subs.begin());
  };

  // 2. Work of every graph, bottom-up, and the branch each If/Case takes.
  std::vector<double> graph_work(m.num_graphs(), 0.0);
  std::vector<GraphId> chosen(n);
  std::map<int32_t, BranchChoice> choice_of;  // If/Case owners only
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId id = *it;
    const Node& node = m.node(id);
    double total = id.index() < node_work.size() ? node_work[id.index()] : 0.0;
    const auto& kids = children[id.index()];
    if (!kids.empty() && IsBranchNode(node)) {
      BranchChoice& c = choice_of[id.value];
      c.node = id;
      c.work.assign(node.subgraphs.size(), 0.0);
      for (GraphId g : kids) c.work[branch_index(id, g)] = graph_work[g.index()];
      int32_t want = options.branch;
      if (want == ControlFlowOptions::kDrawnBranch) {
        // Stable for a plan and a seed.
        const uint64_t z = SplitMix64(options.branch_seed +
                                      0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(id.value));
        want = static_cast<int32_t>(z % std::max<uint64_t>(node.subgraphs.size(), 1));
      } else if (want == ControlFlowOptions::kLongestBranch) {
        want = 0;
        for (int32_t b = 1; b < static_cast<int32_t>(c.work.size()); ++b) {
          if (c.work[b] > c.work[want]) want = b;
        }
      } else if (want >= static_cast<int32_t>(node.subgraphs.size())) {
        want = static_cast<int32_t>(node.subgraphs.size()) - 1;
        c.clamped = true;
      }
      c.chosen = want;
      const GraphId g = node.subgraphs[want];
      if (g.valid() && g.index() < m.num_graphs() && enterer[g.index()] == id) {
        chosen[id.index()] = g;
        total += graph_work[g.index()];
      }
    } else {
      double sub = 0;
      for (GraphId g : kids) sub += graph_work[g.index()];
      total += IsLoopNode(node) ? sub * static_cast<double>(k) : sub;
    }
    graph_work[node.graph.index()] += total;
  }

  // 3. Runs, top-down, bounded.
  cf.runs.assign(n, 0);
  int64_t total_runs = 0;
  for (NodeId id : order) {
    const Node& node = m.node(id);
    int64_t r = 1;
    if (node.graph != kRootGraph) {
      const NodeId owner = enterer[node.graph.index()];
      r = owner.valid() ? cf.runs[owner.index()] : 0;
      if (owner.valid() && IsBranchNode(m.node(owner)) && chosen[owner.index()] != node.graph) r = 0;
      if (owner.valid() && IsLoopNode(m.node(owner)) && __builtin_mul_overflow(r, k, &r)) r = INT64_MAX;
    }
    cf.runs[id.index()] = r;
    if (__builtin_add_overflow(total_runs, r, &total_runs) || total_runs > options.max_runs) {
      return absl::InvalidArgumentError(StrCat("with ", k, " loop iterations the plan runs more than ",
                                               options.max_runs, " node instances (nested loops multiply); "
                                               "choose fewer iterations"));
    }
    if (r > 0 && IsBranchNode(node) && !children[id.index()].empty()) cf.branches.push_back(choice_of.at(id.value));
    if (r > 0 && IsLoopNode(node) && !children[id.index()].empty()) cf.loops.push_back(id);
  }

  // 4. The unrolled order: a node, then the subgraphs it runs.
  cf.order.reserve(static_cast<size_t>(total_runs));
  std::vector<int32_t> count(n, 0);
  std::vector<std::pair<GraphId, size_t>> stack = {{kRootGraph, 0}};
  std::vector<GraphId> push;
  while (!stack.empty()) {
    auto& [g, pos] = stack.back();
    const std::vector<NodeId>& list = m.graph(g).nodes;
    if (pos == list.size()) {
      stack.pop_back();
      continue;
    }
    const NodeId id = list[pos++];
    if (cf.runs[id.index()] == 0) continue;
    cf.order.push_back({id, count[id.index()]++});
    const Node& node = m.node(id);
    push.clear();
    if (IsBranchNode(node) && !children[id.index()].empty()) {
      if (chosen[id.index()].valid()) push.push_back(chosen[id.index()]);
    } else {
      const int64_t reps = IsLoopNode(node) ? k : 1;
      for (int64_t i = 0; i < reps; ++i) push.insert(push.end(), children[id.index()].begin(), children[id.index()].end());
    }
    for (auto it = push.rbegin(); it != push.rend(); ++it) stack.emplace_back(*it, 0);
  }
  return cf;
}

std::vector<std::string> DescribeControlFlow(const Plan& plan, const ControlFlow& cf, size_t max_lines) {
  std::vector<std::string> out;
  const Model& m = plan.model;
  if (cf.branches.empty() && cf.loops.empty()) return out;
  const int32_t b = cf.options.branch;
  const std::string rule = b == ControlFlowOptions::kLongestBranch
                               ? "the longer branch, the worst case; --branch then|else|N picks one"
                           : b == ControlFlowOptions::kDrawnBranch
                               ? StrCat("drawn from --branch-seed ", cf.options.branch_seed)
                               : StrCat("--branch ", BranchFlagName(b));
  std::string head = "control flow:";
  if (!cf.branches.empty()) head += StrCat(" ", cf.branches.size(), " If/Case ran one branch each (", rule, ")");
  if (!cf.loops.empty()) {
    head += StrCat(cf.branches.empty() ? " " : "; ", cf.loops.size(), " loop(s) ran their body ", cf.iterations(),
                   cf.iterations() == 1 ? " time" : " times", " (--loop-iterations ", cf.iterations(), ")");
  }
  out.push_back(head);
  auto name_of = [&](const Node& node, int32_t i) {
    const bool is_if = node.type.find("If") != std::string::npos;
    if (is_if && i == 0) return std::string("then");
    if (is_if && i == 1) return std::string("else");
    return StrCat("branch ", i);
  };
  size_t shown = 0;
  for (const BranchChoice& c : cf.branches) {
    if (shown++ == max_lines) {
      out.push_back(StrCat("  ... and ", cf.branches.size() - max_lines, " more"));
      break;
    }
    const Node& node = m.node(c.node);
    // The branch by its index (then = 0, else = 1) and its subgraph's name.
    auto branch = [&](size_t i) {
      const GraphId g = i < node.subgraphs.size() ? node.subgraphs[i] : GraphId();
      const std::string graph =
          g.valid() && g.index() < m.num_graphs() ? EchoName(m.graph(g).name) : std::string("?");
      return fmt::format("{} '{}', {:.3f} us", name_of(node, static_cast<int32_t>(i)), graph, c.work[i]);
    };
    std::vector<std::string> others;
    for (size_t i = 0; i < c.work.size(); ++i) {
      if (static_cast<int32_t>(i) != c.chosen) others.push_back(branch(i));
    }
    out.push_back(fmt::format("  {} '{}': runs {}{}{}{}", EchoName(node.type), EchoName(node.name),
                              branch(c.chosen),
                              others.empty() ? "" : "; not run: ", StrJoin(others, "; "),
                              c.clamped ? " [index beyond the last branch: the last runs]" : ""));
  }
  return out;
}

absl::StatusOr<int32_t> ParseBranchFlag(const std::string& text) {
  if (text == "then") return 0;
  if (text == "else") return 1;
  if (text == "longest") return ControlFlowOptions::kLongestBranch;
  int32_t v = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 0) {
    return absl::InvalidArgumentError(
        StrCat("--branch: expected then, else, longest or a branch index >= 0, not '",
               EchoName(text), "'"));
  }
  return v;
}

std::string BranchFlagName(int32_t branch) {
  if (branch == ControlFlowOptions::kLongestBranch) return "longest";
  if (branch == ControlFlowOptions::kDrawnBranch) return "drawn";
  if (branch == 0) return "then";
  if (branch == 1) return "else";
  return StrCat(branch);
}

}  // namespace npuplan::sim
