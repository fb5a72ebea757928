// Progress of long work on a terminal: one line on stderr, rewritten in place
// ("report: simulating 35,176 tasks", "run 37/100"), at most ten times a
// second, cleared when done. Silent when stderr is not a terminal (piped,
// redirected, under ctest) or with -q, so outputs and logs never contain it.
#ifndef NPUPLAN_TOOLS_NPUPLAN_PROGRESS_H_
#define NPUPLAN_TOOLS_NPUPLAN_PROGRESS_H_

#include <chrono>
#include <string>
#include <string_view>

namespace npuplan::cli {

class Progress {
 public:
  // `what` prefixes every line ("report"); off when quiet or stderr is no tty.
  Progress(std::string what, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  // A new stage: always shown.
  void Stage(std::string_view text);
  // Counted work: shown when 100 ms passed since the last line.
  void Count(std::string_view text, size_t done, size_t total);
  // Clears the line.
  void Done();

 private:
  void Show(const std::string& line);
  std::string what_;
  bool enabled_ = false;
  size_t width_ = 0;  // of the line on screen
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_PROGRESS_H_
