// File helpers. Writes are atomic (temp file + rename) so that a failed run
// never leaves a half-written output behind.
#ifndef NPUPLAN_SUPPORT_FILE_UTIL_H_
#define NPUPLAN_SUPPORT_FILE_UTIL_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan {

// Reads a whole file; NotFound / InvalidArgument naming the path on failure.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Writes `content` to `path` via `path.tmp.<pid>` and rename(2).
absl::Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_FILE_UTIL_H_
