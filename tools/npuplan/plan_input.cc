#include "tools/npuplan/plan_input.h"

#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_document.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::cli {
namespace {
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

bool LooksLikeGraph(const std::string& path, std::string_view text) {
  if (EndsWith(path, ".onnx")) return true;
  // The top-level "format" only: a name or attribute holding the string says nothing.
  return TopLevelString(text, "format") == "npuplan.graph/1";
}

absl::Status CompileFirstError(const std::string& path) {
  std::string stem = path;
  for (std::string_view ext : {".onnx", ".json"}) {
    if (EndsWith(stem, ext)) stem.resize(stem.size() - ext.size());
  }
  const size_t slash = stem.find_last_of('/');
  if (slash != std::string::npos) stem = stem.substr(slash + 1);
  return absl::InvalidArgumentError(
      StrCat(path, ": this is a graph; compile it first: npuplan compile ", path, " -o ", stem, ".plan.json"));
}

absl::StatusOr<Plan> ReadPlanInput(const std::string& path, const GraphReadLimits& limits) {
  if (EndsWith(path, ".onnx")) return CompileFirstError(path);
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (!LooksLikePlan(text) && LooksLikeGraph(path, text)) return CompileFirstError(path);
  return ParsePlanJson(text, path, limits);
}

}  // namespace npuplan::cli
