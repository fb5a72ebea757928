#include "npuplan/memory/minimalloc_csv.h"

#include <array>
#include <unordered_map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/text_checks.h"

namespace npuplan::memory {
namespace {

enum Column { kId, kLower, kUpper, kSize, kAlignment, kOffset, kNumColumns };
constexpr std::array<absl::string_view, kNumColumns> kColumnNames = {
    "id", "lower", "upper", "size", "alignment", "offset"};

absl::Status LineError(absl::string_view source, int line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": ", message));
}

}  // namespace

absl::StatusOr<MinimallocCsv> ParseMinimallocCsv(std::string_view text_in,
                                                 std::string_view source_in) {
  // Debian's abseil has its own string_view type.
  const absl::string_view text(text_in.data(), text_in.size());
  const absl::string_view source(source_in.data(), source_in.size());
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text_in, source_in));
  MinimallocCsv csv;
  std::array<int, kNumColumns> where;
  where.fill(-1);
  size_t num_fields = 0;
  bool have_header = false;
  std::vector<int64_t> offsets;
  std::unordered_map<std::string, int> id_line;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    for (auto& f : fields) f = absl::StripAsciiWhitespace(f);
    // 1. The header names the columns.
    if (!have_header) {
      have_header = true;
      num_fields = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        int col = -1;
        for (int k = 0; k < kNumColumns; ++k) {
          if (fields[i] == kColumnNames[k]) col = k;
        }
        if (col < 0) {
          return LineError(source, line_no, absl::StrCat("unknown column '", fields[i],
                                                         "' (expected id,lower,upper,size"
                                                         "[,offset][,alignment])"));
        }
        if (where[col] >= 0) {
          return LineError(source, line_no, absl::StrCat("duplicate column '", fields[i], "'"));
        }
        where[col] = static_cast<int>(i);
      }
      for (int k : {kId, kLower, kUpper, kSize}) {
        if (where[k] < 0) {
          return LineError(source, line_no,
                           absl::StrCat("header lacks column '", kColumnNames[k], "'"));
        }
      }
      continue;
    }
    // 2. One buffer per line.
    if (fields.size() != num_fields) {
      return LineError(source, line_no,
                       absl::StrCat("expected ", num_fields, " fields, got ", fields.size()));
    }
    auto number = [&](Column col, int64_t& out) -> absl::Status {
      if (!absl::SimpleAtoi(fields[where[col]], &out)) {
        return LineError(source, line_no,
                         absl::StrCat(kColumnNames[col], " '", fields[where[col]],
                                      "' is not a 64-bit integer"));
      }
      return absl::OkStatus();
    };
    IntervalBuffer b;
    b.id = std::string(fields[where[kId]]);
    if (b.id.empty()) return LineError(source, line_no, "empty id");
    NPUPLAN_RETURN_IF_ERROR(number(kLower, b.lower));
    NPUPLAN_RETURN_IF_ERROR(number(kUpper, b.upper));
    NPUPLAN_RETURN_IF_ERROR(number(kSize, b.size));
    if (where[kAlignment] >= 0) NPUPLAN_RETURN_IF_ERROR(number(kAlignment, b.alignment));
    if (where[kOffset] >= 0) {
      int64_t offset = 0;
      NPUPLAN_RETURN_IF_ERROR(number(kOffset, offset));
      offsets.push_back(offset);
    }
    // Per-buffer rules here, so that the message carries the line number.
    if (b.lower >= b.upper) {
      return LineError(source, line_no,
                       absl::StrCat("buffer '", b.id.str(), "': lower (", b.lower,
                                    ") must be < upper (", b.upper, ")"));
    }
    if (b.size < 0) {
      return LineError(source, line_no,
                       absl::StrCat("buffer '", b.id.str(), "': size (", b.size, ") is negative"));
    }
    if (b.alignment < 1) {
      return LineError(
          source, line_no,
          absl::StrCat("buffer '", b.id.str(), "': alignment (", b.alignment, ") must be >= 1"));
    }
    auto [it, inserted] = id_line.emplace(b.id.view(), line_no);
    if (!inserted) {
      return LineError(
          source, line_no,
          absl::StrCat("duplicate id '", b.id.str(), "' (first on line ", it->second, ")"));
    }
    csv.problem.buffers.push_back(std::move(b));
  }
  if (!have_header) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": empty file, expected a header "
                                                   "line 'id,lower,upper,size'"));
  }
  if (absl::Status s = CheckIntervalProblem(csv.problem); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  if (where[kOffset] >= 0) csv.offsets = IntervalAssignment{std::move(offsets)};
  return csv;
}

std::string PrintMinimallocCsv(const IntervalProblem& problem,
                               const IntervalAssignment& assignment) {
  bool aligned = false;
  for (const IntervalBuffer& b : problem.buffers) aligned = aligned || b.alignment > 1;
  std::string out = aligned ? "id,lower,upper,size,alignment,offset\n"
                            : "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const IntervalBuffer& b = problem.buffers[i];
    absl::StrAppend(&out, b.id.str(), ",", b.lower, ",", b.upper, ",", b.size, ",");
    if (aligned) absl::StrAppend(&out, b.alignment, ",");
    absl::StrAppend(&out, i < assignment.offsets.size() ? assignment.offsets[i] : -1, "\n");
  }
  return out;
}

}  // namespace npuplan::memory
