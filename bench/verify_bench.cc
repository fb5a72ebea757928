// The final verification and the plan writer on a written plan, stage by
// stage (issue #22 item 1): reads PLAN once, then --runs times runs
// verify::VerifyPlan (every check timed on its own) and WritePlanJson into a
// sink that only counts bytes. Prints per stage the least CPU time and the
// least user-space instruction count over the runs (instructions do not
// depend on the machine's load; "-" where perf counters are not available).
//
//   build/bin/verify_bench PLAN [--runs N] [--only verify|write|read]
//
// --only read times ParsePlanJson (the plan reader of `npuplan verify`) on
// the file's text, --runs times.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

// User-space instructions retired by this thread (-1: no counter).
class InstructionCounter {
 public:
  InstructionCounter() {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  }
  ~InstructionCounter() {
    if (fd_ >= 0) close(fd_);
  }
  int64_t Read() const {
    int64_t v = -1;
    if (fd_ < 0 || read(fd_, &v, sizeof(v)) != sizeof(v)) return -1;
    return v;
  }

 private:
  int fd_ = -1;
};

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Best {
  double cpu = 1e300;
  int64_t instructions = INT64_MAX;
  void Add(double c, int64_t i) {
    cpu = std::min(cpu, c);
    if (i >= 0) instructions = std::min(instructions, i);
  }
};

int Main(int argc, char** argv) {
  std::string path, only;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      path = a;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: verify_bench PLAN [--runs N] [--only verify|write|read]\n");
    return 2;
  }
  auto text = ReadFile(path);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", std::string(text.status().message()).c_str());
    return 1;
  }
  InstructionCounter counter;
  std::vector<std::string> order;
  std::map<std::string, Best> best;
  auto record = [&](const std::string& name, double cpu, int64_t ins) {
    if (!best.count(name)) order.push_back(name);
    best[name].Add(cpu, ins);
  };
  if (only == "read") {
    for (int r = 0; r < runs; ++r) {
      const double c0 = CpuSeconds();
      const int64_t i0 = counter.Read();
      auto plan = ParsePlanJson(*text, path);
      const int64_t i1 = counter.Read();
      record("read plan", CpuSeconds() - c0, i0 < 0 ? -1 : i1 - i0);
      if (!plan.ok()) {
        std::fprintf(stderr, "%s\n", std::string(plan.status().message()).c_str());
        return 1;
      }
    }
  } else {
    auto plan = ParsePlanJson(*text, path);
    if (!plan.ok()) {
      std::fprintf(stderr, "%s\n", std::string(plan.status().message()).c_str());
      return 1;
    }
    text->clear();
    text->shrink_to_fit();
    for (int r = 0; r < runs; ++r) {
      if (only.empty() || only == "verify") {
        const double total_c = CpuSeconds();
        const int64_t total_i = counter.Read();
        // Each check's CPU time on the thread that ran it (the memory check
        // runs on a second thread); instructions: this thread only, so the
        // whole without the memory check.
        absl::Status s = verify::VerifyPlan(*plan, [&](const verify::CheckTime& t) {
          record(StrCat("verify: ", t.check), t.cpu_seconds, -1);
        });
        record("verify (all)", CpuSeconds() - total_c, total_i < 0 ? -1 : counter.Read() - total_i);
        if (!s.ok()) {
          std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
          return 1;
        }
      }
      if (only.empty() || only == "write") {
        size_t bytes = 0;
        const double c0 = CpuSeconds();
        const int64_t i0 = counter.Read();
        absl::Status s = WritePlanJson(*plan, [&bytes](std::string_view chunk) {
          bytes += chunk.size();
          return absl::OkStatus();
        });
        const int64_t i1 = counter.Read();
        record(StrCat("write plan (", bytes, " bytes)"), CpuSeconds() - c0, i0 < 0 ? -1 : i1 - i0);
        if (!s.ok()) return 1;
      }
    }
  }
  for (const std::string& name : order) {
    const Best& b = best[name];
    if (b.instructions == INT64_MAX) {
      std::printf("%8.3f s  %10s  %s\n", b.cpu, "-", name.c_str());
    } else {
      std::printf("%8.3f s  %8.3f G  %s\n", b.cpu, static_cast<double>(b.instructions) * 1e-9,
                  name.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace npuplan

int main(int argc, char** argv) { return npuplan::Main(argc, argv); }
