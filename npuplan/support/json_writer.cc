#include "npuplan/support/json_writer.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "npuplan/support/status_macros.h"

namespace npuplan {

JsonWriter::JsonWriter(std::string* out, int indent) : out_(out), indent_(indent) {}

void JsonWriter::Newline(size_t level) {
  out_->push_back('\n');
  out_->append(level * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_member_.empty()) return;  // the top-level value
  if (has_member_.back()) out_->push_back(',');
  has_member_.back() = true;
  if (indent_ >= 0) Newline(has_member_.size());
}

void JsonWriter::Key(std::string_view key) {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  BeforeValue();
  AppendEscaped(out_, key);
  out_->append(indent_ >= 0 ? ": " : ":");
  after_key_ = true;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_->push_back('{');
  has_member_.push_back(false);
}

void JsonWriter::EndObject() {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  bool any = has_member_.back();
  has_member_.pop_back();
  if (any && indent_ >= 0) Newline(has_member_.size());
  out_->push_back('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_->push_back('[');
  has_member_.push_back(false);
}

void JsonWriter::EndArray() {
  NPUPLAN_CHECK(!has_member_.empty() && !after_key_);
  bool any = has_member_.back();
  has_member_.pop_back();
  if (any && indent_ >= 0) Newline(has_member_.size());
  out_->push_back(']');
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendEscaped(out_, s);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, end);
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out_->append(buf, end);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  // nlohmann's own shortest round-trip formatting ("1.5", "2.0", "1e-05", null for NaN).
  out_->append(nlohmann::json(v).dump());
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_->append(v ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonWriter::Value(const nlohmann::json& j) {
  BeforeValue();
  std::string text = j.dump(indent_, ' ', false, nlohmann::json::error_handler_t::replace);
  size_t level = has_member_.size();
  if (indent_ <= 0 || level == 0) {
    out_->append(text);
    return;
  }
  // Re-indent: JSON text has raw newlines only between tokens (strings escape theirs).
  std::string pad(level * static_cast<size_t>(indent_), ' ');
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out_->append(text, start, std::string::npos);
      break;
    }
    out_->append(text, start, nl + 1 - start);
    out_->append(pad);
    start = nl + 1;
  }
}

void JsonWriter::StringArray(const std::vector<std::string>& v) {
  BeginArray();
  for (const std::string& s : v) String(s);
  EndArray();
}

void JsonWriter::AppendEscaped(std::string* out, std::string_view s) {
  bool plain = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  // Rare: let nlohmann escape it (same rules as its dump), replacing invalid UTF-8.
  out->append(nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace npuplan
