#include "npuplan/kernel/unit_order_search.h"

#include <algorithm>
#include <optional>
#include <random>
#include <tuple>
#include <utility>

#include "npuplan/kernel/allocator.h"
#include "npuplan/kernel/makespan_reorder.h"
#include "npuplan/support/checked_math.h"

namespace npuplan::kernel {

std::vector<int> UnitOrderOf(const UnitPartition& p, const std::vector<int>& ops) {
  std::vector<char> seen(p.units.size(), 0);
  std::vector<int> order;
  for (int v : ops) {
    const int u = v >= 0 && v < static_cast<int>(p.unit_of.size()) ? p.unit_of[v] : -1;
    if (u >= 0 && !seen[u]) {
      seen[u] = 1;
      order.push_back(u);
    }
  }
  for (size_t u = 0; u < p.units.size(); ++u) {
    if (!seen[u]) order.push_back(static_cast<int>(u));
  }
  return order;
}

namespace {

struct Evaluated {
  KernelSolution solution;
  int64_t extra_movement = 0;
  int64_t makespan = 0;
};

// The search state; one member per step of the algorithm.
class UnitOrderSearch {
 public:
  UnitOrderSearch(const KernelGraph& g, const CacheConfig& config, const UnitPartition& p,
                  const UnitSearchOptions& options)
      : g_(g), config_(config), p_(p), options_(options), rng_(options.seed) {}

  absl::StatusOr<UnitSearchResult> Run(const std::vector<int>& start);

 private:
  std::optional<Evaluated> Evaluate(const std::vector<int>& units) const;
  std::tuple<int64_t, int64_t, int64_t> Key(const Evaluated& e) const;
  void Record(const Evaluated& e, const std::vector<int>& units, UnitSearchResult& best) const;
  std::vector<int> Neighbour(const std::vector<int>& units);
  uint32_t Draw(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng_() % n); }

  const KernelGraph& g_;
  const CacheConfig& config_;
  const UnitPartition& p_;
  const UnitSearchOptions& options_;
  std::mt19937 rng_;  // fully specified by the standard: the same moves everywhere
};

// The plan the planner would build from this unit order, or nothing when the
// allocator fails.
std::optional<Evaluated> UnitOrderSearch::Evaluate(const std::vector<int>& units) const {
  const std::vector<int> order = DemandDrivenOrder(g_, TargetsFromUnits(p_, units));
  BestOptions bo;
  bo.placement = Placement::kOldestFree;
  absl::StatusOr<KernelSolution> sol = AllocateBest(g_, order, config_, bo);
  if (!sol.ok()) return std::nullopt;
  int64_t extra = 0;
  for (const SpillRecord& s : sol->spills) {
    // Traffic comes from the case file's sizes: an overflowing sum is no plan
    // (the evaluator rejects it too).
    const std::optional<int64_t> sum = CheckedAdd(extra, g_.SpillTraffic(s.buf_id));
    if (!sum) return std::nullopt;
    extra = *sum;
  }
  absl::StatusOr<ReorderResult> rr = ReorderForMakespan(g_, *sol, config_);
  if (!rr.ok()) return std::nullopt;
  // The list scheduler is a heuristic: the allocator's order is sometimes shorter.
  if (rr->makespan_before < rr->makespan_after) {
    return Evaluated{*std::move(sol), extra, rr->makespan_before};
  }
  return Evaluated{std::move(rr->solution), extra, rr->makespan_after};
}

// One move: a block of 1-4 units to another position, or a swap of two units.
std::vector<int> UnitOrderSearch::Neighbour(const std::vector<int>& units) {
  std::vector<int> next = units;
  const uint32_t n = static_cast<uint32_t>(units.size());
  if (Draw(3) == 0) {
    std::swap(next[Draw(n)], next[Draw(n)]);
    return next;
  }
  const uint32_t len = std::min<uint32_t>(n, 1 + Draw(4));
  const uint32_t from = Draw(n - len + 1);
  std::vector<int> block(next.begin() + from, next.begin() + from + len);
  next.erase(next.begin() + from, next.begin() + from + len);
  const uint32_t to = Draw(static_cast<uint32_t>(next.size()) + 1);
  next.insert(next.begin() + to, block.begin(), block.end());
  return next;
}

// Search key, smaller is better: traffic above the cap first (a start above
// the cap descends towards it), then makespan, then traffic.
std::tuple<int64_t, int64_t, int64_t> UnitOrderSearch::Key(const Evaluated& e) const {
  return {std::max<int64_t>(0, e.extra_movement - options_.max_extra_movement), e.makespan,
          e.extra_movement};
}

void UnitOrderSearch::Record(const Evaluated& e, const std::vector<int>& units,
                             UnitSearchResult& best) const {
  if (e.extra_movement > options_.max_extra_movement) return;
  if (!best.unit_order.empty() &&
      Key(e) >= std::make_tuple(int64_t{0}, best.makespan, best.extra_movement)) {
    return;
  }
  best.solution = e.solution;
  best.unit_order = units;
  best.extra_movement = e.extra_movement;
  best.makespan = e.makespan;
}

absl::StatusOr<UnitSearchResult> UnitOrderSearch::Run(const std::vector<int>& start) {
  UnitSearchResult best;
  std::vector<int> cur = start;
  std::optional<Evaluated> cur_eval = Evaluate(cur);
  if (cur_eval) {
    if (cur_eval->extra_movement <= options_.max_extra_movement) {
      best.start_makespan = cur_eval->makespan;
    }
    Record(*cur_eval, cur, best);
  }
  int64_t since_gain = 0;  // steps since the current key last went down
  for (int64_t step = 0; step < options_.max_steps && cur.size() > 1; ++step) {
    if (options_.patience > 0 && since_gain >= options_.patience) break;
    ++since_gain;
    ++best.steps;
    std::vector<int> cand = Neighbour(cur);
    std::optional<Evaluated> e = Evaluate(cand);
    if (!e || (cur_eval && Key(*e) > Key(*cur_eval))) continue;
    if (!cur_eval || Key(*e) < Key(*cur_eval)) since_gain = 0;
    ++best.accepted;
    Record(*e, cand, best);
    cur = std::move(cand);
    cur_eval = std::move(e);
  }
  if (best.unit_order.empty()) {
    return absl::NotFoundError("unit-order-search: no unit order within the movement cap");
  }
  return best;
}

}  // namespace

absl::StatusOr<UnitSearchResult> SearchUnitOrder(const KernelGraph& g, const CacheConfig& config,
                                                 const UnitPartition& p,
                                                 const std::vector<int>& start_order,
                                                 const UnitSearchOptions& options) {
  UnitOrderSearch search(g, config, p, options);
  return search.Run(start_order);
}

}  // namespace npuplan::kernel
