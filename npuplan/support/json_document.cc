#include "npuplan/support/json_document.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

// Checks each key against the object it goes into, strings and nesting
// against the limits, and builds the DOM as nlohmann's own SAX DOM parser does
// when given a root (CheckJsonDocument gives none: same checks, no values).
class StrictDomBuilder {
 public:
  StrictDomBuilder(json* root, const JsonDocumentLimits& limits) : root_(root), limits_(limits) {}

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
  bool start_object(std::size_t) { return Open(false); }
  bool start_array(std::size_t) { return Open(true); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    if (!CheckString(k, "key")) return false;
    Level& l = stack_[depth_ - 1];
    bool inserted = false;
    if (l.value != nullptr) {
      auto [it, added] = l.value->get_ref<json::object_t&>().try_emplace(k);
      slot_ = &it->second;
      inserted = added;
    } else {
      inserted = l.AddKey(k);
    }
    if (!inserted) {
      l.has_key = false;  // the path of the object, not of its previous member
      error_ = StrCat(Path(), ": duplicate key '", EchoName(k), "'");
      return false;
    }
    l.key = std::move(k);
    l.has_key = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = StrCat("not valid JSON: ", e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  // One open object or array. Levels are reused as the parse goes up and
  // down (no allocation per object once the deepest level was reached).
  struct Level {
    bool array = false;
    json* value = nullptr;  // the DOM being built, if any
    int64_t count = 0;      // values put into it (arrays)
    std::string key;        // the member being read (objects)
    bool has_key = false;
    // The members so far, when no DOM holds them: a small object's names
    // back to back (compared one by one), a large one's in a hash set.
    std::string names;
    std::vector<size_t> ends;
    std::unordered_set<std::string> many;

    void Reset(bool is_array, json* dom) {
      array = is_array;
      value = dom;
      count = 0;
      has_key = false;
      names.clear();
      ends.clear();
      many.clear();
    }
    // False when `k` is a member already.
    bool AddKey(const std::string& k) {
      constexpr size_t kFew = 32;
      if (ends.size() < kFew) {
        size_t begin = 0;
        for (size_t end : ends) {
          if (std::string_view(names).substr(begin, end - begin) == k) return false;
          begin = end;
        }
        names += k;
        ends.push_back(names.size());
        return true;
      }
      if (many.empty()) {
        size_t begin = 0;
        for (size_t end : ends) {
          many.emplace(names, begin, end - begin);
          begin = end;
        }
      }
      return many.insert(k).second;
    }
  };

  // Counts the value in its array and puts it into the DOM, if one is built.
  template <typename V>
  json* Insert(V&& v) {
    if (depth_ > 0 && stack_[depth_ - 1].array) ++stack_[depth_ - 1].count;
    if (root_ == nullptr) return nullptr;
    if (depth_ == 0) {
      *root_ = json(std::forward<V>(v));
      return root_;
    }
    json* top = stack_[depth_ - 1].value;
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
  bool Open(bool array) {
    if (static_cast<int64_t>(depth_) >= limits_.max_depth) {
      error_ = StrCat(Path(), ": nested deeper than ", limits_.max_depth, " levels");
      return false;
    }
    json* value = Insert(array ? json::array() : json::object());
    if (depth_ == stack_.size()) stack_.emplace_back();
    stack_[depth_++].Reset(array, value);
    return true;
  }
  bool Close() {
    std::unordered_set<std::string>& many = stack_[--depth_].many;
    if (!many.empty()) many = {};  // a large object's names go with it
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
    for (size_t d = 0; d < depth_; ++d) {
      const Level& l = stack_[d];
      if (l.array) {
        if (l.count > 0) path += StrCat("[", l.count - 1, "]");
      } else if (l.has_key) {
        path += StrCat(".", EchoName(l.key));
      }
    }
    return path;
  }

  json* root_;
  const JsonDocumentLimits& limits_;
  std::vector<Level> stack_;  // [0, depth_) are open
  size_t depth_ = 0;
  json* slot_ = nullptr;
  std::string error_;
};

// A scanner over JSON text that skips values without reading them.
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}
  bool done() const { return i_ >= t_.size(); }
  size_t pos() const { return i_; }
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

namespace {

absl::Status RunStrict(std::string_view text, std::string_view source,
                       const JsonDocumentLimits& limits, json* root) {
  StrictDomBuilder builder(root, limits);
  if (!json::sax_parse(text, &builder) || !builder.error().empty()) {
    return absl::InvalidArgumentError(StrCat(
        source, ": ", builder.error().empty() ? std::string("not valid JSON") : builder.error()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<json> ParseJsonDocument(std::string_view text, std::string_view source,
                                       const JsonDocumentLimits& limits) {
  json root;
  NPUPLAN_RETURN_IF_ERROR(RunStrict(text, source, limits, &root));
  return root;
}

absl::Status CheckJsonDocument(std::string_view text, std::string_view source,
                               const JsonDocumentLimits& limits) {
  return RunStrict(text, source, limits, nullptr);
}

absl::StatusOr<JsonText> JsonText::Of(std::string_view text, std::string_view source,
                                      const JsonDocumentLimits& limits) {
  JsonText v;
  v.source_ = source;
  v.limits_ = limits;
  Scanner s(text);
  s.SkipSpace();
  const char open = s.peek();
  if (open != '{' && open != '[') {
    NPUPLAN_ASSIGN_OR_RETURN(v.scalar_, ParseJsonDocument(text, source, limits));
    return v;
  }
  v.kind_ = open == '{' ? kObject : kArray;
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat(source, ": not valid JSON: not a complete ", open == '{' ? "object" : "array"));
  };
  const char close = open == '{' ? '}' : ']';
  s.Eat(open);
  if (!s.Eat(close)) {
    while (true) {
      Entry e;
      if (v.kind_ == kObject) {
        std::string_view token;
        if (!s.StringToken(&token) || !s.Eat(':')) return bad();
        std::optional<std::string> key = DecodeString(token);
        if (!key) return bad();
        e.key = std::move(*key);
      }
      s.SkipSpace();
      const size_t start = s.pos();
      if (!s.SkipValue() || s.pos() == start) return bad();
      e.text = text.substr(start, s.pos() - start);
      v.entries_.push_back(std::move(e));
      if (s.Eat(close)) break;
      if (!s.Eat(',')) return bad();
    }
  }
  s.SkipSpace();
  if (!s.done()) return bad();
  // nlohmann's objects iterate by key; a reader walking these sees the same order.
  if (v.kind_ == kObject) {
    std::sort(v.entries_.begin(), v.entries_.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
  }
  return v;
}

std::optional<size_t> JsonText::Find(std::string_view key) const {
  if (kind_ != kObject) return std::nullopt;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.key < k; });
  if (it == entries_.end() || it->key != key) return std::nullopt;
  return static_cast<size_t>(it - entries_.begin());
}

absl::StatusOr<json> JsonText::Parse(size_t i) const {
  return ParseJsonDocument(entries_[i].text, source_, limits_);
}

absl::StatusOr<JsonText> JsonText::Open(size_t i) const {
  return Of(entries_[i].text, source_, limits_);
}

absl::StatusOr<json> JsonText::ParseAllBut(std::string_view key) const {
  json object = json::object();
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].key == key) continue;
    NPUPLAN_ASSIGN_OR_RETURN(object[entries_[i].key], Parse(i));
  }
  return object;
}

json JsonText::Shape() const {
  if (kind_ == kObject) return json::object();
  if (kind_ == kArray) return json::array();
  return scalar_;
}

}  // namespace npuplan
