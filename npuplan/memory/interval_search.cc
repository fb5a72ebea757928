// Stage 3 of the interval solver (interval_solver.h): a canonical branch
// and bound in the MiniMalloc style (SearchEngine: one feasibility probe
// "is there a plan with peak <= cap?") driven by rounds of probes with
// doubling node budgets (ProbeSearch).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "npuplan/memory/interval_solver_internal.h"

namespace npuplan::memory::interval_internal {
namespace {

enum class Outcome { kFound, kNotFound, kAborted, kDeadline };

// Where a probe's restart schedule stands for each independent part, so that
// a later probe at the same cap resumes instead of starting over.
struct ProbeSchedule {
  int64_t cap = -1;
  std::vector<int64_t> limit;    // node limit of the next run, per part
  std::vector<int> preorder;     // preorder of the next run, per part
  std::vector<char> solved;      // part already solved at this cap
  std::vector<int64_t> offsets;  // offsets of the solved parts
};

class SearchEngine {
 public:
  SearchEngine(const Compact& c, const IntervalSolverOptions& options, Clock::time_point deadline)
      : c_(c), options_(options), deadline_(deadline) {}

  // Looks for a plan with peak <= cap using at most `node_budget` nodes.
  // kFound fills `offsets` (compact); kNotFound is a proof that none exists.
  Outcome Probe(int64_t cap, int64_t node_budget, std::vector<int64_t>& offsets,
                ProbeSchedule* schedule = nullptr);

  int64_t nodes() const { return nodes_; }
  int64_t steps() const { return steps_; }
  bool steps_exhausted() const { return steps_exhausted_; }
  int64_t backtracks() const { return backtracks_; }

 private:
  struct Partition {
    std::vector<int> buffers;
    int lo = 0, hi = 0;  // sections [lo, hi)
  };
  struct Candidate {
    int64_t offset;
    int rank;  // position in the partition's preorder
  };
  struct Change {
    int index;
    int64_t old_value;
  };
  struct Marks {
    size_t floors, minoffs;
  };

  void Reset();
  std::vector<Partition> Split(const Partition& p, const std::vector<int>& cut_points) const;
  Outcome SolvePartition(const Partition& p);
  Outcome Search(const Partition& p, const std::vector<int>& pre,
                 const std::vector<Candidate>& prev, int64_t last_offset, int last_rank);
  Outcome Decompose(const Partition& p, const std::vector<int>& pre,
                    const std::vector<Candidate>& ordering, int64_t offset, int rank, int b);
  Marks Place(int b, int64_t offset);
  void Undo(int b, const Marks& marks);
  bool Check(const Partition& p, int64_t offset, const Marks& marks) const;

  const Compact& c_;
  const IntervalSolverOptions& options_;
  const Clock::time_point deadline_;
  const std::vector<Key>* preorder_ = nullptr;
  int64_t cap_ = 0;
  int64_t nodes_ = 0, backtracks_ = 0, nodes_left_ = 0;
  int64_t steps_ = 0;  // buffers and sections visited (options_.max_steps)
  bool deadline_hit_ = false, steps_exhausted_ = false;

  std::vector<int64_t> off_, minoff_, best_, floor_, total_;
  std::vector<int> cuts_;  // unplaced buffers / edges spanning boundary k | k+1
  std::vector<Change> floor_trail_, minoff_trail_;
  std::vector<int> stamp_, dirty_;
  int stamp_now_ = 0;
};

void SearchEngine::Reset() {
  const int m = c_.count();
  off_.assign(m, -1);
  minoff_.assign(m, 0);
  best_.assign(m, -1);
  floor_.assign(c_.num_sections, 0);
  total_.assign(c_.num_sections, 0);
  for (int s = 0; s < c_.num_sections; ++s) {
    for (int b : c_.live[s]) total_[s] += c_.size[b];
  }
  cuts_.assign(std::max(0, c_.num_sections - 1), 0);
  for (int b = 0; b < m; ++b) {
    for (int k = c_.sec_lo[b]; k + 1 < c_.sec_hi[b]; ++k) ++cuts_[k];
  }
  for (const Compact::Edge& e : c_.edges) {
    for (int k = e.lo; k + 1 < e.hi; ++k) ++cuts_[k];
  }
  stamp_.assign(c_.num_sections, 0);
  floor_trail_.clear();
  minoff_trail_.clear();
}

// Splits `p` at the section indices in `cut_points` (sorted; each a boundary
// no unplaced buffer spans) into parts with at least one unplaced buffer.
std::vector<SearchEngine::Partition> SearchEngine::Split(const Partition& p,
                                                         const std::vector<int>& cut_points) const {
  std::vector<int> bounds = {p.lo};
  for (int k : cut_points) {
    if (k > bounds.back() && k < p.hi) bounds.push_back(k);
  }
  bounds.push_back(p.hi);
  std::vector<Partition> parts(bounds.size() - 1);
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    parts[i].lo = bounds[i];
    parts[i].hi = bounds[i + 1];
  }
  for (int b : p.buffers) {
    if (off_[b] >= 0) continue;
    const size_t i =
        std::upper_bound(bounds.begin(), bounds.end(), c_.sec_lo[b]) - bounds.begin() - 1;
    parts[i].buffers.push_back(b);
  }
  std::erase_if(parts, [](const Partition& part) { return part.buffers.empty(); });
  return parts;
}

Outcome SearchEngine::Probe(int64_t cap, int64_t node_budget, std::vector<int64_t>& offsets,
                            ProbeSchedule* schedule) {
  cap_ = cap;
  Reset();
  steps_ += c_.count() + c_.num_sections;
  Partition all;
  all.lo = 0;
  all.hi = c_.num_sections;
  for (int b = 0; b < c_.count(); ++b) all.buffers.push_back(b);
  std::vector<int> cut_points;
  for (int k = 0; k + 1 < c_.num_sections; ++k) {
    if (cuts_[k] == 0) cut_points.push_back(k + 1);
  }
  const std::vector<Partition> parts =
      options_.dynamic_decomposition ? Split(all, cut_points) : std::vector<Partition>{all};
  ProbeSchedule local;
  if (schedule == nullptr || schedule->cap != cap) {
    if (schedule == nullptr) schedule = &local;
    schedule->cap = cap;
    schedule->limit.clear();
    for (const Partition& part : parts) {
      schedule->limit.push_back(2 * static_cast<int64_t>(part.buffers.size()));
    }
    schedule->preorder.assign(parts.size(), 0);
    schedule->solved.assign(parts.size(), 0);
    schedule->offsets.assign(c_.count(), -1);
  }
  // Each independent part: restarts over the preorders with a doubling node
  // limit until one finds a plan, one proves there is none, or the budget or
  // the deadline runs out. The schedule resumes where an earlier probe at the
  // same cap stopped.
  const int num_preorders = static_cast<int>(SearchPreorders().size());
  int64_t budget_left = node_budget;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (schedule->solved[i]) continue;
    Outcome outcome = Outcome::kAborted;
    while (outcome == Outcome::kAborted && budget_left > 0) {
      preorder_ = &SearchPreorders()[schedule->preorder[i]];
      const bool truncated = budget_left < schedule->limit[i];
      nodes_left_ = std::min(schedule->limit[i], budget_left);
      const int64_t before = nodes_;
      outcome = SolvePartition(parts[i]);
      budget_left -= nodes_ - before;
      if (outcome != Outcome::kAborted || truncated) break;
      if (++schedule->preorder[i] == num_preorders) {
        schedule->preorder[i] = 0;
        schedule->limit[i] *= 2;
      }
    }
    if (outcome != Outcome::kFound) return outcome;
    schedule->solved[i] = 1;
    for (int b : parts[i].buffers) schedule->offsets[b] = best_[b];
  }
  offsets = schedule->offsets;
  return Outcome::kFound;
}

// Orders the partition's buffers by the current preorder and searches it.
Outcome SearchEngine::SolvePartition(const Partition& p) {
  std::vector<int> pre = p.buffers;
  SortBy(pre, ComputeKeys(c_, total_, pre), *preorder_);
  std::vector<Candidate> ordering(pre.size());
  for (size_t r = 0; r < pre.size(); ++r) ordering[r] = {minoff_[pre[r]], static_cast<int>(r)};
  std::stable_sort(ordering.begin(), ordering.end(), [](const Candidate& a, const Candidate& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.rank < b.rank;
  });
  return Search(p, pre, ordering, 0, 0);
}

// Places `b` at `offset` and propagates: section floors and totals, minimum
// offsets of unplaced neighbours, and (optionally) section floors raised to
// the lowest minimum offset of their unplaced buffers.
SearchEngine::Marks SearchEngine::Place(int b, int64_t offset) {
  const Marks marks{floor_trail_.size(), minoff_trail_.size()};
  off_[b] = offset;
  best_[b] = offset;
  const int64_t top = offset + c_.size[b];
  for (int s = c_.sec_lo[b]; s < c_.sec_hi[b]; ++s) {
    floor_trail_.push_back({s, floor_[s]});
    floor_[s] = std::max(floor_[s], top);
    total_[s] -= c_.size[b];
  }
  // 1. Minimum offsets of unplaced neighbours.
  for (int x : c_.adj[b]) {
    if (off_[x] >= 0 || minoff_[x] >= top) continue;
    minoff_trail_.push_back({x, minoff_[x]});
    minoff_[x] = AlignUp(top, c_.align[x]);
  }
  if (!options_.unallocated_floor) return marks;
  // 2. Sections whose floor may rise: floor_[s] is kept >= the lowest minimum
  // offset of its unplaced buffers, so a raised x matters only where its old
  // value was at or below the floor and its new value is above it.
  // The hottest loops of the search: locals instead of members, so that the
  // compiler need not reload them after every store.
  const int now = ++stamp_now_;
  int* const stamp = stamp_.data();
  const int64_t* const floors = floor_.data();
  std::vector<int>& dirty = dirty_;
  dirty.clear();
  for (size_t i = marks.minoffs; i < minoff_trail_.size(); ++i) {
    const int x = minoff_trail_[i].index;
    const int64_t before = minoff_trail_[i].old_value;
    const int64_t raised = minoff_[x];
    for (int s = c_.sec_lo[x], end = c_.sec_hi[x]; s < end; ++s) {
      if (stamp[s] == now || before > floors[s] || floors[s] >= raised) continue;
      stamp[s] = now;
      dirty.push_back(s);
    }
  }
  for (int s = c_.sec_lo[b], end = c_.sec_hi[b]; s < end; ++s) {
    if (stamp[s] != now) dirty.push_back(s);
  }
  // 3. Raise them to that lowest minimum offset (stop scanning at the first
  // unplaced buffer that could sit at or below the floor: no raise then).
  const int64_t* const off = off_.data();
  const int64_t* const minoff = minoff_.data();
  for (int s : dirty) {
    int64_t lowest = std::numeric_limits<int64_t>::max();
    const int64_t floor = floor_[s];
    for (int y : c_.live[s]) {
      if (off[y] >= 0) continue;
      if (minoff[y] <= floor) {
        lowest = floor;
        break;
      }
      lowest = std::min(lowest, minoff[y]);
    }
    if (lowest != std::numeric_limits<int64_t>::max() && lowest > floor_[s]) {
      floor_trail_.push_back({s, floor_[s]});
      floor_[s] = lowest;
    }
  }
  return marks;
}

void SearchEngine::Undo(int b, const Marks& marks) {
  while (minoff_trail_.size() > marks.minoffs) {
    minoff_[minoff_trail_.back().index] = minoff_trail_.back().old_value;
    minoff_trail_.pop_back();
  }
  while (floor_trail_.size() > marks.floors) {
    floor_[floor_trail_.back().index] = floor_trail_.back().old_value;
    floor_trail_.pop_back();
  }
  for (int s = c_.sec_lo[b]; s < c_.sec_hi[b]; ++s) total_[s] += c_.size[b];
  off_[b] = -1;
}

// True when the partial plan can still fit under cap_: every neighbour whose
// minimum offset rose still fits, and every section's floor (at least the
// current offset, since canonical offsets never decrease) plus its unplaced
// bytes fits.
bool SearchEngine::Check(const Partition& p, int64_t offset, const Marks& marks) const {
  for (size_t i = marks.minoffs; i < minoff_trail_.size(); ++i) {
    const int x = minoff_trail_[i].index;
    if (minoff_[x] + c_.size[x] > cap_) return false;
  }
  const bool canonical = options_.canonical_only, inference = options_.section_inference;
  const int64_t* const floors = floor_.data();
  const int64_t* const totals = total_.data();
  for (int s = p.lo; s < p.hi; ++s) {
    int64_t floor = floors[s];
    if (canonical) floor = std::max(floor, offset);
    if (inference) floor += totals[s];
    if (floor > cap_) return false;
  }
  return true;
}

Outcome SearchEngine::Search(const Partition& p, const std::vector<int>& pre,
                             const std::vector<Candidate>& prev, int64_t last_offset,
                             int last_rank) {
  if (deadline_hit_ || steps_exhausted_) return Outcome::kDeadline;
  steps_ += static_cast<int64_t>(prev.size()) + (p.hi - p.lo);
  if (options_.max_steps > 0 && steps_ > options_.max_steps) {
    steps_exhausted_ = true;
    return Outcome::kDeadline;
  }
  if (--nodes_left_ < 0) return Outcome::kAborted;
  if ((++nodes_ & 255) == 0 && Clock::now() > deadline_) {
    deadline_hit_ = true;
    return Outcome::kDeadline;
  }
  // Unplaced buffers by (minimum offset, rank); minimum offsets only grow, so
  // an insertion sort of the parent's order is nearly linear.
  std::vector<Candidate> ordering(prev.size());
  size_t unplaced = 0;
  const int64_t* const off = off_.data();
  const int64_t* const minoff = minoff_.data();
  for (const Candidate& cand : prev) {
    const int b = pre[cand.rank];
    if (off[b] >= 0) continue;
    const Candidate now{minoff[b], cand.rank};
    size_t i = unplaced++;
    while (i > 0 && (ordering[i - 1].offset > now.offset ||
                     (ordering[i - 1].offset == now.offset && ordering[i - 1].rank > now.rank))) {
      ordering[i] = ordering[i - 1];
      --i;
    }
    ordering[i] = now;
  }
  ordering.resize(unplaced);
  if (ordering.empty()) return Outcome::kFound;
  int64_t min_top = std::numeric_limits<int64_t>::max();
  for (const Candidate& cand : ordering) {
    min_top = std::min(min_top, cand.offset + c_.size[pre[cand.rank]]);
  }
  // Section inference before placing: with canonical offsets every unplaced
  // buffer lands at or above the candidate offset o, so o + (unplaced bytes of
  // any section) must fit. Candidates come by increasing o: stop at the first
  // that fails.
  int64_t max_offset = std::numeric_limits<int64_t>::max();
  if (options_.canonical_only && options_.section_inference) {
    int64_t max_total = 0;
    for (int s = p.lo; s < p.hi; ++s) max_total = std::max(max_total, total_[s]);
    max_offset = cap_ - max_total;
  }
  for (const Candidate& cand : ordering) {
    if (cand.offset > max_offset) break;
    // Dominance: placing anything at or above min_top leaves a gap under it
    // that the buffer reaching min_top could fill.
    if (options_.check_dominance && cand.offset >= min_top) break;
    if (options_.canonical_only &&
        (cand.offset < last_offset || (cand.offset == last_offset && cand.rank < last_rank))) {
      continue;
    }
    const int b = pre[cand.rank];
    if (cand.offset + c_.size[b] > cap_) continue;
    const Marks marks = Place(b, cand.offset);
    Outcome outcome = Outcome::kNotFound;
    if (Check(p, cand.offset, marks)) {
      outcome = options_.dynamic_decomposition
                    ? Decompose(p, pre, ordering, cand.offset, cand.rank, b)
                    : Search(p, pre, ordering, cand.offset, cand.rank);
    }
    Undo(b, marks);
    if (outcome != Outcome::kNotFound) return outcome;
  }
  ++backtracks_;
  return Outcome::kNotFound;
}

// After placing `b`: if that leaves section boundaries no unplaced buffer (or
// extra conflict) spans, solves the pieces independently; else searches on.
Outcome SearchEngine::Decompose(const Partition& p, const std::vector<int>& pre,
                                const std::vector<Candidate>& ordering, int64_t offset, int rank,
                                int b) {
  std::vector<int> cut_points;
  for (int k = c_.sec_lo[b]; k + 1 < c_.sec_hi[b]; ++k) {
    if (--cuts_[k] == 0) cut_points.push_back(k + 1);
  }
  // Extra-conflict edges whose other end is unplaced stop binding the parts.
  std::vector<int> released;
  for (int e : c_.edges_of[b]) {
    const Compact::Edge& edge = c_.edges[e];
    const int other = edge.a == b ? edge.b : edge.a;
    if (off_[other] >= 0) continue;  // Released when `other` was placed.
    released.push_back(e);
    for (int k = edge.lo; k + 1 < edge.hi; ++k) {
      if (--cuts_[k] == 0) cut_points.push_back(k + 1);
    }
  }
  Outcome outcome = Outcome::kFound;
  if (cut_points.empty()) {
    outcome = Search(p, pre, ordering, offset, rank);
  } else {
    std::sort(cut_points.begin(), cut_points.end());
    const std::vector<Key>* preorder = preorder_;
    for (const Partition& part : Split(p, cut_points)) {
      outcome = SolvePartition(part);
      preorder_ = preorder;
      if (outcome != Outcome::kFound) break;
    }
  }
  for (int k = c_.sec_lo[b]; k + 1 < c_.sec_hi[b]; ++k) ++cuts_[k];
  for (int e : released) {
    for (int k = c_.edges[e].lo; k + 1 < c_.edges[e].hi; ++k) ++cuts_[k];
  }
  return outcome;
}

// Rounds v down to a multiple of g.
int64_t RoundDown(int64_t v, int64_t g) { return v / g * g; }

// 3. Probes "is there a plan with peak <= cap?", in rounds of doubling node
// budgets. Lowers best / best_peak and raises lower_bound in place.
class ProbeSearch {
 public:
  ProbeSearch(const Compact& c, const IntervalSolverOptions& options,
              std::optional<int64_t> capacity, int64_t fit, Clock::time_point deadline,
              IntervalSolution& solution, std::vector<int64_t>& best, int64_t& best_peak,
              int64_t& lower_bound)
      : c_(c),
        options_(options),
        capacity_(capacity),
        g_(c.granularity),
        fit_(fit),
        deadline_(deadline),
        solution_(solution),
        best_(best),
        best_peak_(best_peak),
        lower_bound_(lower_bound),
        engine_(c, options, deadline),
        budget_(8 * static_cast<int64_t>(c.count())) {}

  void Run();

 private:
  // Done once the best plan reaches the (possibly raised) bound or the target.
  bool Done() const { return best_peak_ <= std::max({lower_bound_, options_.target_peak, fit_}); }
  bool Take(const std::vector<int64_t>& plan);
  int64_t TopCap() const;
  bool Probe(int64_t cap, int64_t nodes, ProbeSchedule* schedule, Outcome& outcome);
  void Bisect();
  void Ladder(int64_t step);

  static constexpr int kLadderFailures = 8;
  const Compact& c_;
  const IntervalSolverOptions& options_;
  const std::optional<int64_t> capacity_;
  const int64_t g_;
  const int64_t fit_;
  const Clock::time_point deadline_;
  IntervalSolution& solution_;
  std::vector<int64_t>& best_;
  int64_t& best_peak_;
  int64_t& lower_bound_;
  SearchEngine engine_;
  std::vector<int64_t> found_;
  ProbeSchedule bound_schedule_;
  std::map<int64_t, ProbeSchedule> ladder_;
  int64_t budget_;
  bool deadline_hit_ = false, node_limit_hit_ = false, steps_exhausted_ = false;
};

// Records a plan found by a probe; true when it lowered the best peak.
bool ProbeSearch::Take(const std::vector<int64_t>& plan) {
  int64_t peak = 0;
  for (int b = 0; b < c_.count(); ++b) peak = std::max(peak, plan[b] + c_.size[b]);
  if (peak >= best_peak_) return false;
  best_peak_ = peak;
  best_ = plan;
  return true;
}

// Highest cap worth probing: below the best plan and within the capacity.
int64_t ProbeSearch::TopCap() const {
  int64_t hi = best_peak_ - g_;
  if (capacity_.has_value()) hi = std::min(hi, RoundDown(*capacity_, g_));
  return hi;
}

// Runs one probe; false once the deadline or the node limit is hit.
bool ProbeSearch::Probe(int64_t cap, int64_t nodes, ProbeSchedule* schedule, Outcome& outcome) {
  if (options_.max_nodes > 0) {
    nodes = std::min(nodes, options_.max_nodes - engine_.nodes());
    if (nodes <= 0) {
      node_limit_hit_ = true;
      outcome = Outcome::kAborted;
      return false;
    }
  }
  ++solution_.stats.probes;
  outcome = engine_.Probe(cap, nodes, found_, schedule);
  if (outcome == Outcome::kFound) Take(found_);
  if (outcome == Outcome::kNotFound) lower_bound_ = std::max(lower_bound_, cap + g_);
  if (engine_.steps_exhausted()) {
    steps_exhausted_ = true;
    return false;
  }
  if (outcome == Outcome::kDeadline) deadline_hit_ = true;
  return !deadline_hit_;
}

// (b) of a round: bisection of caps between the bound and the best plan.
void ProbeSearch::Bisect() {
  Outcome outcome;
  int64_t lo = lower_bound_;  // caps below lo failed in this round
  for (int64_t left = budget_ / 4; !Done() && left > 0;) {
    const int64_t hi = TopCap();
    if (lo > hi) break;
    const int64_t cap = RoundDown(lo + (hi - lo) / 2, g_);
    const int64_t before = engine_.nodes();
    if (!Probe(cap, std::min(left, budget_ / 8), nullptr, outcome)) break;
    left -= engine_.nodes() - before;
    if (outcome != Outcome::kFound) lo = std::max(lo, cap + g_);
  }
}

// (c) of a round: grid caps lower_bound + k * step, highest first.
void ProbeSearch::Ladder(int64_t step) {
  Outcome outcome;
  auto grid = [&](int64_t v) { return v - (v - lower_bound_) % step; };
  int64_t cap = TopCap();
  for (int failures = 0; !deadline_hit_ && !node_limit_hit_ && !steps_exhausted_ && !Done() &&
                         failures < kLadderFailures;) {
    cap = grid(std::min(cap, TopCap()));
    if (cap <= lower_bound_) break;  // the bound has its own probe
    if (!Probe(cap, budget_ / 4, &ladder_[cap], outcome)) break;
    if (outcome == Outcome::kFound) {
      cap = TopCap();
    } else {
      ++failures;
      cap -= step;
    }
  }
}

// Each round: (a) the lower bound itself, the optimum more often than not,
// resuming its restart schedule with `budget` nodes; (b) bisection of caps
// between the bound and the best plan, budget / 4 nodes in all, to descend
// fast from the greedy plan; (c) a ladder of caps on a grid of `step`
// bytes descending from just below the best plan, budget / 4 nodes each,
// until kLadderFailures caps of the round failed. Probe costs are
// heavy-tailed and not monotone in the cap (on MiniMalloc's D one cap
// takes 765 nodes while the next three higher take over 30k each), so
// many small probes beat a few large ones. Each ladder cap keeps its
// restart schedule, so a later round resumes it with a larger budget.
void ProbeSearch::Run() {
  const int64_t step = std::max(g_, RoundDown(lower_bound_ / 1024, g_));
  if (options_.max_steps > 0 && engine_.steps() >= options_.max_steps) steps_exhausted_ = true;
  while (!deadline_hit_ && !node_limit_hit_ && !steps_exhausted_ && !Done()) {
    if (Clock::now() > deadline_) {
      deadline_hit_ = true;
      break;
    }
    if (TopCap() < lower_bound_) break;  // nothing left to probe
    Outcome outcome;
    if (!Probe(lower_bound_, budget_, &bound_schedule_, outcome)) break;
    Bisect();
    Ladder(step);
    budget_ = std::min(2 * budget_, int64_t{1} << 50);
  }
  solution_.stats.timed_out = deadline_hit_;
  solution_.stats.node_limit_hit = node_limit_hit_;
  solution_.stats.steps_exhausted = steps_exhausted_;
  solution_.stats.steps = engine_.steps();
  solution_.stats.nodes = engine_.nodes();
  solution_.stats.backtracks = engine_.backtracks();
}

}  // namespace

void SearchBelowGreedy(const Compact& c, const IntervalSolverOptions& options,
                       std::optional<int64_t> capacity, int64_t fit, Clock::time_point deadline,
                       IntervalSolution& solution, std::vector<int64_t>& best, int64_t& best_peak,
                       int64_t& lower_bound) {
  ProbeSearch(c, options, capacity, fit, deadline, solution, best, best_peak, lower_bound).Run();
}

}  // namespace npuplan::memory::interval_internal
