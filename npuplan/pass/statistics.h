// Named per-pass counters (MLIR Statistic / LLVM STATISTIC), printed by --stats.
#ifndef NPUPLAN_PASS_STATISTICS_H_
#define NPUPLAN_PASS_STATISTICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

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
  // "pass.counter = value" lines, sorted.
  std::string ToText() const {
    std::string out;
    for (const auto& [pass, cs] : counters_) {
      for (const auto& [name, v] : cs) out += pass + "." + name + " = " + std::to_string(v) + "\n";
    }
    return out;
  }

 private:
  std::map<std::string, std::map<std::string, int64_t>> counters_;
};

}  // namespace npuplan

#endif  // NPUPLAN_PASS_STATISTICS_H_
