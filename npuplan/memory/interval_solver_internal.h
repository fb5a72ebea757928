// Shared by the files of the interval solver (interval_solver.cc: stage 1,
// the buffer orders and the driver; interval_greedy.cc: stage 2;
// interval_search.cc: stage 3); not an interface of the module.
#ifndef NPUPLAN_MEMORY_INTERVAL_SOLVER_INTERNAL_H_
#define NPUPLAN_MEMORY_INTERVAL_SOLVER_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "npuplan/memory/align.h"
#include "npuplan/memory/interval_solver.h"
#include "npuplan/support/big_vector.h"

namespace npuplan::memory::interval_internal {

using Clock = std::chrono::steady_clock;

// Neighbour lists in one flat array (row i: list[begin[i] .. begin[i + 1])):
// on the scalable path a million rows, most of them empty, would each be a
// vector (24 bytes, and a heap block when not empty).
struct Adjacency {
  BigVector<int64_t> begin = BigVector<int64_t>(1, 0);
  BigVector<int> list;
  std::span<const int> operator[](int i) const {
    return {list.data() + begin[static_cast<size_t>(i)],
            static_cast<size_t>(begin[static_cast<size_t>(i) + 1] - begin[static_cast<size_t>(i)])};
  }
};

// The problem restricted to buffers of positive size, in compact indices,
// with its sweep-line sections.
struct Compact {
  // Buffer-sized arrays are BigVectors: a million entries each on the
  // scalable path, on pages reused across passes.
  BigVector<int> orig;  // compact index -> problem index
  BigVector<int64_t> size, align, lower, upper;
  Adjacency adj;                       // conflict graph
  int num_sections = 0;                // section k = [times[k], times[k+1])
  std::vector<int> sec_lo, sec_hi;     // buffer spans sections [sec_lo, sec_hi)
  std::vector<std::vector<int>> live;  // buffers live in each section
  // Conflicts between buffers disjoint in time (extra pairs, predicate), as
  // section hulls: the two ends must stay in one partition while both are
  // unplaced.
  struct Edge {
    int a, b, lo, hi;
  };
  std::vector<Edge> edges;
  std::vector<std::vector<int>> edges_of;  // edge ids per buffer
  int64_t granularity = 1;                 // gcd of sizes and alignments
  int count() const { return static_cast<int>(orig.size()); }
};

// ---------------------------------------------------------------------------
// Orders shared by greedy and the search preorders (interval_solver.cc).

// Per-buffer keys a buffer order may sort by.
struct BufferKeys {
  int64_t size, length, area_hi, total, lower;
};

enum class Key { kSize, kLength, kArea, kTotal, kLowerAsc };

struct NamedOrder {
  const char* name;
  std::vector<Key> keys;
};

// Orders tried by greedy; every key sorts descending except kLowerAsc.
const std::vector<NamedOrder>& GreedyOrders();

// Preorders the search restarts over (MiniMalloc found total/width/area best).
const std::vector<std::vector<Key>>& SearchPreorders();

// Sorts `buffers` by `keys`, ties by compact index (stable, deterministic).
void SortBy(std::vector<int>& buffers, const std::vector<BufferKeys>& k,
            const std::vector<Key>& keys);

// Keys of buffers given per-section totals (bytes live in each section).
std::vector<BufferKeys> ComputeKeys(const Compact& c, const std::vector<int64_t>& section_total,
                                    const std::vector<int>& buffers);

// ---------------------------------------------------------------------------
// Stage 2 (interval_greedy.cc): greedy over several orders (the sweep alone
// when scalable): the best plan into `best`, its peak returned.
int64_t GreedyPlan(const Compact& c, bool scalable, std::vector<int64_t>& best,
                   IntervalSolution& solution);

// ---------------------------------------------------------------------------
// Stage 3 (interval_search.cc): probes "is there a plan with peak <= cap?",
// in rounds of doubling node budgets, until the best plan reaches the bound,
// `options.target_peak` or `fit`, or a limit is hit. Lowers best / best_peak
// and raises lower_bound in place; fills the search counters of
// `solution.stats`.
void SearchBelowGreedy(const Compact& c, const IntervalSolverOptions& options,
                       std::optional<int64_t> capacity, int64_t fit, Clock::time_point deadline,
                       IntervalSolution& solution, std::vector<int64_t>& best, int64_t& best_peak,
                       int64_t& lower_bound);

}  // namespace npuplan::memory::interval_internal

#endif  // NPUPLAN_MEMORY_INTERVAL_SOLVER_INTERNAL_H_
