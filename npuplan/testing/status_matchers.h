// Local status matchers: gmock 1.12 + abseil 20220623 have no status_matchers.h.
#ifndef NPUPLAN_TESTING_STATUS_MATCHERS_H_
#define NPUPLAN_TESTING_STATUS_MATCHERS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status: " << s.ToString();
  return s.ok();
}

MATCHER_P(StatusIs, code, "has code " + absl::StatusCodeToString(code)) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s.ToString();
  return s.code() == code;
}

MATCHER_P2(StatusIs, code, substr, "has code and message containing " + std::string(substr)) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s.ToString();
  return s.code() == code && std::string(s.message()).find(substr) != std::string::npos;
}

}  // namespace npuplan::testing

#define NPUPLAN_ASSERT_OK_AND_ASSIGN(lhs, rexpr)            \
  auto NPUPLAN_STATUS_CONCAT(so_, __LINE__) = (rexpr);      \
  ASSERT_TRUE(NPUPLAN_STATUS_CONCAT(so_, __LINE__).ok())    \
      << NPUPLAN_STATUS_CONCAT(so_, __LINE__).status();     \
  lhs = std::move(NPUPLAN_STATUS_CONCAT(so_, __LINE__)).value()

#define NPUPLAN_STATUS_CONCAT_INNER(a, b) a##b
#define NPUPLAN_STATUS_CONCAT(a, b) NPUPLAN_STATUS_CONCAT_INNER(a, b)

#endif  // NPUPLAN_TESTING_STATUS_MATCHERS_H_
