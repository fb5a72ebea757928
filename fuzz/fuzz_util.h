// Shared helpers of the libFuzzer harnesses (fuzz/*_fuzz.cc).
//
// A harness must never crash, hang or trip a sanitizer on any input; a
// rejected input is an ordinary error Status. FUZZ_CHECK turns a broken
// invariant of an *accepted* input (e.g. a round trip that changes the model)
// into an abort so that libFuzzer records the input as a crash.
#ifndef NPUPLAN_FUZZ_FUZZ_UTIL_H_
#define NPUPLAN_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond, what)                                                       \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   std::string(what).c_str());                                       \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace npuplan::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace npuplan::fuzz

#endif  // NPUPLAN_FUZZ_FUZZ_UTIL_H_
