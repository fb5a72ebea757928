#include "npuplan/support/echo.h"

#include <fmt/format.h>

#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

// Length of the UTF-8 sequence at s[i], or 0 when it is not valid UTF-8
// (overlong forms, surrogates and code points beyond U+10FFFF included).
size_t Utf8Length(std::string_view s, size_t i, uint32_t* code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t len;
  uint32_t cp;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c < 0x80) {
    *code_point = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char x = b(k);
    if (x < (k == 1 ? lo : 0x80) || x > (k == 1 ? hi : 0xBF)) return 0;
    cp = (cp << 6) | (x & 0x3F);
  }
  *code_point = cp;
  return len;
}

// Code points a terminal acts on instead of showing: C1 controls, and the
// bidirectional overrides that reorder what follows ("Trojan Source").
bool IsInvisibleControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

// Appends the escaped character at text[i]; returns its length in `text`.
size_t AppendEscaped(std::string& out, std::string_view text, size_t i, bool escape_backslash) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7F) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += fmt::format("\\x{:02x}", c);
    }
    return 1;
  }
  if (c == '\\' && escape_backslash) {
    out += "\\\\";
    return 1;
  }
  uint32_t cp = 0;
  const size_t len = Utf8Length(text, i, &cp);
  if (len == 0) {
    out += fmt::format("\\x{:02x}", c);
    return 1;
  }
  if (IsInvisibleControl(cp)) {
    out += fmt::format("\\u{:04x}", cp);
  } else {
    out.append(text.substr(i, len));
  }
  return len;
}

// The largest prefix length <= n that does not end inside a UTF-8 sequence.
size_t CharBoundary(std::string_view s, size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string EscapeControlChars(std::string_view text, bool escape_backslash) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) i += AppendEscaped(out, text, i, escape_backslash);
  return out;
}

std::string EchoName(std::string_view name, size_t max_bytes) {
  if (name.size() <= max_bytes) return EscapeControlChars(name, /*escape_backslash=*/true);
  std::string out = EscapeControlChars(name.substr(0, CharBoundary(name, max_bytes)), true);
  return StrCat(out, "… (", name.size(), " bytes)");
}

std::string EchoMessage(std::string_view message, size_t max_bytes) {
  std::string text = EscapeControlChars(message);
  if (text.size() <= max_bytes) return text;
  const size_t head = CharBoundary(text, max_bytes * 2 / 3);
  size_t tail_start = text.size() - max_bytes / 3;
  while (tail_start < text.size() && (static_cast<unsigned char>(text[tail_start]) & 0xC0) == 0x80)
    ++tail_start;
  return StrCat(std::string_view(text).substr(0, head), " … (", tail_start - head, " bytes cut) … ",
                std::string_view(text).substr(tail_start));
}

}  // namespace npuplan
