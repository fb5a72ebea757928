// Random values for tests of the JSON writers against nlohmann's dump:
// integers at the extremes and name pieces that need escaping (quotes,
// backslashes, control bytes, non-ASCII).
#ifndef NPUPLAN_TESTING_RANDOM_JSON_VALUES_H_
#define NPUPLAN_TESTING_RANDOM_JSON_VALUES_H_

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace npuplan::testing {

// One piece of a name; with `escapes` false only the pieces written as they are.
inline const std::string& RandomNamePiece(std::mt19937_64& rng, bool escapes) {
  static const std::vector<std::string> pieces = {"a",  "_",    "9",      "\"", "\\",
                                                  "\n", "\x01", "\u00e9", "/"};
  constexpr size_t kPlain = 3;
  return pieces[rng() % (escapes ? pieces.size() : kPlain)];
}

// INT64_MIN, INT64_MAX, -1, a small value or any 64-bit one.
inline int64_t RandomExtremeInt(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return std::numeric_limits<int64_t>::min();
    case 1:
      return std::numeric_limits<int64_t>::max();
    case 2:
      return -1;
    case 3:
      return static_cast<int64_t>(rng() % 1000);
    default:
      return static_cast<int64_t>(rng());
  }
}

}  // namespace npuplan::testing

#endif  // NPUPLAN_TESTING_RANDOM_JSON_VALUES_H_
