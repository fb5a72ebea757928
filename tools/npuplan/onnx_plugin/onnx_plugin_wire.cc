#include "tools/npuplan/onnx_plugin/onnx_plugin_wire.h"

#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "npuplan/ir/graph_json.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_plugin {
namespace {

using Json = nlohmann::json;

struct StatField {
  const char* name;
  int64_t OnnxImportStats::*member;
};
constexpr std::array<StatField, 13> kStatFields = {{
    {"ir_version", &OnnxImportStats::ir_version},
    {"opset", &OnnxImportStats::opset},
    {"onnx_nodes", &OnnxImportStats::onnx_nodes},
    {"nodes", &OnnxImportStats::nodes},
    {"subgraphs", &OnnxImportStats::subgraphs},
    {"captures", &OnnxImportStats::captures},
    {"dynamic_nodes", &OnnxImportStats::dynamic_nodes},
    {"unknown_tensors_onnx", &OnnxImportStats::unknown_tensors_onnx},
    {"unknown_tensors", &OnnxImportStats::unknown_tensors},
    {"fold_rounds", &OnnxImportStats::fold_rounds},
    {"folded_dims", &OnnxImportStats::folded_dims},
    {"failed_nodes", &OnnxImportStats::failed_nodes},
    {"external_tensors", &OnnxImportStats::external_tensors},
}};

// Both ends are this build, so a malformed message is a bug, not bad input.
absl::Status Malformed(std::string_view what, std::string_view detail) {
  return absl::InternalError(StrCat("ONNX plugin: malformed ", what, ": ", detail));
}

absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Malformed(what, "not a JSON object");
  return j;
}

GraphReadOptions RoundTripOptions(const EngineTable& engines) {
  GraphReadOptions o;
  o.engines = &engines;
  o.topo_sort = false;  // the importer sorted already; keep its order
  // The importer applied its own limits; the graph it wrote must read back whole.
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  o.limits = GraphReadLimits{kMax, kMax, kMax, kMax, kMax};
  return o;
}

}  // namespace

std::string EncodeRequest(const OnnxSourceRequest& r) {
  Json j = {{"path", r.path},
            {"model_dir", r.model_dir},
            {"engines_file", r.engines_file},
            {"input_shapes", r.input_shapes},
            {"dims", r.dims},
            {"strict_shapes", r.strict_shapes},
            {"allow_unknown_ops", r.allow_unknown_ops},
            {"fold_shapes", r.fold_shapes}};
  return j.dump();
}

absl::StatusOr<OnnxSourceRequest> DecodeRequest(std::string_view text) {
  NPUPLAN_ASSIGN_OR_RETURN(Json j, ParseObject(text, "request"));
  OnnxSourceRequest r;
  try {
    r.path = j.at("path").get<std::string>();
    r.model_dir = j.at("model_dir").get<std::string>();
    r.engines_file = j.at("engines_file").get<std::string>();
    r.input_shapes = j.at("input_shapes").get<std::vector<std::string>>();
    r.dims = j.at("dims").get<std::vector<std::string>>();
    r.strict_shapes = j.at("strict_shapes").get<bool>();
    r.allow_unknown_ops = j.at("allow_unknown_ops").get<bool>();
    r.fold_shapes = j.at("fold_shapes").get<bool>();
  } catch (const Json::exception& e) {
    return Malformed("request", e.what());
  }
  return r;
}

std::string EncodeResponse(const absl::StatusOr<OnnxImport>& result) {
  if (!result.ok()) {
    Json j = {{"code", static_cast<int>(result.status().code())},
              {"message", std::string(result.status().message())}};
    return j.dump() + "\n";
  }
  Json stats = Json::object();
  for (const StatField& f : kStatFields) stats[f.name] = result->stats.*f.member;
  stats["sorted"] = result->stats.sorted;
  Json head = {{"code", 0}, {"stats", std::move(stats)}, {"warnings", result->warnings}};
  return head.dump() + "\n" + WriteGraphJson(result->model);
}

absl::StatusOr<OnnxImport> DecodeResponse(std::string_view text, const std::string& source,
                                          const EngineTable& engines) {
  const size_t eol = text.find('\n');
  if (eol == std::string_view::npos) return Malformed("response", "no header line");
  NPUPLAN_ASSIGN_OR_RETURN(Json head, ParseObject(text.substr(0, eol), "response"));
  OnnxImport out;
  try {
    const int code = head.at("code").get<int>();
    if (code != 0) {
      return absl::Status(static_cast<absl::StatusCode>(code),
                          head.at("message").get<std::string>());
    }
    const Json& stats = head.at("stats");
    for (const StatField& f : kStatFields) out.stats.*f.member = stats.at(f.name).get<int64_t>();
    out.stats.sorted = stats.at("sorted").get<bool>();
    out.warnings = head.at("warnings").get<std::vector<std::string>>();
  } catch (const Json::exception& e) {
    return Malformed("response", e.what());
  }
  auto model = ParseGraphJson(text.substr(eol + 1), source, RoundTripOptions(engines));
  if (!model.ok()) return Malformed("graph", std::string(model.status().message()));
  out.model = *std::move(model);
  return out;
}

}  // namespace npuplan::onnx_plugin
