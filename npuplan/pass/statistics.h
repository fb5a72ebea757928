// Named per-pass counters (MLIR Statistic / LLVM STATISTIC) and per-pass
// wall times, printed by --stats. Times are measurements (they differ from
// run to run): they never reach a plan or a log, only the --stats text.
#ifndef NPUPLAN_PASS_STATISTICS_H_
#define NPUPLAN_PASS_STATISTICS_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npuplan {

class Statistics {
 public:
  void Add(std::string_view pass, std::string_view counter, int64_t delta = 1) {
    counters_[std::string(pass)][std::string(counter)] += delta;
  }
  void Set(std::string_view pass, std::string_view counter, int64_t value) {
    counters_[std::string(pass)][std::string(counter)] = value;
  }
  int64_t Get(std::string_view pass, std::string_view counter) const {
    auto p = counters_.find(std::string(pass));
    if (p == counters_.end()) return 0;
    auto c = p->second.find(std::string(counter));
    return c == p->second.end() ? 0 : c->second;
  }
  const std::map<std::string, std::map<std::string, int64_t>>& counters() const { return counters_; }
  // Wall time of one step (a pass, or a step of the command such as reading
  // the input), in the order the steps ran; a repeated name adds up.
  void AddSeconds(std::string_view step, double seconds) {
    for (auto& [name, s] : times_) {
      if (name == step) {
        s += seconds;
        return;
      }
    }
    times_.emplace_back(std::string(step), seconds);
  }
  const std::vector<std::pair<std::string, double>>& times() const { return times_; }
  // "pass.counter = value" lines, sorted; then, when times were recorded, one
  // "time <seconds> s <share>% <step>" line per step in run order and the total.
  std::string ToText() const {
    std::string out;
    for (const auto& [pass, cs] : counters_) {
      for (const auto& [name, v] : cs) out += pass + "." + name + " = " + std::to_string(v) + "\n";
    }
    double total = 0;
    for (const auto& [name, s] : times_) total += s;
    char line[64];
    for (const auto& [name, s] : times_) {
      std::snprintf(line, sizeof line, "time %9.3f s %5.1f%% ", s, total > 0 ? 100.0 * s / total : 0.0);
      out += line + name + "\n";
    }
    if (!times_.empty()) {
      std::snprintf(line, sizeof line, "time %9.3f s 100.0%% total\n", total);
      out += line;
    }
    return out;
  }

 private:
  std::map<std::string, std::map<std::string, int64_t>> counters_;
  std::vector<std::pair<std::string, double>> times_;
};

}  // namespace npuplan

#endif  // NPUPLAN_PASS_STATISTICS_H_
