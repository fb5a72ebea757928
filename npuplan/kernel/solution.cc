#include "npuplan/kernel/solution.h"

#include <charconv>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"

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

// Parses "a:b" pairs.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParsePairs(std::string_view text,
                                                                    std::string_view source,
                                                                    std::string_view what) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (auto [no, line] : Lines(text)) {
    size_t colon = line.find(':');
    int64_t a = 0, b = 0;
    if (colon == std::string_view::npos || !ToInt(line.substr(0, colon), a) ||
        !ToInt(line.substr(colon + 1), b)) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", no, ": expected \"", std::string(what), "\", got \"", std::string(line), "\""));
    }
    out.emplace_back(a, b);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseScheduleText(std::string_view text, std::string_view source) {
  std::vector<int> out;
  for (auto [no, line] : Lines(text)) {
    int64_t v = 0;
    if (!ToInt(line, v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ":", no, ": expected a node Id, got \"", std::string(line), "\""));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

absl::StatusOr<std::map<int, int64_t>> ParseMemoryText(std::string_view text, std::string_view source) {
  NPUPLAN_ASSIGN_OR_RETURN(auto pairs, ParsePairs(text, source, "BufId:Offset"));
  std::map<int, int64_t> out;
  for (auto [b, off] : pairs) {
    if (!out.emplace(static_cast<int>(b), off).second) {
      return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": buffer ", b, " has two offsets"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<SpillRecord>> ParseSpillText(std::string_view text, std::string_view source) {
  NPUPLAN_ASSIGN_OR_RETURN(auto pairs, ParsePairs(text, source, "BufId:NewOffset"));
  std::vector<SpillRecord> out;
  for (auto [b, off] : pairs) out.push_back({static_cast<int>(b), off});
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
