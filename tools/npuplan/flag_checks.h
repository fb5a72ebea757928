// Flag validators with readable messages, and the flags every command that
// reads files shares.
//
// CLI11's Range / PositiveNumber accept NaN (every comparison with NaN is
// false) and print their bounds with std::to_string (309 digits for the
// largest double); these reject NaN and infinities and print bounds as
// written ("must be an integer in [1, 1000000]").
#ifndef NPUPLAN_TOOLS_NPUPLAN_FLAG_CHECKS_H_
#define NPUPLAN_TOOLS_NPUPLAN_FLAG_CHECKS_H_

#include <cstdint>

#include "CLI/CLI.hpp"

namespace npuplan::cli {

// An integer in [lo, hi].
CLI::Validator IntInRange(int64_t lo, int64_t hi);
// Integers >= 1 / >= 0 (up to INT64_MAX).
CLI::Validator PositiveInt();
CLI::Validator NonNegativeInt();
// A finite number in [lo, hi] (NaN and infinities are usage errors).
CLI::Validator FiniteInRange(double lo, double hi);
// A finite number >= 0.
CLI::Validator FiniteNonNegative();

// `--max-file-bytes N`: the largest input file any reader of this process
// reads (npuplan/support/file_util.h).
void AddMaxFileBytesFlag(CLI::App* cmd);

}  // namespace npuplan::cli

#endif  // NPUPLAN_TOOLS_NPUPLAN_FLAG_CHECKS_H_
