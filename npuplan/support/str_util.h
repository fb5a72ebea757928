// String helpers. Debian's abseil 20220623 has its own absl::string_view (not
// std::string_view), so absl::StrCat rejects std::string_view: use these.
#ifndef NPUPLAN_SUPPORT_STR_UTIL_H_
#define NPUPLAN_SUPPORT_STR_UTIL_H_

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace npuplan {

namespace internal {
template <typename T>
void AppendPiece(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, absl::string_view>) {
    out.append(v.data(), v.size());
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}
}  // namespace internal

// Concatenates strings, string_views, numbers and anything fmt can format.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (internal::AppendPiece(out, args), ...);
  return out;
}

// Joins the elements of `range` with `sep`.
template <typename Range>
std::string StrJoin(const Range& range, std::string_view sep) {
  return fmt::format("{}", fmt::join(range, sep));
}

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_STR_UTIL_H_
