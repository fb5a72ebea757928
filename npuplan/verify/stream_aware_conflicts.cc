// StreamAwareReuse::Conflicts (stream_aware_reuse.h): the cross-stream
// conflicts of the planning lifetimes, counted per stream and widened in
// rounds until every buffer lists few enough pairs.
#include <algorithm>
#include <limits>

#include "npuplan/verify/stream_aware_reuse.h"
#include "npuplan/verify/stream_aware_reuse_internal.h"

namespace npuplan::memory {

using reuse_internal::PartitionFrom;

namespace {

// Counts over the positions of one stream (a Fenwick tree).
class StreamCounter {
 public:
  void Reset(size_t positions) { tree_.assign(positions + 1, 0); }
  void Add(int32_t p, int32_t delta) {
    for (size_t x = static_cast<size_t>(p) + 1; x < tree_.size(); x += x & (~x + 1))
      tree_[x] += delta;
  }
  // Entries at positions < p.
  int64_t Prefix(int64_t p) const {
    int64_t sum = 0;
    for (size_t x =
             static_cast<size_t>(std::clamp<int64_t>(p, 0, static_cast<int64_t>(tree_.size()) - 1));
         x > 0; x -= x & (~x + 1)) {
      sum += tree_[x];
    }
    return sum;
  }

 private:
  BigVector<int32_t> tree_;
};

// `items` stably sorted by key(item) in [0, max_key] (a counting sort).
template <typename Key>
BigVector<int> SortedByKey(const BigVector<int>& items, int64_t max_key, Key key) {
  BigVector<int32_t> start(static_cast<size_t>(max_key) + 2, 0);
  for (int i : items) ++start[static_cast<size_t>(key(i)) + 1];
  for (size_t x = 1; x < start.size(); ++x) start[x] += start[x - 1];
  BigVector<int> out(items.size());
  for (int i : items) out[static_cast<size_t>(start[static_cast<size_t>(key(i))]++)] = i;
  return out;
}

// What the steps of StreamAwareReuse::Conflicts share: the buffers, their
// planning lifetimes (in `out`, widened in place) and the reuse analysis's
// per-buffer and per-stream data. The rounds only ever remove buffers from
// the counts (widening), so a count at or below the limit stays there: each
// round recounts only the buffers still above it.
class ConflictRounds {
 public:
  ConflictRounds(const std::vector<int>& buffers, const TensorLifetimes& lt,
                 const HappensBefore& hb, const BufferUses& uses,
                 const std::vector<std::vector<NodeId>>& stream_nodes,
                 StreamAwareReuse::PlanningConflicts& out)
      : buffers_(buffers),
        lt_(lt),
        hb_(hb),
        uses_(uses),
        stream_nodes_(stream_nodes),
        out_(out),
        n_(buffers.size()),
        k_(static_cast<size_t>(hb.num_lanes())),
        widened_up_(n_, 0),
        widened_low_(n_, 0),
        positions_(k_),
        below_(k_),
        last_first_(k_, -1),
        counters_(k_),
        kind_(n_),
        lower_(n_) {
    for (size_t i = 0; i < n_; ++i) {
      const LogicalBuffer& b = Buf(i);
      lower_[i] = b.lower;
      const bool follow = b.size > 0 && b.pinned.empty() && !b.uses.empty();
      kind_[i] = static_cast<uint8_t>((b.size > 0 ? kSized : 0) | (follow ? kFollow : 0) |
                                      (follow && !b.live_to_end ? kPrecede : 0));
    }
  }

  // `a` may be ordered before a later buffer / `b` after an earlier one.
  bool CanPrecede(size_t i) const { return kind_[i] & kPrecede; }
  bool CanFollow(size_t i) const { return kind_[i] & kFollow; }

  void WidenUnordered();
  void set_release(BigVector<int64_t> release) { release_ = std::move(release); }
  void Prepare();
  void AtIndices();  // after Prepare
  void Rounds(int64_t limit);
  void ExactPairs(int64_t limit);

 private:
  const LogicalBuffer& Buf(size_t i) const { return lt_.buffers[buffers_[i]]; }
  void CountFirsts();
  // The first node of stream t at plan position >= x (index into positions_[t]).
  int32_t At(size_t t, int64_t x) const {
    if (!ranks_.empty()) return ranks_[t].Below(x);
    const BigVector<int64_t>& p = positions_[t];
    return static_cast<int32_t>(std::lower_bound(p.begin(), p.end(), x) - p.begin());
  }
  // First uses on stream t of the buffers not widened down, at plan positions
  // < release_[i][t] (ReleaseBelow) or < out_.upper[i] (UpperBelow). The
  // positions are looked up once (AtIndices, WidenUp), not in every round.
  int64_t ReleaseBelow(size_t i, size_t t) const { return below_[t][release_at_[i * k_ + t]]; }
  int64_t UpperBelow(size_t i, size_t t) const { return below_[t][upper_at_[i * k_ + t]]; }
  int64_t Forward(size_t i, int64_t& count) const;
  void AddLastUses(int a, int32_t delta);
  int64_t LaterLastUses(size_t i) const;
  void Backward(BigVector<int64_t>& count, BigVector<int64_t>& acquire);
  void BackwardAgain(const BigVector<char>& hot, BigVector<int64_t>& count);
  void WidenUp(size_t i, int64_t e) {
    if (e <= out_.upper[i]) return;
    out_.upper[i] = e;
    widened_up_[i] = 1;
    for (size_t t = 0; t < k_; ++t) upper_at_[i * k_ + t] = At(t, e);
  }
  void WidenLow(size_t i, int64_t l) {
    if (l >= out_.lower[i]) return;
    out_.lower[i] = l;
    widened_low_[i] = 1;
    firsts_changed_ = true;
  }

  const std::vector<int>& buffers_;
  const TensorLifetimes& lt_;
  const HappensBefore& hb_;
  const BufferUses& uses_;
  const std::vector<std::vector<NodeId>>& stream_nodes_;
  StreamAwareReuse::PlanningConflicts& out_;
  const size_t n_;
  const size_t k_;  // streams
  BigVector<char> widened_up_, widened_low_;
  BigVector<int64_t> release_;  // F_t(a) per buffer and stream (n x k, fixed)
  // At(t, release_) and At(t, out_.upper) per buffer that can precede and stream (n x k).
  BigVector<int32_t> release_at_, upper_at_;
  // Per stream: plan positions of its nodes; with few streams also as
  // PositionRanks (At() in one lookup), empty otherwise.
  std::vector<BigVector<int64_t>> positions_;
  std::vector<PositionRanks> ranks_;
  // Per buffer that can follow (first_begin_[i] .. [i+1]): (stream, position
  // on it) of its first use on each stream it uses.
  BigVector<int32_t> first_begin_;
  BigVector<std::pair<int32_t, int32_t>> firsts_;
  // Per stream, of the buffers not widened down: first uses at stream
  // positions < q (below_[t][q]) and the plan position of the last one (-1: none).
  std::vector<BigVector<int32_t>> below_;
  BigVector<int64_t> last_first_;
  bool firsts_changed_ = true;  // below_ and last_first_ are out of date
  // Size > 0 buffers by lower; buffers that can precede by upper (both stable).
  BigVector<int> by_lower_, by_upper_;
  BigVector<int64_t> first_back_;  // backward counts of the first round
  std::vector<StreamCounter> counters_;
  // Per buffer: kSized | kFollow | kPrecede, read in every step (the
  // buffers' fields are spread over two cache lines of each LogicalBuffer).
  enum : uint8_t { kSized = 1, kFollow = 2, kPrecede = 4 };
  BigVector<uint8_t> kind_;
  // Per buffer: its own lower (LogicalBuffer::lower), read in several sweeps.
  BigVector<int64_t> lower_;
};

// Buffers ordered against nothing (pinned, no uses) or that can precede
// nothing keep their whole lifetime on that side.
void ConflictRounds::WidenUnordered() {
  const int64_t end = lt_.num_steps;
  for (size_t i = 0; i < n_; ++i) {
    if (!(kind_[i] & kSized)) continue;
    if (!CanFollow(i)) out_.lower[i] = 0;  // ordered against nothing
    if (!CanPrecede(i)) out_.upper[i] = std::max(out_.upper[i], end);
  }
}

// The fixed inputs of the counts: stream positions, first uses, sort orders.
// A use outside the plan order (position -1) is no first use.
void ConflictRounds::Prepare() {
  for (size_t t = 0; t < k_; ++t) {
    positions_[t].reserve(stream_nodes_[t].size());
    for (NodeId v : stream_nodes_[t]) positions_[t].push_back(lt_.position[v.index()]);
  }
  // A table of num_steps + 1 entries per stream: only while that is no
  // larger than the n x k lookups it answers (release_at_, upper_at_).
  const int64_t steps = lt_.num_steps;
  if (static_cast<uint64_t>(steps) + 1 <= 2 * static_cast<uint64_t>(n_) + 1024) {
    ranks_.resize(k_);
    for (size_t t = 0; t < k_; ++t) ranks_[t].Build(positions_[t], steps);
  }
  first_begin_.assign(n_ + 1, 0);
  BigVector<int64_t> seen(k_, -1);  // buffer whose first use on t is listed
  BigVector<int> sized, precede;
  // Sized up front: growing a million-entry vector step by step copies it
  // into ever larger blocks (fresh pages when the cache has none).
  sized.reserve(n_);
  precede.reserve(n_);
  firsts_.reserve(n_);          // most buffers list one first use (one per stream used)
  constexpr size_t kAhead = 8;  // buffers whose uses' rows are fetched ahead (cache misses)
  for (size_t i = 0; i < n_; ++i) {
    if (i + kAhead < n_ && CanFollow(i + kAhead)) {
      for (NodeId u : Buf(i + kAhead).uses) {
        __builtin_prefetch(hb_.clock(u));
        __builtin_prefetch(&lt_.position[u.index()]);
      }
    }
    first_begin_[i] = static_cast<int32_t>(firsts_.size());
    if (kind_[i] & kSized) sized.push_back(static_cast<int>(i));
    if (CanPrecede(i)) precede.push_back(static_cast<int>(i));
    if (!CanFollow(i)) continue;
    for (NodeId u : Buf(i).uses) {  // by plan position: the first on t comes first
      const size_t t = static_cast<size_t>(hb_.lane(u));
      if (lt_.position[u.index()] < 0 || seen[t] == static_cast<int64_t>(i)) continue;
      seen[t] = static_cast<int64_t>(i);
      firsts_.emplace_back(static_cast<int32_t>(t), hb_.lane_pos(u));
    }
  }
  first_begin_[n_] = static_cast<int32_t>(firsts_.size());
  int64_t max_key = 0;
  for (int i : sized) max_key = std::max({max_key, lower_[i], out_.upper[i]});
  by_lower_ = SortedByKey(sized, max_key, [&](int i) { return lower_[i]; });
  by_upper_ = SortedByKey(precede, max_key, [&](int i) { return out_.upper[i]; });
}

// At() for every buffer and stream, searched near the previous buffer's
// answers first (buffers come by lower: the positions looked up mostly grow).
void ConflictRounds::AtIndices() {
  release_at_.assign(n_ * k_, 0);
  upper_at_.assign(n_ * k_, 0);
  if (!ranks_.empty()) {
    for (size_t i = 0; i < n_; ++i) {
      if (!CanPrecede(i)) continue;
      for (size_t t = 0; t < k_; ++t) {
        release_at_[i * k_ + t] = At(t, release_[i * k_ + t]);
        upper_at_[i * k_ + t] = At(t, out_.upper[i]);
      }
    }
    return;
  }
  std::vector<size_t> release_hint(k_, 0), upper_hint(k_, 0);
  for (size_t i = 0; i < n_; ++i) {
    if (!CanPrecede(i)) continue;  // the only ones Forward and ExactPairs count
    for (size_t t = 0; t < k_; ++t) {
      const BigVector<int64_t>& p = positions_[t];
      const int64_t release = release_[i * k_ + t], upper = out_.upper[i];
      release_at_[i * k_ + t] = static_cast<int32_t>(PartitionFrom(
          p.size(), [&](size_t j) { return p[j] < release; }, release_hint[t]));
      upper_at_[i * k_ + t] = static_cast<int32_t>(PartitionFrom(
          p.size(), [&](size_t j) { return p[j] < upper; }, upper_hint[t]));
    }
  }
}

// Forward: a later buffer b conflicts with a (disjoint in time) iff some
// stream t has first_use_t(b) < F_t(a), the plan position of the first
// node of t whose clock covers all of a's last uses (clocks grow along a
// stream, so those nodes form a suffix of t). Per stream, prefix counts of
// the first uses of the buffers not widened down.
void ConflictRounds::CountFirsts() {
  if (!firsts_changed_) return;
  firsts_changed_ = false;
  for (size_t t = 0; t < k_; ++t) {
    below_[t].assign(stream_nodes_[t].size() + 1, 0);
    last_first_[t] = -1;
  }
  for (size_t i = 0; i < n_; ++i) {
    if (widened_low_[i]) continue;  // only buffers that can follow list first uses
    for (int32_t f = first_begin_[i]; f < first_begin_[i + 1]; ++f) {
      const auto [t, q] = firsts_[static_cast<size_t>(f)];
      ++below_[static_cast<size_t>(t)][static_cast<size_t>(q) + 1];
      last_first_[static_cast<size_t>(t)] =
          std::max(last_first_[static_cast<size_t>(t)],
                   positions_[static_cast<size_t>(t)][static_cast<size_t>(q)]);
    }
  }
  for (size_t t = 0; t < k_; ++t) {
    for (size_t q = 1; q < below_[t].size(); ++q) below_[t][q] += below_[t][q - 1];
  }
}

// Counts a's forward conflicts (an upper bound) and returns its release
// point E(a): every buffer starting at or after it is ordered after a.
int64_t ConflictRounds::Forward(size_t i, int64_t& count) const {
  count = 0;
  int64_t e = out_.upper[i];
  for (size_t t = 0; t < k_; ++t) {
    if (last_first_[t] < 0) continue;
    const int64_t r = release_[i * k_ + t];
    const int64_t c = ReleaseBelow(i, t) - UpperBelow(i, t);
    if (c > 0) count += c;
    e = std::max(e, std::min(r, last_first_[t] + 1));
  }
  return e;
}

void ConflictRounds::AddLastUses(int a, int32_t delta) {
  for (const auto& [t, p] : uses_.Last(static_cast<size_t>(buffers_[a])))
    counters_[static_cast<size_t>(t)].Add(p, delta);
}

// Buffers counted in the stream counters whose last use on some stream s is
// above meet_b[s]: not ordered before b (one count per stream).
int64_t ConflictRounds::LaterLastUses(size_t i) const {
  int64_t count = 0;
  for (size_t t = 0; t < k_; ++t) {
    const int32_t seen = uses_.Meet(static_cast<size_t>(buffers_[i]))[t];
    count += counters_[t].Prefix(static_cast<int64_t>(stream_nodes_[t].size())) -
             counters_[t].Prefix(static_cast<int64_t>(seen) + 1);
  }
  return count;
}

// Backward: an earlier buffer a (ended by b's lower) conflicts with b iff
// some stream s has a's last use on s above meet_b[s], the last position of
// s that all of b's uses have seen. Counted by a sweep in plan order with
// one counter per stream over last-use positions. The acquire point
// L(b) = the least plan position of a node just past meet_b[s]: every
// buffer ending by L(b) is ordered before b.
void ConflictRounds::Backward(BigVector<int64_t>& count, BigVector<int64_t>& acquire) {
  count.assign(n_, 0);
  acquire.assign(n_, 0);
  for (size_t t = 0; t < k_; ++t) counters_[t].Reset(stream_nodes_[t].size());
  // The uppers of the buffers in `by_upper_` order, and whether each is
  // counted: gathered first (a short loop whose loads overlap) instead of
  // read at random in the sweep.
  struct End {
    int64_t upper;
    bool counted;
  };
  BigVector<End> ends(by_upper_.size());
  for (size_t j = 0; j < by_upper_.size(); ++j) {
    const int a = by_upper_[j];
    ends[j] = {out_.upper[a], !widened_up_[a]};
  }
  constexpr size_t kAhead = 16;
  size_t next = 0;
  for (int i : by_lower_) {
    const int64_t lower = lower_[static_cast<size_t>(i)];
    for (; next < ends.size() && ends[next].upper <= lower; ++next) {
      // Each one's use table row is a cache miss: fetched a few ahead.
      if (next + kAhead < ends.size()) {
        __builtin_prefetch(
            &uses_.last_begin[static_cast<size_t>(buffers_[by_upper_[next + kAhead]])]);
      }
      if (ends[next].counted) AddLastUses(by_upper_[next], 1);
    }
    if (!CanFollow(static_cast<size_t>(i))) continue;
    acquire[i] = lower;
    count[i] = LaterLastUses(static_cast<size_t>(i));
    const int32_t* meet = uses_.Meet(static_cast<size_t>(buffers_[i]));
    for (size_t t = 0; t < k_; ++t) {
      // positions_[t][j]: the plan position of the j-th node of stream t.
      const BigVector<int64_t>& positions = positions_[t];
      const int32_t seen = meet[t];
      if (seen + 1 >= 0 && static_cast<size_t>(seen + 1) < positions.size())
        acquire[i] = std::min(acquire[i], positions[static_cast<size_t>(seen + 1)]);
    }
  }
  first_back_ = count;
  for (size_t t = 0; t < k_; ++t) counters_[t].Reset(stream_nodes_[t].size());
}

// The backward counts of the `hot` buffers now: those of the first round
// less the buffers widened up since (their upper is the original one here,
// as `by_upper_` lists it).
void ConflictRounds::BackwardAgain(const BigVector<char>& hot, BigVector<int64_t>& count) {
  BigVector<int> removed;
  for (int a : by_upper_) {
    if (widened_up_[a]) removed.push_back(a);
  }
  size_t next = 0;
  for (int i : by_lower_) {
    if (!hot[i]) continue;
    const int64_t lower = lower_[static_cast<size_t>(i)];
    for (; next < removed.size() && Buf(static_cast<size_t>(removed[next])).upper <= lower; ++next)
      AddLastUses(removed[next], 1);
    count[i] = first_back_[i] - LaterLastUses(static_cast<size_t>(i));
  }
  for (size_t x = 0; x < next; ++x) AddLastUses(removed[x], -1);
}

// Rounds, like a greedy vertex cover of the conflict pairs: count every
// buffer's conflicts forward and backward against the current lifetimes;
// widen the buffers with at least half the largest count on that side (an
// all-reduce input that no later compute waits for; a mask made from
// nothing on its own stream); repeat until no count exceeds the limit.
// Counts only fall, so a buffer at or below the limit keeps its (stale)
// count: it can neither reach the threshold nor be the largest above it.
void ConflictRounds::Rounds(int64_t limit) {
  constexpr int kMaxRounds = 24;
  BigVector<int64_t> back_count, acquire, fwd_count(n_, 0), fwd_release(n_, 0);
  BigVector<char> hot_back(n_, 0);
  BigVector<int> hot_fwd;
  hot_fwd.reserve(n_);
  for (size_t i = 0; i < n_; ++i) {
    if (CanPrecede(i)) hot_fwd.push_back(static_cast<int>(i));
  }
  bool any_hot_back = true;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (round == 0) {
      Backward(back_count, acquire);
    } else if (any_hot_back) {
      BackwardAgain(hot_back, back_count);
    }
    CountFirsts();
    for (int i : hot_fwd) fwd_release[i] = Forward(static_cast<size_t>(i), fwd_count[i]);
    int64_t most = 0;
    for (size_t i = 0; i < n_; ++i) most = std::max({most, fwd_count[i], back_count[i]});
    if (most <= limit) break;
    const int64_t threshold = std::max(limit + 1, most / 2);
    for (size_t i = 0; i < n_; ++i) {
      if (fwd_count[i] >= threshold && fwd_count[i] >= back_count[i]) {
        WidenUp(i, fwd_release[i]);
        if (widened_up_[i]) fwd_count[i] = 0;
      } else if (back_count[i] >= threshold) {
        WidenLow(i, acquire[i]);
        if (widened_low_[i]) back_count[i] = 0;
      }
    }
    std::erase_if(hot_fwd, [&](int i) { return widened_up_[i] || fwd_count[i] <= limit; });
    any_hot_back = false;
    for (size_t i = 0; i < n_; ++i) {
      hot_back[i] = !widened_low_[i] && back_count[i] > limit ? 1 : 0;
      any_hot_back = any_hot_back || hot_back[i];
    }
  }
}

// Exact pairs for the rest (widened when still above the limit). The first
// uses of each stream in (position, buffer) order: bucketed by position.
void ConflictRounds::ExactPairs(int64_t limit) {
  CountFirsts();
  std::vector<BigVector<int32_t>> by_first(k_);
  std::vector<BigVector<int32_t>> fill(below_);
  for (size_t t = 0; t < k_; ++t) by_first[t].resize(static_cast<size_t>(below_[t].back()));
  for (size_t i = 0; i < n_; ++i) {
    if (widened_low_[i]) continue;
    for (int32_t f = first_begin_[i]; f < first_begin_[i + 1]; ++f) {
      const auto [t, q] = firsts_[static_cast<size_t>(f)];
      by_first[static_cast<size_t>(t)]
              [static_cast<size_t>(fill[static_cast<size_t>(t)][static_cast<size_t>(q)]++)] =
                  static_cast<int32_t>(i);
    }
  }
  for (size_t i = 0; i < n_; ++i) {
    if (!CanPrecede(i) || widened_up_[i]) continue;
    int64_t count = 0;
    const int64_t e = Forward(i, count);
    if (count == 0) continue;
    if (count > limit) {
      WidenUp(i, e);
      continue;
    }
    for (size_t t = 0; t < k_; ++t) {
      for (int64_t x = UpperBelow(i, t); x < ReleaseBelow(i, t); ++x) {
        const int j = by_first[t][static_cast<size_t>(x)];
        if (lower_[static_cast<size_t>(j)] < out_.upper[i]) continue;  // overlapping in time
        out_.pairs.emplace_back(std::min<int>(static_cast<int>(i), j),
                                std::max<int>(static_cast<int>(i), j));
      }
    }
  }
  for (size_t i = 0; i < n_; ++i) out_.extended += (widened_up_[i] || widened_low_[i]) ? 1 : 0;
  std::sort(out_.pairs.begin(), out_.pairs.end());
  out_.pairs.erase(std::unique(out_.pairs.begin(), out_.pairs.end()), out_.pairs.end());
}
}  // namespace

StreamAwareReuse::PlanningConflicts StreamAwareReuse::Conflicts(
    const std::vector<int>& buffers, int64_t max_pairs_per_buffer) const {
  PlanningConflicts out;
  const size_t n = buffers.size();
  out.lower.resize(n);
  out.upper.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.lower[i] = lt_.buffers[buffers[i]].lower;
    out.upper[i] = lt_.buffers[buffers[i]].upper;
  }
  if (lt_.flat_loops) {
    out.pairs = ExtraConflicts(buffers);
    return out;
  }
  const size_t k = static_cast<size_t>(hb_.num_lanes());
  ConflictRounds rounds(buffers, lt_, hb_, uses_, StreamNodes(), out);
  rounds.WidenUnordered();
  // F_t(a) per buffer and stream (fixed).
  BigVector<int64_t> release(n * k, std::numeric_limits<int64_t>::max());
  ReleaseSearch search = MakeReleaseSearch(n);
  for (size_t i = 0; i < n; ++i) {
    if (rounds.CanPrecede(i)) ReleasePositions(buffers[i], release.data() + i * k, search);
  }
  search = {};
  rounds.set_release(std::move(release));
  rounds.Prepare();
  rounds.AtIndices();
  rounds.Rounds(max_pairs_per_buffer);
  rounds.ExactPairs(max_pairs_per_buffer);
  return out;
}

}  // namespace npuplan::memory
