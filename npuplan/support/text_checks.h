// Checks every text reader runs on its input before parsing it (JSON, CSV and
// the kernel solution files alike).
#ifndef NPUPLAN_SUPPORT_TEXT_CHECKS_H_
#define NPUPLAN_SUPPORT_TEXT_CHECKS_H_

#include <string_view>

#include "absl/status/status.h"

namespace npuplan {

// InvalidArgument "<source>: starts with a UTF-8 byte order mark (BOM) …" (also
// for UTF-16/32 marks) when `text` starts with one; OK otherwise. A BOM would
// otherwise surface as an unknown CSV column, a JSON syntax error at offset 1,
// or be skipped by one reader and not by another.
absl::Status CheckNoByteOrderMark(std::string_view text, std::string_view source);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_TEXT_CHECKS_H_
