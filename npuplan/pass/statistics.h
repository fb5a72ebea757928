// Named per-pass counters (MLIR Statistic / LLVM STATISTIC) and per-pass
// wall times, printed by --stats. Times are measurements (they differ from
// run to run): they never reach a plan or a log, only the --stats text.
#ifndef NPUPLAN_PASS_STATISTICS_H_
#define NPUPLAN_PASS_STATISTICS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/support/thread_time.h"

namespace npuplan {

class Statistics {
 public:
  void Add(std::string_view pass, std::string_view counter, int64_t delta = 1) {
    counters_[std::string(pass)][std::string(counter)] += delta;
    if (journal_) ops_.push_back({std::string(pass), std::string(counter), delta, /*set=*/false});
  }
  void Set(std::string_view pass, std::string_view counter, int64_t value) {
    counters_[std::string(pass)][std::string(counter)] = value;
    if (journal_) ops_.push_back({std::string(pass), std::string(counter), value, /*set=*/true});
  }
  // Statistics for passes that run beside others (PassPipeline): the
  // counters `this` has now (what they may read), no times, and a journal
  // of every counter change, so that AppendFrom later gives what recording
  // them here directly would have given.
  Statistics Buffer() const {
    Statistics b;
    b.counters_ = counters_;
    b.journal_ = true;
    return b;
  }
  // Replays a Buffer()'s counter changes and times, in the order recorded.
  void AppendFrom(const Statistics& buffer) {
    for (const CounterOp& op : buffer.ops_) {
      if (op.set) {
        Set(op.pass, op.counter, op.value);
      } else {
        Add(op.pass, op.counter, op.value);
      }
    }
    for (const StepTime& t : buffer.times_) AddSeconds(t.step, t.wall, t.cpu, t.part);
  }
  int64_t Get(std::string_view pass, std::string_view counter) const {
    auto p = counters_.find(std::string(pass));
    if (p == counters_.end()) return 0;
    auto c = p->second.find(std::string(counter));
    return c == p->second.end() ? 0 : c->second;
  }
  const std::map<std::string, std::map<std::string, int64_t>>& counters() const { return counters_; }
  // Wall and CPU time of one step (a pass, or a step of the command such as
  // reading the input), in the order the steps ran; a repeated name adds up.
  // A `part` is a stage inside the next step recorded (printed indented
  // after it, not added to the total).
  void AddSeconds(std::string_view step, double wall, double cpu, bool part = false) {
    for (StepTime& t : times_) {
      if (t.step == step) {
        t.wall += wall;
        t.cpu += cpu;
        return;
      }
    }
    times_.push_back({std::string(step), wall, cpu, part});
  }
  struct StepTime {
    std::string step;
    double wall = 0, cpu = 0;
    bool part = false;
  };
  const std::vector<StepTime>& times() const { return times_; }
  // "pass.counter = value" lines, sorted; then, when times were recorded, one
  // "time <wall> s <share>% cpu <cpu> s <step>" line per step in run order
  // and the total (CPU time tells the work on a shared machine).
  std::string ToText() const {
    std::string out;
    for (const auto& [pass, cs] : counters_) {
      for (const auto& [name, v] : cs) out += pass + "." + name + " = " + std::to_string(v) + "\n";
    }
    StepTime total{"total"};
    for (const StepTime& t : times_) {
      total.wall += t.part ? 0 : t.wall;
      total.cpu += t.part ? 0 : t.cpu;
    }
    auto row = [&out, &total](const StepTime& t) {
      char line[96];
      std::snprintf(line, sizeof line, "time %9.3f s %5.1f%%  cpu %9.3f s  ", t.wall,
                    total.wall > 0 ? 100.0 * t.wall / total.wall : 0.0, t.cpu);
      out += line + (t.part ? "  " + t.step : t.step) + "\n";
    };
    // Parts are recorded before the step that holds them: print them after it.
    size_t parts = 0;
    for (size_t i = 0; i < times_.size(); ++i) {
      if (times_[i].part) {
        ++parts;
        continue;
      }
      row(times_[i]);
      for (size_t j = i - parts; j < i; ++j) row(times_[j]);
      parts = 0;
    }
    if (!times_.empty()) row(total);
    return out;
  }

 private:
  struct CounterOp {
    std::string pass, counter;
    int64_t value = 0;
    bool set = false;  // Set, else Add
  };
  std::map<std::string, std::map<std::string, int64_t>> counters_;
  std::vector<StepTime> times_;
  bool journal_ = false;
  std::vector<CounterOp> ops_;
};

// While one exists on a thread, the StepTimers made on that thread measure
// the thread's own CPU time instead of the process's: its passes run beside
// another thread's (PassPipeline), whose work is not theirs.
class ThreadCpuTiming {
 public:
  ThreadCpuTiming() : was_(Flag()) { Flag() = true; }
  ~ThreadCpuTiming() { Flag() = was_; }
  ThreadCpuTiming(const ThreadCpuTiming&) = delete;
  ThreadCpuTiming& operator=(const ThreadCpuTiming&) = delete;
  static bool Active() { return Flag(); }

 private:
  static bool& Flag() {
    thread_local bool on = false;
    return on;
  }
  bool was_;
};

// Measures one step for Statistics::AddSeconds: wall time (steady clock)
// and the process's CPU time (std::clock; the passes are single-threaded),
// or the thread's under ThreadCpuTiming.
class StepTimer {
 public:
  StepTimer()
      : wall_(std::chrono::steady_clock::now()),
        thread_cpu_(ThreadCpuTiming::Active()),
        cpu_(CpuSeconds(thread_cpu_)) {}
  void Record(Statistics& stats, std::string_view step, bool part = false) const {
    stats.AddSeconds(
        step, std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count(),
        CpuSeconds(thread_cpu_) - cpu_, part);
  }
  // Records the time since the last mark (or construction) as a part, then
  // restarts: consecutive stages of one pass.
  void Lap(Statistics& stats, std::string_view part) {
    Record(stats, part, /*part=*/true);
    *this = StepTimer();
  }

 private:
  static double CpuSeconds(bool thread) {
    return thread ? ThreadCpuSeconds() : static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  }
  std::chrono::steady_clock::time_point wall_;
  bool thread_cpu_;
  double cpu_;
};

}  // namespace npuplan

#endif  // NPUPLAN_PASS_STATISTICS_H_
