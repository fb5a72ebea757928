#include "npuplan/kernel/solution.h"

#include <charconv>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/text_checks.h"

namespace npuplan::kernel {
namespace {

// Splits into lines, trimming spaces and '\r'; keeps 1-based line numbers.
std::vector<std::pair<int, std::string_view>> Lines(std::string_view text) {
  std::vector<std::pair<int, std::string_view>> out;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty()) out.emplace_back(line_no, line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

bool ToInt(std::string_view s, int64_t& v) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// An Id read as int64, as the int the formats use: 2^32 + k is an error
// naming the value, not k.
absl::StatusOr<int> Narrow(int64_t v, std::string_view source, int line, std::string_view what) {
  std::optional<int> id = CheckedCast<int>(v);
  if (!id || *id < 0) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(source), ":", line, ": ", std::string(what), " ", v,
                                                   " is out of range [0, ", INT32_MAX, "]"));
  }
  return *id;
}

struct Pair {
  int line;
  int64_t a, b;
};

// Parses "a:b" pairs.
absl::StatusOr<std::vector<Pair>> ParsePairs(std::string_view text, std::string_view source, std::string_view what) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  std::vector<Pair> out;
  for (auto [no, line] : Lines(text)) {
    size_t colon = line.find(':');
    int64_t a = 0, b = 0;
    if (colon == std::string_view::npos || !ToInt(line.substr(0, colon), a) ||
        !ToInt(line.substr(colon + 1), b)) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", no, ": expected \"", std::string(what), "\", got \"", std::string(line), "\""));
    }
    out.push_back({no, a, b});
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseScheduleText(std::string_view text, std::string_view source) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  std::vector<int> out;
  for (auto [no, line] : Lines(text)) {
    int64_t v = 0;
    if (!ToInt(line, v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", no, ": expected a node Id, got \"", std::string(line), "\""));
    }
    NPUPLAN_ASSIGN_OR_RETURN(int id, Narrow(v, source, no, "node Id"));
    out.push_back(id);
  }
  return out;
}

absl::StatusOr<std::map<int, int64_t>> ParseMemoryText(std::string_view text, std::string_view source) {
  NPUPLAN_ASSIGN_OR_RETURN(auto pairs, ParsePairs(text, source, "BufId:Offset"));
  std::map<int, int64_t> out;
  for (const Pair& p : pairs) {
    NPUPLAN_ASSIGN_OR_RETURN(int b, Narrow(p.a, source, p.line, "BufId"));
    if (!out.emplace(b, p.b).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", p.line, ": buffer ", b, " has two offsets"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<SpillRecord>> ParseSpillText(std::string_view text, std::string_view source) {
  NPUPLAN_ASSIGN_OR_RETURN(auto pairs, ParsePairs(text, source, "BufId:NewOffset"));
  std::vector<SpillRecord> out;
  for (const Pair& p : pairs) {
    NPUPLAN_ASSIGN_OR_RETURN(int b, Narrow(p.a, source, p.line, "BufId"));
    out.push_back({b, p.b});
  }
  return out;
}

std::string FormatSchedule(const std::vector<int>& schedule) {
  std::string s;
  s.reserve(schedule.size() * 6);
  for (int v : schedule) absl::StrAppend(&s, v, "\n");
  return s;
}

std::string FormatMemory(const std::map<int, int64_t>& offsets) {
  std::string s;
  for (auto [b, off] : offsets) absl::StrAppend(&s, b, ":", off, "\n");
  return s;
}

std::string FormatSpills(const std::vector<SpillRecord>& spills) {
  std::string s;
  for (const SpillRecord& r : spills) absl::StrAppend(&s, r.buf_id, ":", r.new_offset, "\n");
  return s;
}

absl::Status WriteSolutionFiles(const std::string& dir, const std::string& case_name,
                                const KernelSolution& solution, bool with_memory) {
  const std::string base = dir + "/" + case_name;
  std::vector<std::pair<std::string, std::string>> files = {
      {base + "_schedule.txt", FormatSchedule(solution.schedule)}};
  if (with_memory) {
    files.emplace_back(base + "_memory.txt", FormatMemory(solution.offsets));
    files.emplace_back(base + "_spill.txt", FormatSpills(solution.spills));
  }
  return WriteFilesAtomically(files);
}

}  // namespace npuplan::kernel
