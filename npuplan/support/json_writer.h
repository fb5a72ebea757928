// Streaming JSON writer whose output is byte-identical to nlohmann's
// `json::dump(indent)` of the same document (the graph and plan writers use it
// to write 1M-node files without building a DOM first). The caller emits keys
// in sorted order, as nlohmann's std::map-backed objects would; `Value()`
// splices a small nlohmann DOM in at the current indentation.
//
// Strings are escaped as nlohmann does (\", \\, \b \f \n \r \t, other control
// bytes as \u00xx, UTF-8 passed through); invalid UTF-8, which nlohmann's
// strict dump would throw on, is written with U+FFFD replacements instead.
#ifndef NPUPLAN_SUPPORT_JSON_WRITER_H_
#define NPUPLAN_SUPPORT_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace npuplan {

class JsonWriter {
 public:
  // Appends to *out. indent < 0: compact (dump()); >= 0: pretty (dump(indent)).
  explicit JsonWriter(std::string* out, int indent = 1);

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // Key of the next object member (must be inside an object).
  void Key(std::string_view key);

  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();
  // A whole value from a DOM, formatted as if it were part of this document.
  void Value(const nlohmann::json& j);

  // Convenience: Key(k) then the value.
  void Field(std::string_view key, std::string_view s) { Key(key), String(s); }
  void Field(std::string_view key, const char* s) { Key(key), String(s); }
  void Field(std::string_view key, const std::string& s) { Key(key), String(s); }
  void Field(std::string_view key, int64_t v) { Key(key), Int(v); }
  void Field(std::string_view key, bool v) { Key(key), Bool(v); }
  template <typename T>
  void IntArray(const std::vector<T>& v) {
    BeginArray();
    for (const T& x : v) Int(static_cast<int64_t>(x));
    EndArray();
  }
  void StringArray(const std::vector<std::string>& v);

  // Appends `s` as a JSON string literal (with quotes) to *out.
  static void AppendEscaped(std::string* out, std::string_view s);

 private:
  void BeforeValue();
  void Newline(size_t level);

  std::string* out_;
  int indent_;
  // One entry per open container: whether it has had a member yet.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_JSON_WRITER_H_
