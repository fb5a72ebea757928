// Text from the input, echoed in messages. A message is one line a person
// reads: a name must neither start a new line (a node named
// "x\nerror: forged"), nor end the message early (NUL), nor send the
// terminal control sequences, nor fill the screen (a 1 MB name).
#ifndef NPUPLAN_SUPPORT_ECHO_H_
#define NPUPLAN_SUPPORT_ECHO_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace npuplan {

// Bytes of one name kept in a message.
inline constexpr size_t kMaxEchoedNameBytes = 200;

// `text` with control characters escaped: \n \r \t \0 as such, other C0
// controls and DEL as \xNN; the C1 controls (U+0080..U+009F), U+2028/2029
// and the bidirectional overrides (which reorder what follows) as \uNNNN;
// bytes that are not UTF-8 as \xNN. Printable text, UTF-8 included, is kept.
// With `escape_backslash`, '\' becomes "\\" (so an escape is unambiguous).
std::string EscapeControlChars(std::string_view text, bool escape_backslash = false);

// One name for a message: EscapeControlChars with backslashes escaped, cut
// after `max_bytes` bytes of the name (at a character boundary) with "…" and
// the name's full size.
std::string EchoName(std::string_view name, size_t max_bytes = kMaxEchoedNameBytes);

// A whole message for the terminal: EscapeControlChars, and at most
// `max_bytes` bytes — a longer one keeps its beginning and its end (what is
// wrong is often said last) around "… (N bytes cut) …".
std::string EchoMessage(std::string_view message, size_t max_bytes = 4096);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_ECHO_H_
