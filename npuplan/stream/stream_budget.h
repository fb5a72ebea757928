// stream-budget (issue 23 item 3): fits the plan into npuplan.maxStreams
// device streams (default: npuplan.device.maxStreams, which device-limit-check
// keeps as the hard check) by merging logical streams, after every stream
// assignment (static, dynamic, any auto mode: the count is the model's total,
// not per graph).
//
// Streams a plan needs: main logical streams + attached streams + the extra
// pieces the physical split will open (static path with a task limit: per
// main stream ⌈tasks / (limit − 27)⌉, tasks = the task model's count plus
// one record / two wait tasks per cross-stream data or control edge — every
// event the optimiser could keep, so the estimate does not fall short of
// the split; dynamic path, unlimited depth: 1).
//
// While that exceeds the budget, merge two main streams: of the pairs that
// may merge, the one whose merge raises the estimated makespan least (the
// DAG allocators' EstimateMakespan per graph, summed over the graphs that use
// both; streams that share no graph merge for free), ties by the smaller
// pair of ids. May not merge: a stream with a user stream label
// (`_user_stream_label`) or an activation label (`_stream_label`), and a
// stream of an independent engine (HCCL) with one of another engine; attached
// streams are never merged. Above kExactPairWork (pairs × nodes simulated per
// step), the pair of lightest streams (least work) of a class merges instead.
// Streams are renumbered continuously (a merged stream takes the smaller id,
// so stream 0 stays 0); the stream list, user labels, HCCL counts and the
// attached streams (re-assigned after the main ones) are rebuilt.
// When no merge is left and the count still exceeds the budget: a
// ResourceExhausted error with the smallest count reachable and what forces it.
//
// Requires: logical-streams, attached-streams. Provides: logical-streams,
// attached-streams. Preserves structure.
// Decision keywords: StreamBudget budget= needed= main= attached= split_extra= merges=
//                    StreamsMerged into= from= makespan_delta= graphs=
#ifndef NPUPLAN_STREAM_STREAM_BUDGET_H_
#define NPUPLAN_STREAM_STREAM_BUDGET_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/pass/pass.h"

namespace npuplan {

namespace stream {

// What the plan will need (see above).
struct StreamNeed {
  int64_t main = 0;         // main logical streams
  int64_t attached = 0;     // attached streams
  int64_t split_extra = 0;  // pieces the split adds beyond one per main stream
  int64_t total() const { return main + attached + split_extra; }
};
// `task_limit` 0: no split (dynamic path, unlimited depth).
StreamNeed EstimateStreamNeed(const Plan& plan, int64_t task_limit);

// EstimateStreamNeed kept up to date through merges, without a pass over the
// nodes per merge (which made the merging quadratic when thousands of
// streams merge: models of many Ifs in the auto modes). Per stream its task
// count, and per pair of streams the (producer, consumer) node pairs across
// them, whose record and wait tasks vanish when the two merge. Exact while
// `exact()`: false for stream ids EstimateStreamNeed numbers sparsely, a
// plan without streams, or a saturated count — the caller then estimates.
class StreamNeedTracker {
 public:
  StreamNeedTracker(const Plan& plan, int64_t task_limit);
  // Stream `from` merged into `into` (the plan's stream ids).
  void Merge(int32_t into, int32_t from);
  bool exact() const { return exact_; }
  const StreamNeed& need() const { return need_; }

 private:
  int64_t Extra(int64_t tasks) const;
  int64_t cap_ = 0;  // tasks per split piece; 0: no split
  bool exact_ = true;
  StreamNeed need_;
  std::vector<int64_t> tasks_, nodes_;                // per stream id
  std::vector<std::map<int32_t, int64_t>> out_, in_;  // per stream: node pairs to / from another
};

// The light-stream rule's choice, kept up to date as streams merge: of the
// streams of one class, the two with the least work together; ties by the
// smaller pair of ids (the first such pair in (a, b) order, as a search of
// every pair takes it). O(log streams) per update, where that search was
// O(streams²) per merge: 1,900 merges of 3,850 streams took 90 s.
class LightestPairs {
 public:
  void Add(const std::string& cls, int32_t stream, int64_t work);
  void Remove(const std::string& cls, int32_t stream, int64_t work);
  // (a, b) with a < b; nullopt when no class has two streams.
  std::optional<std::pair<int32_t, int32_t>> Best() const;
  // Pairs of streams of one class.
  int64_t pairs() const;

 private:
  // Per class: (work, stream) of its streams.
  std::map<std::string, std::set<std::pair<int64_t, int32_t>>> by_class_;
};

}  // namespace stream

class StreamBudget final : public Pass {
 public:
  static constexpr std::string_view kName = "stream-budget";
  std::string_view name() const override { return kName; }
  IrProperties required() const override {
    return IrProperty::kLogicalStreams | IrProperty::kAttachedStreams;
  }
  IrProperties provided() const override {
    return IrProperty::kLogicalStreams | IrProperty::kAttachedStreams;
  }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_STREAM_STREAM_BUDGET_H_
