// AssignByDependencyPass, in three steps (ge-reference §2.3):
//   1. in partition (topological) order, reuse a producer's stream or take a
//      new per-engine temporary id;
//   2. UpdateAssignedSubgraphs: relocate temporary ids into engine blocks in
//      lexicographic engine-name order (std::map), the parent's stream
//      replacing the first id of a static function subgraph;
//   3. UpdateReusedSubgraphs: borrowers copy their owner's final id.
#include "npuplan/stream/assign_by_dependency_pass.h"

#include <algorithm>
#include <map>

namespace npuplan::stream {
namespace {

constexpr int64_t kCost10 = 10;  // GetTopPrioritySubgraph's start value

// CouldReuse(sg, P); `rule` names the rule that decided (logs).
// `same_engine_consumers[P]`: P's consumers that have P's engine (rule 4
// asks it of every consumer: one count per producer keeps a wide fan-out
// linear).
bool CouldReuse(GraphState& gs, AssignContext& ctx, const std::vector<int32_t>& same_engine_consumers, int32_t s,
                int32_t p, const char*& rule) {
  StreamSubgraph& sg = gs.subgraphs[s];
  const StreamSubgraph& pred = gs.subgraphs[p];
  // 1. Same scheduler only.
  if (sg.conf != pred.conf && sg.conf->scheduler != pred.conf->scheduler) return false;
  // 2. Independent or labelled streams are never shared by dependency.
  if (pred.conf->independent || !pred.info->stream_label.empty()) return false;
  // 3. Force attach: only the first candidate that gets here benefits.
  if (!sg.visited_by_reuse) {
    sg.visited_by_reuse = true;
    if (sg.force_attach) {
      rule = "force-attach";
      return true;
    }
  }
  // 4. SubGraphCouldReuse: a same-engine sibling keeps P's stream for itself.
  //    (s is one of P's consumers, listed once.)
  if (!ctx.stream_options.memory_priority &&
      same_engine_consumers[p] > (sg.engine_id == pred.engine_id ? 1 : 0))
    return false;
  // 5. Same engine, or an attaching engine.
  if (sg.engine_id == pred.engine_id) {
    rule = "same-engine";
    return true;
  }
  if (sg.conf->attach) {
    rule = "attach";
    return true;
  }
  // 6. P borrowed its stream from my engine.
  if (pred.reused_subgraph >= 0 && gs.subgraphs[pred.reused_subgraph].engine_id == sg.engine_id) {
    rule = "borrowed-from-my-engine";
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> AssignByDependencyPass::Run(GraphState& gs, AssignContext& ctx) {
  auto& sgs = gs.subgraphs;
  // Per engine (GraphState::engines index): next temporary id and number of
  // temporary ids (0 = the engine got none).
  std::vector<int64_t> next_temp(gs.engines.size(), 0), count(gs.engines.size(), 0);
  std::vector<int32_t> assigned;                    // subgraphs with a new temporary id
  std::vector<int64_t> temp(sgs.size(), -1);
  std::vector<std::pair<int32_t, int32_t>> reused;  // (subgraph, owner)
  int64_t reusing = 0;
  auto assign_new = [&](int32_t s) {
    const int32_t e = sgs[s].engine_id;
    int64_t id = next_temp[e];
    if (id >= sgs[s].max_parallel_num) id = 0;  // round-robin wrap-around
    next_temp[e] = id + 1;
    count[e] = std::max(count[e], id + 1);
    sgs[s].stream_id = temp[s] = id;
    assigned.push_back(s);
    ctx.log.Record(kName, "StreamNew", "", Field("subgraph", sgs[s].info->name()), Field("engine", sgs[s].info->engine),
                   Field("temp", id));
    return id;
  };

  std::vector<int32_t> same_engine_consumers(sgs.size(), 0);
  for (int32_t p = 0; p < static_cast<int32_t>(sgs.size()); ++p) {
    for (int32_t c : sgs[p].info->consumers) same_engine_consumers[p] += sgs[c].engine_id == sgs[p].engine_id;
  }

  // 1. Reuse or new, in partition order.
  bool changed = false;
  for (int32_t s = 0; s < static_cast<int32_t>(sgs.size()); ++s) {
    if (sgs[s].stream_id != -1) continue;  // label / independent already decided
    changed = true;
    int32_t best = -1;
    int64_t best_cost = kCost10;
    const char* best_rule = "";
    for (int32_t p : sgs[s].info->producers) {
      const char* rule = "";
      if (!CouldReuse(gs, ctx, same_engine_consumers, s, p, rule)) continue;
      // GetTopPrioritySubgraph starts from the first candidate (best cost
      // still 10), so a lone reusable producer of cost 10 is reused too.
      if (best < 0) {
        best = p;
        best_rule = rule;
      }
      if (sgs[p].conf->compute_cost < best_cost) {
        best = p;
        best_cost = sgs[p].conf->compute_cost;
        best_rule = rule;
      }
    }
    if (best < 0) {
      assign_new(s);
      continue;
    }
    sgs[s].stream_id = sgs[best].stream_id != -1 ? sgs[best].stream_id : assign_new(best);
    const int32_t owner = sgs[best].reused_subgraph >= 0 ? sgs[best].reused_subgraph : best;
    sgs[s].reused_subgraph = owner;
    reused.emplace_back(s, owner);
    ctx.log.Record(kName, "StreamReused", "", Field("subgraph", sgs[s].info->name()), Field("from", sgs[best].info->name()),
                   Field("owner", sgs[owner].info->name()), Field("rule", best_rule));
    ++reusing;
  }
  if (reusing > 0) ctx.stats.Add(kName, "subgraphs_reusing", reusing);

  // 2. UpdateAssignedSubgraphs: engine blocks in engine-name order.
  std::vector<int32_t> blocks;  // engines with temporary ids, in byte order of their names
  for (int32_t e = 0; e < static_cast<int32_t>(count.size()); ++e) {
    if (count[e] > 0) blocks.push_back(e);
  }
  std::sort(blocks.begin(), blocks.end(), [&](int32_t a, int32_t b) { return gs.engines[a] < gs.engines[b]; });
  int64_t to_be_updated = -1;
  if (gs.default_stream >= 0 && !blocks.empty()) {
    to_be_updated = --ctx.next_stream;
  }
  std::vector<int64_t> start(count.size(), 0);
  for (int32_t e : blocks) {
    start[e] = ctx.next_stream;
    ctx.log.Record(kName, "EngineBlock", "", Field("engine", gs.engines[e]), Field("start", ctx.next_stream),
                   Field("count", count[e]));
    ctx.next_stream += count[e];
  }
  for (int32_t s : assigned) {
    int64_t id = temp[s] + start[sgs[s].engine_id];
    if (id == to_be_updated) {
      id = gs.default_stream;
      ctx.log.Record(kName, "ParentStreamReused", "", Field("subgraph", sgs[s].info->name()), Field("stream", id));
    }
    sgs[s].stream_id = id;
  }
  // 3. UpdateReusedSubgraphs.
  for (const auto& [s, owner] : reused) sgs[s].stream_id = sgs[owner].stream_id;
  return changed;
}

}  // namespace npuplan::stream
