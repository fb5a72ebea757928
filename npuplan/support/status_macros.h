// Status helpers missing from Debian's abseil 20220623 (XLA/TF style).
#ifndef NPUPLAN_SUPPORT_STATUS_MACROS_H_
#define NPUPLAN_SUPPORT_STATUS_MACROS_H_

#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NPUPLAN_STATUS_CONCAT_INNER(a, b) a##b
#define NPUPLAN_STATUS_CONCAT(a, b) NPUPLAN_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` is not OK.
#define NPUPLAN_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status npuplan_status_ = (expr);           \
    if (!npuplan_status_.ok()) return npuplan_status_; \
  } while (0)

// `lhs = value-of(rexpr)` or returns its error.
#define NPUPLAN_ASSIGN_OR_RETURN(lhs, rexpr) \
  NPUPLAN_ASSIGN_OR_RETURN_IMPL(NPUPLAN_STATUS_CONCAT(npuplan_so_, __LINE__), lhs, rexpr)
#define NPUPLAN_ASSIGN_OR_RETURN_IMPL(so, lhs, rexpr) \
  auto so = (rexpr);                                  \
  if (!so.ok()) return so.status();                   \
  lhs = std::move(so).value()

namespace npuplan::internal {
// Accumulates a message and converts to an Internal status naming file:line.
class RetCheckBuilder {
 public:
  RetCheckBuilder(const char* file, int line, const char* cond) {
    os_ << "RET_CHECK failure (" << file << ":" << line << ") " << cond << " ";
  }
  template <typename T>
  RetCheckBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  operator absl::Status() const { return absl::InternalError(os_.str()); }
  template <typename T>
  operator absl::StatusOr<T>() const {
    return absl::InternalError(os_.str());
  }

 private:
  std::ostringstream os_;
};
}  // namespace npuplan::internal

// Returns Internal("RET_CHECK failure (file:line) cond msg") when cond is false.
#define NPUPLAN_RET_CHECK(cond) \
  if (cond) {                   \
  } else                        \
    return ::npuplan::internal::RetCheckBuilder(__FILE__, __LINE__, #cond)

// Aborts on API misuse (never on bad input).
#define NPUPLAN_CHECK(cond)                                                        \
  do {                                                                             \
    if (!(cond)) ::npuplan::internal::CheckFailed(__FILE__, __LINE__, #cond);      \
  } while (0)

namespace npuplan::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond);
}

#endif  // NPUPLAN_SUPPORT_STATUS_MACROS_H_
