// The decision log: one line per decision a pass makes, with a stable keyword
// (docs/decisions.md). Text form: `[<pass-name>] <Keyword> key=value …`, or,
// for GE-compatible lines such as partition's "Mark node[…]", the keyword
// followed by its fixed text. `--remarks FILE` writes the same remarks as JSON
// lines. The log is passed in (never global) so concurrent compilations do not
// share it.
#ifndef NPUPLAN_PASS_DECISION_LOG_H_
#define NPUPLAN_PASS_DECISION_LOG_H_

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npuplan/support/str_util.h"

namespace npuplan {

struct Remark {
  std::string pass;
  std::string keyword;
  std::string text;  // optional fixed text (GE lines); empty for plain remarks
  std::vector<std::pair<std::string, std::string>> fields;
  std::string ToLine() const;
  std::string ToJson() const;
};

class DecisionLog {
 public:
  // Remarks are kept in memory when `keep` (tests, --remarks) and printed to
  // `echo` (e.g. stderr for --log-decisions) when non-null.
  explicit DecisionLog(bool keep = false, std::FILE* echo = nullptr) : keep_(keep), echo_(echo) {}

  bool enabled() const { return keep_ || echo_ != nullptr; }
  void Add(Remark remark);

  // Convenience: Record("stream-assignment", "StreamAssigned", {{"node", n}, {"stream", 3}}).
  template <typename... Fields>
  void Record(std::string_view pass, std::string_view keyword, std::string_view text, Fields&&... fields) {
    if (!enabled()) return;
    Remark r{std::string(pass), std::string(keyword), std::string(text), {}};
    (r.fields.emplace_back(std::string(fields.first), StrCat(fields.second)), ...);
    Add(std::move(r));
  }

  // A log for a pass that runs beside others (PassPipeline): keeps what
  // `this` keeps or echoes, echoes nothing; AppendFrom adds it here later.
  DecisionLog Buffer() const { return DecisionLog(enabled(), nullptr); }
  // Adds the buffer's remarks, in order, as if they were recorded now.
  void AppendFrom(DecisionLog&& buffer);

  const std::vector<Remark>& remarks() const { return remarks_; }
  // Remarks of one keyword (tests).
  std::vector<const Remark*> WithKeyword(std::string_view keyword) const;
  std::string ToJsonLines() const;

 private:
  bool keep_;
  std::FILE* echo_;
  std::vector<Remark> remarks_;
};

// Field helper: Field("node", name).
template <typename V>
std::pair<std::string_view, const V&> Field(std::string_view key, const V& value) {
  return {key, value};
}

}  // namespace npuplan

#endif  // NPUPLAN_PASS_DECISION_LOG_H_
