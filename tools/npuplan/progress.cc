#include "tools/npuplan/progress.h"

#include <unistd.h>

#include <cstdio>

#include "npuplan/support/str_util.h"

namespace npuplan::cli {

Progress::Progress(std::string what, bool quiet) : what_(std::move(what)) {
  enabled_ = !quiet && isatty(STDERR_FILENO) == 1;
}

Progress::~Progress() { Done(); }

void Progress::Show(const std::string& line) {
  const std::string text = StrCat(what_, ": ", line);
  std::fprintf(stderr, "\r%s%*s", text.c_str(), static_cast<int>(width_ > text.size() ? width_ - text.size() : 0), "");
  std::fflush(stderr);
  width_ = text.size();
  last_ = std::chrono::steady_clock::now();
}

void Progress::Stage(std::string_view text) {
  if (enabled_) Show(std::string(text));
}

void Progress::Count(std::string_view text, size_t done, size_t total) {
  if (!enabled_) return;
  if (done != total && std::chrono::steady_clock::now() - last_ < std::chrono::milliseconds(100)) return;
  Show(StrCat(text, " ", done, "/", total));
}

void Progress::Done() {
  if (!enabled_ || width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  std::fflush(stderr);
  width_ = 0;
}

}  // namespace npuplan::cli
