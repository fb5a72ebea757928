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
#include <vector>

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

// The checks of ParseJsonDocument, with the same messages, without building
// the document: for a reader that then takes it apart with JsonText.
absl::Status CheckJsonDocument(std::string_view text, std::string_view source,
                               const JsonDocumentLimits& limits = {});

// One JSON value held as text: an object's members or an array's elements are
// found by matching brackets, not read, and each is parsed on its own when
// asked for, so a large value never becomes one DOM. Any other value is parsed
// at once. Meant for text CheckJsonDocument accepted: the bracket matching
// finds the members of valid JSON only (invalid text gives an error or
// members that fail to parse); duplicate keys are its check, not this one's.
class JsonText {
 public:
  // InvalidArgument "<source>: not valid JSON: …" when `text` is not one value.
  static absl::StatusOr<JsonText> Of(std::string_view text, std::string_view source,
                                     const JsonDocumentLimits& limits = {});

  bool is_object() const { return kind_ == kObject; }
  bool is_array() const { return kind_ == kArray; }
  // Members sorted by key (the order of nlohmann's objects), elements in order.
  size_t size() const { return entries_.size(); }
  const std::string& key(size_t i) const { return entries_[i].key; }
  std::string_view text(size_t i) const { return entries_[i].text; }
  std::optional<size_t> Find(std::string_view key) const;
  // Entry `i` as a DOM (ParseJsonDocument with the source and limits given).
  absl::StatusOr<nlohmann::json> Parse(size_t i) const;
  // Entry `i` held as text in turn (a section inside a section).
  absl::StatusOr<JsonText> Open(size_t i) const;
  // An object's members but `key` as one DOM: the small fields beside a
  // large member.
  absl::StatusOr<nlohmann::json> ParseAllBut(std::string_view key) const;
  // The value itself when it is no object or array, else an empty one of its
  // kind: enough for a type check and its message.
  nlohmann::json Shape() const;

 private:
  enum Kind { kScalar, kObject, kArray };
  struct Entry {
    std::string key;
    std::string_view text;
  };
  Kind kind_ = kScalar;
  std::vector<Entry> entries_;
  nlohmann::json scalar_;
  std::string source_;
  JsonDocumentLimits limits_;
};

// The string value of member `key` of the top-level object of `text`, found
// without building a DOM (values before it are skipped, not read); nullopt
// when the text is not an object with that member as a string. A member of a
// nested object never matches. Cheap enough to tell formats apart.
std::optional<std::string> TopLevelString(std::string_view text, std::string_view key);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_JSON_DOCUMENT_H_
