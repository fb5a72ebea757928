#include "npuplan/support/text_checks.h"

#include "npuplan/support/str_util.h"

namespace npuplan {

absl::Status CheckNoByteOrderMark(std::string_view text, std::string_view source) {
  auto starts = [&](std::string_view bom) { return text.substr(0, bom.size()) == bom; };
  std::string_view which;
  // UTF-32 LE before UTF-16 LE: FF FE 00 00 starts with FF FE.
  if (starts("\xEF\xBB\xBF")) {
    return absl::InvalidArgumentError(
        StrCat(source, ": starts with a UTF-8 byte order mark (BOM, bytes EF BB BF); save the file as UTF-8 "
                       "without a BOM"));
  } else if (starts(std::string_view("\xFF\xFE\0\0", 4)) || starts(std::string_view("\0\0\xFE\xFF", 4))) {
    which = "UTF-32";
  } else if (starts("\xFF\xFE") || starts("\xFE\xFF")) {
    which = "UTF-16";
  }
  if (which.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(source, ": starts with a ", which,
                                           " byte order mark (BOM): the file is ", which,
                                           "; convert it to UTF-8 without a BOM"));
}

}  // namespace npuplan
