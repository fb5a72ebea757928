#include "npuplan/exec/memory_race_checker.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include "npuplan/ir/in_place_writes.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::exec {
namespace {

constexpr int32_t kUnknown = std::numeric_limits<int32_t>::max();

// One task run: where it ran and which task runs finish before it starts.
struct TaskRun {
  NodeId node;
  int32_t attached = -1;
  int32_t run = 0;
  int32_t lane = 0;    // RunClocks: a chain of task runs
  int32_t pos = 0;     // 1-based on its lane
  size_t version = 0;  // its stream's clock when it starts (RunClocks::versions)
};

// Per node: the pool buffers its tasks touch, each once, written when one of
// its outputs or its workspace is that buffer (NodeTouchesOf).
struct NodeTouches {
  std::vector<uint32_t> begin{0};              // node i: list[begin[i], begin[i + 1])
  std::vector<std::pair<int32_t, bool>> list;  // (buffer, written)
  std::span<const std::pair<int32_t, bool>> of(NodeId n) const {
    return {list.data() + begin[n.index()], list.data() + begin[n.index() + 1]};
  }
  bool any(NodeId n) const { return begin[n.index() + 1] > begin[n.index()]; }
};

// The run's task runs in a linear order that respects every wait, with
// their start clocks: entry l = how many task runs of lane l finish before
// the task starts.
// Lanes: vector clocks are exact over any partition of the task runs into
// chains, and a stream is one only while nothing else joins it. A stream's
// task goes on the lowest closed lane (no stream appending to it) whose task
// runs it all knows to be done, when there is one below its own: the
// physical pieces of a logical stream, which run one after another, end up
// on a few lanes rather than one each. The lane it leaves closes.
// A stream's clock changes only at a wait or a lane change (its own lane's
// entry is pos - 1), so the task runs in between share one stored version;
// a version holds the lanes its stream knew then (later ones: 0).
struct RunClocks {
  size_t lanes = 0;
  std::vector<TaskRun> tasks;
  std::vector<int32_t> versions;
  std::vector<size_t> version_begin{0};  // version v: versions[begin[v], begin[v + 1])
  int32_t Known(size_t t, size_t l) const {
    const TaskRun& x = tasks[t];
    if (static_cast<int32_t>(l) == x.lane) return x.pos - 1;
    const size_t at = version_begin[x.version] + l;
    return at < version_begin[x.version + 1] ? versions[at] : 0;
  }
};

// Only tasks of nodes that touch the pool (`touches`) take a place on a
// lane; the others (Send, Recv, gates, StreamActive…) have their order
// carried by the waits and records around them. `skipped` says why when the
// stored entries would pass `budget`.
absl::StatusOr<RunClocks> ComputeRunClocks(const sim::PlanProgram& program,
                                           const NodeTouches& touches, uint64_t budget,
                                           std::string& skipped) {
  RunClocks out;
  const size_t k = program.streams.size();
  std::vector<std::vector<int32_t>> cur(k);  // per stream: its clock over the lanes it knows
  std::vector<size_t> version(k, 0);
  std::vector<uint8_t> changed(k, 1);  // cur[s] or its lane differ from its last stored version
  constexpr int32_t kNone = -1;
  std::vector<int32_t> lane_of(k, kNone);
  std::vector<int32_t> lane_size,
      lane_owner;  // per lane: task runs; the stream appending (kNone: closed)
  constexpr size_t kNotYet = std::numeric_limits<size_t>::max();
  // Per stream and item: where its record's snapshot is ({offset, width}).
  std::vector<std::vector<std::pair<size_t, size_t>>> record_at(k);
  for (size_t s = 0; s < k; ++s) record_at[s].assign(program.streams[s].items.size(), {kNotYet, 0});
  std::vector<int32_t> snapshots;
  std::vector<size_t> next(k, 0);
  // Round-robin over the streams, each as far as its waits allow: a wait may
  // bind to a record enqueued after it (notifies).
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t s = 0; s < k; ++s) {
      const std::vector<sim::ProgramItem>& items = program.streams[s].items;
      std::vector<int32_t>& c = cur[s];
      for (; next[s] < items.size(); ++next[s], progress = true) {
        const sim::ProgramItem& it = items[next[s]];
        if (it.kind == sim::ProgramItem::Kind::kWait) {
          if (it.bound_stream < 0) continue;
          const size_t bs = static_cast<size_t>(it.bound_stream);
          if (bs >= k || it.bound_item < 0 ||
              static_cast<size_t>(it.bound_item) >= record_at[bs].size()) {
            return absl::InvalidArgumentError("a wait of the program binds to no item");
          }
          const auto [at, width] = record_at[bs][static_cast<size_t>(it.bound_item)];
          if (at == kNotYet) break;  // its record has not run yet
          if (c.size() < width) c.resize(width, 0);
          for (size_t x = 0; x < width; ++x) {
            if (snapshots[at + x] > c[x]) {
              c[x] = snapshots[at + x];
              changed[s] = 1;
            }
          }
          continue;
        }
        if (it.kind == sim::ProgramItem::Kind::kRecord) {
          record_at[s][next[s]] = {snapshots.size(), c.size()};
          snapshots.insert(snapshots.end(), c.begin(), c.end());
          continue;
        }
        if (!it.node.valid() || it.node.index() + 1 >= touches.begin.size() ||
            !touches.any(it.node)) {
          continue;
        }
        if (lane_of[s] == kNone || changed[s]) {
          const int32_t below =
              lane_of[s] == kNone ? static_cast<int32_t>(lane_size.size()) : lane_of[s];
          for (int32_t l = 0; l < below; ++l) {
            const size_t ul = static_cast<size_t>(l);
            if (lane_owner[ul] != kNone || ul >= c.size() || c[ul] < lane_size[ul]) continue;
            if (lane_of[s] != kNone) lane_owner[static_cast<size_t>(lane_of[s])] = kNone;
            lane_of[s] = l;
            lane_owner[ul] = static_cast<int32_t>(s);
            changed[s] = 1;
            break;
          }
          if (lane_of[s] == kNone) {
            lane_of[s] = static_cast<int32_t>(lane_size.size());
            lane_size.push_back(0);
            lane_owner.push_back(static_cast<int32_t>(s));
          }
        }
        const size_t l = static_cast<size_t>(lane_of[s]);
        if (c.size() <= l) c.resize(l + 1, 0);
        if (changed[s]) {
          if (snapshots.size() + out.versions.size() + c.size() > budget) {
            skipped = StrCat("its clocks passed ", budget, " entries at task run ",
                             out.tasks.size(), " (", lane_size.size(), " lanes)");
            return out;
          }
          version[s] = out.version_begin.size() - 1;
          out.versions.insert(out.versions.end(), c.begin(), c.end());
          out.version_begin.push_back(out.versions.size());
          changed[s] = 0;
        }
        out.tasks.push_back(TaskRun{it.node, it.attached, it.run, static_cast<int32_t>(l),
                                    ++lane_size[l], version[s]});
        c[l] = lane_size[l];  // what follows on s starts after the task finished
      }
      // A stream that is done closes its lane.
      if (next[s] == items.size() && lane_of[s] != kNone &&
          lane_owner[static_cast<size_t>(lane_of[s])] == static_cast<int32_t>(s)) {
        lane_owner[static_cast<size_t>(lane_of[s])] = kNone;
      }
    }
  }
  for (size_t s = 0; s < k; ++s) {
    if (next[s] < program.streams[s].items.size()) {
      return absl::InvalidArgumentError(StrCat("the program cannot complete: stream ",
                                               program.streams[s].plan_stream,
                                               " waits forever at item ", next[s]));
    }
  }
  out.lanes = lane_size.size();
  return out;
}

// A logical buffer's touches in the run (one iteration's, when it is
// iteration-local).
struct Instance {
  int32_t buffer = 0;
  int32_t run = 0;
  size_t first = 0;             // its first touching task run
  std::vector<int32_t> last;    // per lane: position of its last touch there (0 none)
  std::vector<int32_t> known;   // per lane: min over its touches of their start clocks
  std::vector<size_t> touches;  // task runs, in order
  size_t last_write = kNoTask;  // its latest write the hazard check holds to
  static constexpr size_t kNoTask = std::numeric_limits<size_t>::max();
};

// Every touch of `a` finishes before any touch of `b` starts; else the
// lane where that fails (-1 when ordered).
int64_t Unordered(const Instance& a, const Instance& b) {
  for (size_t s = 0; s < a.last.size(); ++s) {
    if (a.last[s] > b.known[s]) return static_cast<int64_t>(s);
  }
  return -1;
}

// A node whose task computes on its tensors: not a control-flow owner, nor a
// node that passes a value on under another name (a subgraph's Data or
// NetOutput, the flat-loop plumbing), whose outputs alias what it reads.
bool MovesData(const Node& n) { return n.subgraphs.empty() && !IsPassOnType(n.type); }

// A byte range of the pool a buffer occupies.
struct Range {
  int64_t begin = 0, end = 0;
};

// The pool placements of each buffer (normally one range; a plan that
// places aliases apart keeps all of them).
std::vector<std::vector<Range>> PoolRanges(const Plan& plan, const memory::TensorLifetimes& lt) {
  std::vector<std::vector<Range>> ranges(lt.buffers.size());
  for (const TensorPlacement& tp : plan.memory.tensors) {
    if (!IsPoolRegion(tp.region) || tp.size <= 0 || !tp.node.valid() ||
        tp.node.index() >= plan.model.num_nodes()) {
      continue;
    }
    const auto it = lt.buffer_of.find(memory::TensorRef{tp.node, tp.output});
    if (it == lt.buffer_of.end()) continue;
    std::vector<Range>& rs = ranges[static_cast<size_t>(it->second)];
    const int64_t end = tp.offset > std::numeric_limits<int64_t>::max() - tp.size
                            ? std::numeric_limits<int64_t>::max()
                            : tp.offset + tp.size;
    const Range r{tp.offset, end};
    if (std::none_of(rs.begin(), rs.end(),
                     [&](const Range& x) { return x.begin == r.begin && x.end == r.end; })) {
      rs.push_back(r);
    }
  }
  return ranges;
}

// What each node's tasks touch: its data inputs (read), its outputs and its
// workspace (written), those with a pool placement, one entry per buffer.
NodeTouches NodeTouchesOf(const Model& m, const memory::TensorLifetimes& lt,
                          const std::vector<std::vector<Range>>& ranges) {
  NodeTouches out;
  out.begin.reserve(m.num_nodes() + 1);
  std::vector<std::pair<int32_t, bool>> one;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId n(static_cast<int32_t>(i));
    const Node& node = m.node(n);
    one.clear();
    auto add = [&](memory::TensorRef r, bool write) {
      const auto it = lt.buffer_of.find(r);
      if (it != lt.buffer_of.end() && !ranges[static_cast<size_t>(it->second)].empty())
        one.emplace_back(it->second, write);
    };
    for (const OutputRef& in : node.inputs) add(memory::TensorRef{in.node, in.index}, false);
    for (size_t o = 0; o < node.outputs.size(); ++o)
      add(memory::TensorRef{n, static_cast<int32_t>(o)}, true);
    add(memory::TensorRef{n, memory::TensorRef::kWorkspace}, true);
    // One entry per buffer, written when any of them writes.
    std::sort(one.begin(), one.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    for (size_t k = 0; k < one.size(); ++k) {
      if (k == 0 || one[k].first != one[k - 1].first) out.list.push_back(one[k]);
    }
    out.begin.push_back(static_cast<uint32_t>(out.list.size()));
  }
  return out;
}

class Checker {
 public:
  Checker(const Plan& plan, const memory::TensorLifetimes& lt,
          std::vector<std::vector<Range>> ranges, NodeTouches touches, RunClocks clocks)
      : plan_(plan),
        lt_(lt),
        rc_(std::move(clocks)),
        ranges_(std::move(ranges)),
        touches_(std::move(touches)) {}

  MemoryRaceReport Run() {
    CollectInstances();
    MemoryRaceReport report;
    report.lanes = rc_.lanes;
    report.instances = instances_.size();

    std::vector<size_t> order(instances_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(instances_[a].first, instances_[a].buffer) <
             std::tie(instances_[b].first, instances_[b].buffer);
    });
    // Per byte range: the instance that touched it last (begin → {end, instance}).
    std::map<int64_t, std::pair<int64_t, size_t>> owner;
    std::vector<size_t> previous;
    for (size_t b : order) {
      previous.clear();
      for (const Range& r : ranges_[static_cast<size_t>(instances_[b].buffer)]) {
        Split(owner, r.begin);
        Split(owner, r.end);
        for (auto it = owner.lower_bound(r.begin); it != owner.end() && it->first < r.end;) {
          previous.push_back(it->second.second);
          it = owner.erase(it);
        }
        owner.emplace(r.begin, std::make_pair(r.end, b));
      }
      std::sort(previous.begin(), previous.end());
      previous.erase(std::unique(previous.begin(), previous.end()), previous.end());
      for (size_t a : previous) {
        if (a == b) continue;
        ++report.checked;
        const int64_t s = Unordered(instances_[a], instances_[b]);
        if (s < 0) continue;
        ++report.races;
        if (report.messages.size() < MemoryRaceReport::kMaxMessages) {
          report.messages.push_back(Describe(instances_[a], instances_[b], static_cast<size_t>(s)));
        }
      }
    }
    report.hazards = hazards_;
    for (std::string& m : hazard_messages_) {
      if (report.messages.size() == MemoryRaceReport::kMaxMessages) break;
      report.messages.push_back(std::move(m));
    }
    return report;
  }

 private:
  // A boundary at x (the segment holding x is cut in two).
  static void Split(std::map<int64_t, std::pair<int64_t, size_t>>& owner, int64_t x) {
    auto it = owner.upper_bound(x);
    if (it == owner.begin()) return;
    --it;
    if (it->first < x && it->second.first > x) {
      const std::pair<int64_t, size_t> right = it->second;
      it->second.first = x;
      owner.emplace(x, right);
    }
  }

  // Task run t touches buffer b (writes it when `write`).
  void Touch(size_t t, int32_t b, bool write) {
    const TaskRun& x = rc_.tasks[t];
    const int32_t run = lt_.buffers[static_cast<size_t>(b)].iteration_loop >= 0 ? x.run : 0;
    auto [slot, fresh] = instance_of_.emplace(std::make_pair(b, run), instances_.size());
    if (fresh) {
      Instance in;
      in.buffer = b;
      in.run = run;
      in.first = t;
      in.last.assign(rc_.lanes, 0);
      in.known.assign(rc_.lanes, kUnknown);
      instances_.push_back(std::move(in));
    }
    Instance& in = instances_[slot->second];
    if (!in.touches.empty() && in.touches.back() == t) return;
    if (write && !fresh) CheckWrite(in, t);
    if (!write && in.last_write != Instance::kNoTask && hazard_node_[x.node.index()] &&
        x.attached < 0) {
      CheckRead(in, t);
    }
    if (write) in.last_write = t;
    in.touches.push_back(t);
    in.last[static_cast<size_t>(x.lane)] = std::max(in.last[static_cast<size_t>(x.lane)], x.pos);
    for (size_t l = 0; l < rc_.lanes; ++l) in.known[l] = std::min(in.known[l], rc_.Known(t, l));
  }

  // A write must come after every earlier touch of its buffer instance by
  // another node run (its own node's other tasks, the attached ones, run
  // with it): else it overwrites what a reader may still read, or what a
  // reader has not read yet.
  void CheckWrite(const Instance& in, size_t t) {
    const TaskRun& w = rc_.tasks[t];
    for (size_t l = 0; l < rc_.lanes; ++l) {
      const int32_t known = rc_.Known(t, l);
      if (in.last[l] <= known) continue;
      // The latest touch on lane l by another node run that t does not know.
      // Positions grow along a lane in the touches' order: past the first
      // known one, all are known.
      for (auto it = in.touches.rbegin(); it != in.touches.rend(); ++it) {
        const TaskRun& x = rc_.tasks[*it];
        if (static_cast<size_t>(x.lane) != l) continue;
        if (x.pos <= known) break;
        if ((x.node == w.node && x.run == w.run) || !hazard_node_[x.node.index()] ||
            x.attached >= 0)
          continue;
        ++hazards_;
        if (hazard_messages_.size() < MemoryRaceReport::kMaxMessages) {
          hazard_messages_.push_back(StrCat("memory hazard: ", Name(in), " is written by ", Slot(t),
                                            ", but ", Slot(*it),
                                            ", which touches it before, is not ordered before it"));
        }
        return;
      }
    }
  }

  // A read must come after the latest write of its buffer instance.
  void CheckRead(const Instance& in, size_t t) {
    const TaskRun& w = rc_.tasks[in.last_write];
    if (rc_.Known(t, static_cast<size_t>(w.lane)) >= w.pos) return;
    ++hazards_;
    if (hazard_messages_.size() < MemoryRaceReport::kMaxMessages) {
      hazard_messages_.push_back(StrCat("memory hazard: ", Name(in), " is read by ", Slot(t),
                                        ", but ", Slot(in.last_write),
                                        ", which writes it before, is not ordered before it"));
    }
  }

  void CollectInstances() {
    const Model& m = plan_.model;
    hazard_node_.assign(m.num_nodes(), 0);
    for (size_t i = 0; i < m.num_nodes(); ++i) hazard_node_[i] = MovesData(m.nodes()[i]);
    for (size_t t = 0; t < rc_.tasks.size(); ++t) {
      const NodeId n = rc_.tasks[t].node;
      if (!n.valid() || n.index() >= m.num_nodes()) continue;
      // Writes the hazard check holds to: main tasks of nodes that compute
      // (MovesData; an attached task's order inside its node is the kernel's).
      const bool writes = hazard_node_[n.index()] && rc_.tasks[t].attached < 0;
      for (const auto& [b, written] : touches_.of(n)) Touch(t, b, written && writes);
    }
  }

  std::string Name(const Instance& in) const {
    const memory::LogicalBuffer& b = lt_.buffers[static_cast<size_t>(in.buffer)];
    std::string ranges;
    for (const Range& r : ranges_[static_cast<size_t>(in.buffer)]) {
      ranges += StrCat(ranges.empty() ? "" : ", ", "[", r.begin, ", ", r.end, ")");
    }
    return StrCat("'", b.name, "'",
                  b.iteration_loop >= 0 ? StrCat(" (iteration run ", in.run, ")") : "", " at ",
                  ranges);
  }

  std::string Slot(size_t t) const {
    const TaskRun& x = rc_.tasks[t];
    return StrCat(sim::SlotName(plan_, x.node, x.attached),
                  x.run > 0 ? StrCat(" (run ", x.run, ")") : "");
  }

  // The witness on lane s: a's last touch there, and a touch of b that
  // starts without knowing it finished.
  std::string Describe(const Instance& a, const Instance& b, size_t s) const {
    size_t x = a.touches.front(), y = b.touches.front();
    for (size_t t : a.touches) {
      if (static_cast<size_t>(rc_.tasks[t].lane) == s && rc_.tasks[t].pos == a.last[s]) x = t;
    }
    for (size_t t : b.touches) {
      if (rc_.Known(t, s) < a.last[s]) {
        y = t;
        break;
      }
    }
    return StrCat("memory race: ", Name(a), " and ", Name(b), " overlap, but ", Slot(x),
                  " is not ordered before ", Slot(y), " in this run");
  }

  const Plan& plan_;
  const memory::TensorLifetimes& lt_;
  RunClocks rc_;
  std::vector<std::vector<Range>> ranges_;  // per buffer
  NodeTouches touches_;
  std::map<std::pair<int32_t, int32_t>, size_t> instance_of_;
  std::vector<Instance> instances_;
  size_t hazards_ = 0;
  std::vector<uint8_t> hazard_node_;  // per node: its touches count in the hazard check
  std::vector<std::string> hazard_messages_;
};

}  // namespace

absl::StatusOr<MemoryRaceReport> MemoryRaceChecker::Check(const Plan& plan,
                                                          const sim::PlanProgram& program,
                                                          uint64_t budget) {
  if (!plan.memory.planned) return MemoryRaceReport{};

  absl::StatusOr<memory::TensorLifetimes> lt =
      memory::ComputeTensorLifetimes(plan.model, plan.memory.alignment);
  if (!lt.ok()) {
    return absl::InvalidArgumentError(StrCat("memory race check: ", lt.status().message()));
  }
  std::vector<std::vector<Range>> ranges = PoolRanges(plan, *lt);
  NodeTouches touches = NodeTouchesOf(plan.model, *lt, ranges);
  MemoryRaceReport skipped;
  absl::StatusOr<RunClocks> clocks = ComputeRunClocks(program, touches, budget, skipped.skipped);
  if (!clocks.ok()) {
    return absl::InvalidArgumentError(StrCat("memory race check: ", clocks.status().message()));
  }
  // The touches read a task run's clock in full: task runs x lanes.
  if (skipped.skipped.empty() && clocks->lanes > 0 &&
      clocks->tasks.size() > budget / clocks->lanes) {
    skipped.skipped = StrCat(clocks->tasks.size(), " task runs x ", clocks->lanes,
                             " lanes of clock reads pass ", budget);
  }
  if (!skipped.skipped.empty()) {
    skipped.skipped += " (its budget)";
    return skipped;
  }
  Checker checker(plan, *lt, std::move(ranges), std::move(touches), std::move(*clocks));
  return checker.Run();
}

}  // namespace npuplan::exec
