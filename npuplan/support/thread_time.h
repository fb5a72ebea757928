// Time measured on one thread: what a step costs when other threads run
// alongside it (std::clock counts the whole process).
#ifndef NPUPLAN_SUPPORT_THREAD_TIME_H_
#define NPUPLAN_SUPPORT_THREAD_TIME_H_

#include <chrono>
#include <ctime>

namespace npuplan {

// CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID).
inline double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Wall and CPU time of the calling thread since construction.
class ThreadTimer {
 public:
  ThreadTimer() : wall_(std::chrono::steady_clock::now()), cpu_(ThreadCpuSeconds()) {}
  double WallSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
  }
  double CpuSeconds() const { return ThreadCpuSeconds() - cpu_; }

 private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_THREAD_TIME_H_
