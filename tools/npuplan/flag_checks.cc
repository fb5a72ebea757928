#include "tools/npuplan/flag_checks.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"

namespace npuplan::cli {
namespace {

std::string Bound(int64_t v) {
  if (v == std::numeric_limits<int64_t>::max()) return "2^63-1";
  return StrCat(v);
}

// fmt's shortest form: 1e+300, 0.5, 1000000.
std::string Bound(double v) { return fmt::format("{}", v); }

}  // namespace

CLI::Validator IntInRange(int64_t lo, int64_t hi) {
  const std::string range = StrCat("[", Bound(lo), ", ", Bound(hi), "]");
  return CLI::Validator(
      [lo, hi, range](std::string& input) -> std::string {
        // CLI11's lexical_cast saturates a number beyond int64 to its limit
        // ("--repeat 99999999999999999999999" ran 2^63-1 times): from_chars
        // says out of range instead.
        int64_t exact = 0;
        const bool overflows =
            std::from_chars(input.data(), input.data() + input.size(), exact).ec ==
            std::errc::result_out_of_range;
        int64_t v = 0;
        if (overflows || !CLI::detail::lexical_cast(input, v) || v < lo || v > hi) {
          return StrCat(EchoName(input), " is not an integer in ", range);
        }
        return {};
      },
      StrCat("INT in ", range));
}

CLI::Validator PositiveInt() { return IntInRange(1, std::numeric_limits<int64_t>::max()); }
CLI::Validator NonNegativeInt() { return IntInRange(0, std::numeric_limits<int64_t>::max()); }

CLI::Validator FiniteInRange(double lo, double hi) {
  const std::string range = StrCat("[", Bound(lo), ", ", Bound(hi), "]");
  return CLI::Validator(
      [lo, hi, range](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < lo || v > hi) {
          return StrCat(EchoName(input), " is not a finite number in ", range);
        }
        return {};
      },
      StrCat("NUMBER in ", range));
}

CLI::Validator FiniteNonNegative() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < 0) {
          return StrCat(EchoName(input), " is not a finite number >= 0");
        }
        return {};
      },
      "NUMBER >= 0");
}

void AddMaxFileBytesFlag(CLI::App* cmd) {
  cmd->add_option_function<int64_t>(
         "--max-file-bytes", [](const int64_t& v) { SetDefaultMaxFileBytes(v); },
         StrCat("Reader limit: bytes of one input file (default ", kDefaultMaxFileBytes, ")"))
      ->check(PositiveInt())
      ->group("Input limits");
}

}  // namespace npuplan::cli
