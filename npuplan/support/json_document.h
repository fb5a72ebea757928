// Strict JSON documents: nlohmann's DOM, but a key that appears twice in one
// object is an error naming its JSON path (nlohmann keeps the last value
// silently, so a reader walking the DOM could never see the first), and
// strings and nesting are bounded. The plan reader parses with it, so the
// graph inside a plan is held to the graph reader's own duplicate rule.
#ifndef NPUPLAN_SUPPORT_JSON_DOCUMENT_H_
#define NPUPLAN_SUPPORT_JSON_DOCUMENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace npuplan {

struct JsonDocumentLimits {
  int64_t max_string_bytes = int64_t{1} << 24;  // one string or key
  int64_t max_depth = 128;                      // arrays and objects inside each other
};

// InvalidArgument "<source>: not valid JSON: <nlohmann's message>",
// "<source>: $.a.b: duplicate key 'x'", or a limit naming the path.
absl::StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, std::string_view source,
                                                 const JsonDocumentLimits& limits = {});

// The string value of member `key` of the top-level object of `text`, found
// without building a DOM (values before it are skipped, not read); nullopt
// when the text is not an object with that member as a string. A member of a
// nested object never matches. Cheap enough to tell formats apart.
std::optional<std::string> TopLevelString(std::string_view text, std::string_view key);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_JSON_DOCUMENT_H_
