#include "npuplan/support/json_writer.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "npuplan/support/status_macros.h"

namespace npuplan {
namespace {

// Bytes JSON text cannot hold as they are: control bytes, '"', '\\', and
// (so that nlohmann validates or replaces them) every non-ASCII byte.
constexpr bool NeedsCare(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

// Whether one of the 8 bytes of `w` needs care (NeedsCare), all at once:
// the classic "has a byte less than n" and "has a zero byte" bit tricks,
// exact as a yes/no answer.
constexpr bool WordNeedsCare(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  return ((w & kHigh) | ((w - kOnes * 0x20) & ~w & kHigh) | has_zero(w ^ (kOnes * '"')) |
          has_zero(w ^ (kOnes * '\\'))) != 0;
}

// No JSON escaping needed: printable ASCII other than '"' and '\\'.
bool IsPlain(std::string_view s) {
  for (unsigned char c : s) {
    if (NeedsCare(c)) return false;
  }
  return true;
}

// A newline and the deepest indentation written by one fixed-size copy
// (the block is copied whole, only the needed prefix kept).
constexpr size_t kNewlineBlock = 64;
struct NewlineBlock {
  char text[kNewlineBlock];
  constexpr NewlineBlock() : text() {
    text[0] = '\n';
    for (size_t i = 1; i < kNewlineBlock; ++i) text[i] = ' ';
  }
};
constexpr NewlineBlock kNewline;

// Writing to a string: the buffer only batches small appends.
constexpr size_t kStringBufferBytes = size_t{1} << 12;

// Rare strings (NeedsCare): nlohmann escapes them (same rules as its dump),
// replacing invalid UTF-8.
std::string NlohmannQuoted(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  if (!IsPlain(s)) {
    out += NlohmannQuoted(s);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

JsonWriter::JsonWriter(std::string* out, int indent)
    : out_(out), indent_(indent), capacity_(kStringBufferBytes) {
  Allocate();
}

JsonWriter::JsonWriter(JsonChunkSink sink, int indent)
    : indent_(indent), capacity_(kChunkBytes), sink_(std::move(sink)) {
  Allocate();
}

JsonWriter::~JsonWriter() {
  if (out_ != nullptr) Flush();
}

void JsonWriter::Allocate() {
  buf_ = std::make_unique_for_overwrite<char[]>(capacity_);
  pos_ = buf_.get();
  end_ = buf_.get() + capacity_;
}

void JsonWriter::Flush() {
  const size_t n = static_cast<size_t>(pos_ - buf_.get());
  pos_ = buf_.get();
  if (out_ != nullptr) {
    out_->append(buf_.get(), n);
  } else if (status_.ok() && n > 0) {
    status_ = sink_(std::string_view(buf_.get(), n));
  }
}

void JsonWriter::Grow(size_t n) {
  Flush();
  if (capacity_ >= n) return;
  while (capacity_ < n) capacity_ *= 2;
  Allocate();
}

absl::Status JsonWriter::Finish() {
  Flush();
  return status_;
}

void JsonWriter::Put(std::string_view s) {
  char* p = Room(s.size());
  std::memcpy(p, s.data(), s.size());
  pos_ = p + s.size();
}

void JsonWriter::PutInt(int64_t v) {
  char* p = Room(kMaxIntChars);
  pos_ = std::to_chars(p, p + kMaxIntChars, v).ptr;
}

// Copies `s` between quotes, checking 8 bytes at a time that it needs no
// escaping; `kKey` appends the key separator in the same reservation.
template <bool kKey>
void JsonWriter::PutQuoted(std::string_view s) {
  const size_t n = s.size();
  char* p = Room(n + 4);
  const char* src = s.data();
  bool plain = true;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, src + i, 8);
    if (WordNeedsCare(w)) {
      plain = false;
      break;
    }
    std::memcpy(p + 1 + i, &w, 8);
  }
  if (plain && i < n) {
    if (n >= 8) {  // the last 8 bytes, overlapping what is copied already
      uint64_t w;
      std::memcpy(&w, src + n - 8, 8);
      plain = !WordNeedsCare(w);
      std::memcpy(p + 1 + n - 8, &w, 8);
    } else {
      for (; i < n; ++i) {
        if (NeedsCare(static_cast<unsigned char>(src[i]))) {
          plain = false;
          break;
        }
        p[1 + i] = src[i];
      }
    }
  }
  if (!plain) {
    Put(NlohmannQuoted(s));
    if (kKey) Put(indent_ >= 0 ? std::string_view(": ") : std::string_view(":"));
    return;
  }
  p[0] = '"';
  p += n + 1;
  *p++ = '"';
  if (kKey) {
    *p++ = ':';
    if (indent_ >= 0) *p++ = ' ';
  }
  pos_ = p;
}

void JsonWriter::PutEscaped(std::string_view s) { PutQuoted<false>(s); }

void JsonWriter::Newline(size_t level) {
  const size_t n = level * static_cast<size_t>(indent_);
  // The block only where it fits: a chunk is still filled to the byte.
  if (n < kNewlineBlock && static_cast<size_t>(end_ - pos_) >= kNewlineBlock) {
    std::memcpy(pos_, kNewline.text, kNewlineBlock);
    pos_ += n + 1;
    return;
  }
  char* p = Room(n + 1);
  *p++ = '\n';
  std::memset(p, ' ', n);
  pos_ = p + n;
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_member_.empty()) return;  // the top-level value
  uint8_t& any = has_member_.back();
  const size_t level = has_member_.size();
  const size_t n = indent_ >= 0 ? level * static_cast<size_t>(indent_) : 0;
  if (indent_ < 0 || n >= kNewlineBlock || static_cast<size_t>(end_ - pos_) < kNewlineBlock + 1) {
    if (any) Put(',');
    any = 1;
    if (indent_ >= 0) Newline(level);
    return;
  }
  // The separator and the newline in one reservation.
  char* p = pos_;
  *p = ',';
  p += any;
  any = 1;
  std::memcpy(p, kNewline.text, kNewlineBlock);
  pos_ = p + n + 1;
}

void JsonWriter::Key(std::string_view key) {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  BeforeValue();
  PutQuoted<true>(key);
  after_key_ = true;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  Put('{');
  has_member_.push_back(0);
}

void JsonWriter::EndObject() {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  bool any = has_member_.back();
  has_member_.pop_back();
  if (any && indent_ >= 0) Newline(has_member_.size());
  Put('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  Put('[');
  has_member_.push_back(0);
}

void JsonWriter::EndArray() {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  bool any = has_member_.back();
  has_member_.pop_back();
  if (any && indent_ >= 0) Newline(has_member_.size());
  Put(']');
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  PutEscaped(s);
}

void JsonWriter::StringWithIndex(std::string_view name, int64_t index) {
  BeforeValue();
  if (!IsPlain(name)) {
    // Rare: escape the whole reference as one string, as String() would.
    std::string ref(name);
    ref += ':';
    ref += std::to_string(index);
    PutEscaped(ref);
    return;
  }
  char* p = Room(name.size() + kMaxIntChars + 3);
  *p++ = '"';
  std::memcpy(p, name.data(), name.size());
  p += name.size();
  *p++ = ':';
  p = std::to_chars(p, p + kMaxIntChars, index).ptr;
  *p++ = '"';
  pos_ = p;
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  PutInt(v);
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  char* p = Room(kMaxIntChars);
  pos_ = std::to_chars(p, p + kMaxIntChars, v).ptr;
}

void JsonWriter::Double(double v) {
  BeforeValue();
  // nlohmann's own shortest round-trip formatting ("1.5", "2.0", "1e-05", null for NaN).
  Put(nlohmann::json(v).dump());
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  Put(v ? std::string_view("true") : std::string_view("false"));
}

void JsonWriter::Null() {
  BeforeValue();
  Put(std::string_view("null"));
}

void JsonWriter::Value(const nlohmann::json& j) {
  BeforeValue();
  std::string text = j.dump(indent_, ' ', false, nlohmann::json::error_handler_t::replace);
  size_t level = has_member_.size();
  if (indent_ <= 0 || level == 0) {
    Put(text);
    return;
  }
  // Re-indent: JSON text has raw newlines only between tokens (strings escape theirs).
  std::string_view rest = text;
  while (true) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) {
      Put(rest);
      break;
    }
    Put(rest.substr(0, nl));
    Newline(level);
    rest.remove_prefix(nl + 1);
  }
}

void JsonWriter::StringArray(const std::vector<std::string>& v) {
  BeginArray();
  for (const std::string& s : v) String(s);
  EndArray();
}

}  // namespace npuplan
