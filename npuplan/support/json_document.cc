#include "npuplan/support/json_document.h"

#include <string>
#include <utility>
#include <vector>

#include "npuplan/support/echo.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// Builds the DOM as nlohmann's own SAX DOM parser does, checking each key
// against the object it goes into.
class StrictDomBuilder {
 public:
  StrictDomBuilder(json& root, const JsonDocumentLimits& limits) : root_(root), limits_(limits) {}

  bool null() { return Put(nullptr); }
  bool boolean(bool v) { return Put(v); }
  bool number_integer(json::number_integer_t v) { return Put(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Put(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Put(v); }
  bool string(json::string_t& v) {
    if (!CheckString(v, "string")) return false;
    return Put(std::move(v));
  }
  bool binary(json::binary_t& v) { return Put(std::move(v)); }
  bool start_object(std::size_t) { return Open(json::object()); }
  bool start_array(std::size_t) { return Open(json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    if (!CheckString(k, "key")) return false;
    auto& object = stack_.back().value->get_ref<json::object_t&>();
    auto [it, inserted] = object.try_emplace(std::move(k));
    if (!inserted) {
      stack_.back().key = nullptr;  // the path of the object, not of its previous member
      error_ = StrCat(Path(), ": duplicate key '", EchoName(it->first), "'");
      return false;
    }
    stack_.back().key = &it->first;
    slot_ = &it->second;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = StrCat("not valid JSON: ", e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  struct Level {
    json* value;
    const std::string* key = nullptr;  // the member being read (objects)
  };

  template <typename V>
  json* Insert(V&& v) {
    if (stack_.empty()) {
      root_ = json(std::forward<V>(v));
      return &root_;
    }
    json* top = stack_.back().value;
    if (top->is_array()) {
      top->emplace_back(std::forward<V>(v));
      return &top->back();
    }
    *slot_ = json(std::forward<V>(v));
    return slot_;
  }
  template <typename V>
  bool Put(V&& v) {
    Insert(std::forward<V>(v));
    return true;
  }
  bool Open(json v) {
    if (static_cast<int64_t>(stack_.size()) >= limits_.max_depth) {
      error_ = StrCat(Path(), ": nested deeper than ", limits_.max_depth, " levels");
      return false;
    }
    stack_.push_back({Insert(std::move(v))});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  bool CheckString(const std::string& s, const char* what) {
    if (static_cast<int64_t>(s.size()) <= limits_.max_string_bytes) return true;
    error_ = StrCat(Path(), ": a ", what, " of ", s.size(), " bytes is longer than the limit of ",
                    limits_.max_string_bytes, " (--max-string-bytes)");
    return false;
  }
  // "$.a[3].b" of the value being read; built only for a message.
  std::string Path() const {
    std::string path = "$";
    for (const Level& l : stack_) {
      if (l.value->is_array()) {
        if (!l.value->empty()) path += StrCat("[", l.value->size() - 1, "]");
      } else if (l.key != nullptr) {
        path += StrCat(".", EchoName(*l.key));
      }
    }
    return path;
  }

  json& root_;
  const JsonDocumentLimits& limits_;
  std::vector<Level> stack_;
  json* slot_ = nullptr;
  std::string error_;
};

// A scanner over JSON text that skips values without reading them.
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}
  bool done() const { return i_ >= t_.size(); }
  char peek() const { return done() ? '\0' : t_[i_]; }
  void SkipSpace() {
    while (!done() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  // A string token, quotes included; false when there is none.
  bool StringToken(std::string_view* token) {
    SkipSpace();
    if (peek() != '"') return false;
    const size_t start = i_++;
    while (!done() && t_[i_] != '"') i_ += t_[i_] == '\\' ? 2 : 1;
    if (done()) return false;
    ++i_;
    *token = t_.substr(start, i_ - start);
    return true;
  }
  // Any value: strings, and objects / arrays up to their matching bracket.
  bool SkipValue() {
    SkipSpace();
    std::string_view token;
    if (peek() == '"') return StringToken(&token);
    size_t depth = 0;
    while (!done()) {
      const char c = t_[i_];
      if (c == '"') {
        if (!StringToken(&token)) return false;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) return true;  // the end of the enclosing object
        --depth;
      }
      if (c == ',' && depth == 0) return true;
      ++i_;
      if (depth == 0 && (c == '}' || c == ']')) return true;
    }
    return depth == 0;
  }

 private:
  std::string_view t_;
  size_t i_ = 0;
};

std::optional<std::string> DecodeString(std::string_view token) {
  if (token.find('\\') == std::string_view::npos)
    return std::string(token.substr(1, token.size() - 2));
  json v = json::parse(token, nullptr, /*allow_exceptions=*/false);
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

}  // namespace

std::optional<std::string> TopLevelString(std::string_view text, std::string_view key) {
  Scanner s(text);
  if (!s.Eat('{')) return std::nullopt;
  if (s.Eat('}')) return std::nullopt;
  while (true) {
    std::string_view token;
    if (!s.StringToken(&token) || !s.Eat(':')) return std::nullopt;
    const std::optional<std::string> name = DecodeString(token);
    if (name && *name == key) {
      if (!s.StringToken(&token)) return std::nullopt;
      return DecodeString(token);
    }
    if (!s.SkipValue()) return std::nullopt;
    if (!s.Eat(',')) return std::nullopt;
  }
}

absl::StatusOr<json> ParseJsonDocument(std::string_view text, std::string_view source,
                                       const JsonDocumentLimits& limits) {
  json root;
  StrictDomBuilder builder(root, limits);
  if (!json::sax_parse(text, &builder) || !builder.error().empty()) {
    return absl::InvalidArgumentError(StrCat(
        source, ": ", builder.error().empty() ? std::string("not valid JSON") : builder.error()));
  }
  return root;
}

}  // namespace npuplan
