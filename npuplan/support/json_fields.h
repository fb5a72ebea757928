// Typed reads of JSON values for npuplan's DOM readers (plan, kernel case,
// engine table). A wrong type or an out-of-range number is an InvalidArgument
// naming the file and the JSON path, never the json library's text:
//
//   p.json: $.nodes.add.tasks: expected an integer, found a string
//   p.json: $.events[3].send_attached: 4294967297 is out of range [-1, 0]
//
// Integers are exact: a float (even 3.0), a number beyond int64 or a value
// outside [lo, hi] is refused, so nothing is truncated on the way to a
// narrower type.
#ifndef NPUPLAN_SUPPORT_JSON_FIELDS_H_
#define NPUPLAN_SUPPORT_JSON_FIELDS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan {

// "a string", "an object", "1.5", "null", … for "found …" in messages.
std::string DescribeJsonValue(const nlohmann::json& v);

class JsonFields {
 public:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

  explicit JsonFields(std::string_view source) : source_(source) {}

  // InvalidArgument "<source>: <path>: <what>".
  absl::Status Error(std::string_view path, std::string_view what) const;

  // `v` itself.
  absl::StatusOr<int64_t> Int(const nlohmann::json& v, std::string_view path, int64_t lo = kMin,
                              int64_t hi = kMax) const;
  absl::StatusOr<std::string> String(const nlohmann::json& v, std::string_view path) const;
  absl::StatusOr<bool> Bool(const nlohmann::json& v, std::string_view path) const;
  absl::StatusOr<std::vector<int64_t>> IntList(const nlohmann::json& v, std::string_view path, int64_t lo = kMin,
                                               int64_t hi = kMax) const;
  absl::StatusOr<std::vector<std::string>> StringList(const nlohmann::json& v, std::string_view path) const;
  absl::StatusOr<std::map<std::string, int64_t>> IntMap(const nlohmann::json& v, std::string_view path,
                                                        int64_t lo = kMin, int64_t hi = kMax) const;
  absl::StatusOr<std::map<std::string, std::string>> StringMap(const nlohmann::json& v,
                                                               std::string_view path) const;
  // OK when `v` is an object / array; the error names the path otherwise.
  absl::Status Object(const nlohmann::json& v, std::string_view path) const;
  absl::Status Array(const nlohmann::json& v, std::string_view path) const;

  // Member `key` of the object `obj` (at `path`), nullptr when absent.
  static const nlohmann::json* Find(const nlohmann::json& obj, std::string_view key);

  // Optional members: `def` when absent; `path` is the object's.
  absl::StatusOr<int64_t> IntOr(const nlohmann::json& obj, std::string_view path, std::string_view key, int64_t def,
                                int64_t lo = kMin, int64_t hi = kMax) const;
  absl::StatusOr<std::string> StringOr(const nlohmann::json& obj, std::string_view path, std::string_view key,
                                       std::string def = "") const;
  absl::StatusOr<bool> BoolOr(const nlohmann::json& obj, std::string_view path, std::string_view key,
                              bool def) const;
  absl::StatusOr<std::vector<int64_t>> IntListOr(const nlohmann::json& obj, std::string_view path,
                                                 std::string_view key, int64_t lo = kMin, int64_t hi = kMax) const;
  absl::StatusOr<std::vector<std::string>> StringListOr(const nlohmann::json& obj, std::string_view path,
                                                        std::string_view key) const;
  // Required members: "missing field '<key>'" when absent.
  absl::StatusOr<int64_t> RequiredInt(const nlohmann::json& obj, std::string_view path, std::string_view key,
                                      int64_t lo = kMin, int64_t hi = kMax) const;
  absl::StatusOr<std::string> RequiredString(const nlohmann::json& obj, std::string_view path,
                                             std::string_view key) const;

  // "<path>.<key>" and "<path>[<i>]".
  static std::string Member(std::string_view path, std::string_view key);
  static std::string Element(std::string_view path, size_t i);

 private:
  std::string source_;
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_JSON_FIELDS_H_
