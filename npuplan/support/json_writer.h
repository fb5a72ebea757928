// Streaming JSON writer whose output is byte-identical to nlohmann's
// `json::dump(indent)` of the same document (the graph and plan writers use it
// to write 1M-node files without building a DOM first). The caller emits keys
// in sorted order, as nlohmann's std::map-backed objects would; `Value()`
// splices a small nlohmann DOM in at the current indentation.
//
// Two destinations: a string that receives the whole text, or a sink that
// receives it in chunks of at most kChunkBytes, so that a 1M-node plan goes to its
// file without ever being whole in memory. Either way the text is batched in
// a buffer and complete only after Flush() or Finish() (a string writer's
// destructor also flushes it).
//
// Strings are escaped as nlohmann does (\", \\, \b \f \n \r \t, other control
// bytes as \u00xx, UTF-8 passed through); invalid UTF-8, which nlohmann's
// strict dump would throw on, is written with U+FFFD replacements instead.
#ifndef NPUPLAN_SUPPORT_JSON_WRITER_H_
#define NPUPLAN_SUPPORT_JSON_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace npuplan {

// Receives a streamed document's text, chunk after chunk. The first error it
// returns ends the output: later text is dropped and Finish() returns it.
using JsonChunkSink = std::function<absl::Status(std::string_view)>;

// Appends `s` as a JSON string, quotes included, exactly as JsonWriter writes
// it (nlohmann's escaping; invalid UTF-8 replaced): for text built outside a
// writer and handed to JsonWriter::Raw.
void AppendJsonString(std::string& out, std::string_view s);

class JsonWriter {
 public:
  // The sink's chunks are at most this long (a longer string aside).
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  // Appends to *out. indent < 0: compact (dump()); >= 0: pretty (dump(indent)).
  explicit JsonWriter(std::string* out, int indent = 1);
  // Streams to `sink`.
  JsonWriter(JsonChunkSink sink, int indent);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // Key of the next object member (must be inside an object).
  void Key(std::string_view key);

  void String(std::string_view s);
  // The string "<name>:<index>" (a graph's input reference), without building it.
  void StringWithIndex(std::string_view name, int64_t index);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();
  // A whole value from a DOM, formatted as if it were part of this document.
  void Value(const nlohmann::json& j);
  // Text outside the JSON grammar (a final newline).
  void Raw(std::string_view text) { Put(text); }

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

  // Moves the buffered text to the string or the sink.
  void Flush();
  // Streaming: Flush(), then the sink's first error.
  absl::Status Finish();

 private:
  static constexpr size_t kMaxIntChars = 20;  // "-9223372036854775808"

  // Room for n more bytes at the returned position (pos_).
  char* Room(size_t n) {
    if (static_cast<size_t>(end_ - pos_) < n) Grow(n);
    return pos_;
  }
  void Put(char c) { *Room(1) = c, ++pos_; }
  void Put(std::string_view s);
  void PutInt(int64_t v);
  void PutEscaped(std::string_view s);
  template <bool kKey>
  void PutQuoted(std::string_view s);
  void Allocate();
  void Grow(size_t n);
  void BeforeValue();
  void Newline(size_t level);

  std::string* out_ = nullptr;  // null: streaming to sink_
  int indent_;
  // One entry per open container: whether it has had a member yet.
  std::vector<uint8_t> has_member_;
  bool after_key_ = false;
  // The text not yet drained: [buf_, pos_) of capacity_ bytes.
  std::unique_ptr<char[]> buf_;
  char* pos_ = nullptr;
  char* end_ = nullptr;
  size_t capacity_;
  JsonChunkSink sink_;
  absl::Status status_;  // the sink's first error
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_JSON_WRITER_H_
