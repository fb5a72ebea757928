#include "npuplan/ir/engine_table.h"

#include <nlohmann/json.hpp>

#include "npuplan/support/file_util.h"
#include "npuplan/support/json_fields.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/text_checks.h"

namespace npuplan {
namespace {

// data/engines.json, embedded at build time (see CMakeLists.txt).
constexpr char kDefaultEnginesJson[] =
#include "npuplan/ir/engines_data.inc"
    ;

absl::Status ParseEngineEntry(const std::string& id, const nlohmann::json& j,
                              std::string_view source, EngineConfig& conf) {
  std::string where = StrCat(source, ": $.engines.", id);
  if (!j.is_object()) return absl::InvalidArgumentError(where + ": expected an object");
  conf.id = id;
  for (const auto& [key, value] : j.items()) {
    if (key == "independent" || key == "skip_assign_stream" || key == "attach") {
      if (!value.is_boolean()) {
        return absl::InvalidArgumentError(StrCat(where, ".", key, ": expected true or false"));
      }
      bool b = value.get<bool>();
      if (key == "independent") conf.independent = b;
      if (key == "skip_assign_stream") conf.skip_assign_stream = b;
      if (key == "attach") conf.attach = b;
    } else if (key == "scheduler") {
      if (!value.is_string()) {
        return absl::InvalidArgumentError(StrCat(where, ".scheduler: expected a string"));
      }
      conf.scheduler = value.get<std::string>();
    } else if (key == "compute_cost") {
      // Exact int64 (a value beyond int64 is refused, not wrapped).
      NPUPLAN_ASSIGN_OR_RETURN(conf.compute_cost,
                               JsonFields(source).Int(value, StrCat("$.engines.", id, ".compute_cost")));
    } else {
      return absl::InvalidArgumentError(StrCat(where, ": unknown field '", key, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseEngineConfig(const std::string& id, const nlohmann::json& j,
                               std::string_view source, EngineConfig& conf) {
  return ParseEngineEntry(id, j, source, conf);
}

const EngineTable& EngineTable::Default() {
  static const EngineTable* table = [] {
    auto parsed = Parse(kDefaultEnginesJson, "data/engines.json");
    NPUPLAN_CHECK(parsed.ok());
    return new EngineTable(std::move(parsed).value());
  }();
  return *table;
}

absl::StatusOr<EngineTable> EngineTable::DefaultMergedWith(const std::string& engines_file) {
  EngineTable table = Default();
  if (!engines_file.empty()) {
    NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(engines_file));
    NPUPLAN_ASSIGN_OR_RETURN(EngineTable extra, Parse(text, engines_file));
    table.Merge(extra);
  }
  return table;
}

absl::StatusOr<EngineTable> EngineTable::Parse(std::string_view json_text, std::string_view source) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(json_text, source));
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    try {  // again with exceptions, for the message (line and column)
      [[maybe_unused]] nlohmann::json again = nlohmann::json::parse(json_text);
    } catch (const nlohmann::json::exception& e) {
      return absl::InvalidArgumentError(StrCat(source, ": not valid JSON: ", e.what()));
    }
    return absl::InvalidArgumentError(StrCat(source, ": not valid JSON"));
  }
  if (!j.is_object()) return absl::InvalidArgumentError(StrCat(source, ": expected an object"));
  EngineTable table;
  table.default_engine_.clear();
  for (const auto& [key, value] : j.items()) {
    if (key == "comment") continue;
    if (key == "default_engine") {
      if (!value.is_string()) {
        return absl::InvalidArgumentError(StrCat(source, ": $.default_engine: expected a string"));
      }
      table.default_engine_ = value.get<std::string>();
    } else if (key == "engines") {
      if (!value.is_object()) {
        return absl::InvalidArgumentError(StrCat(source, ": $.engines: expected an object"));
      }
      for (const auto& [id, entry] : value.items()) {
        EngineConfig conf;
        NPUPLAN_RETURN_IF_ERROR(ParseEngineEntry(id, entry, source, conf));
        table.engines_[id] = conf;
      }
    } else if (key == "op_engines") {
      if (!value.is_object()) {
        return absl::InvalidArgumentError(StrCat(source, ": $.op_engines: expected an object"));
      }
      for (const auto& [op, engine] : value.items()) {
        if (!engine.is_string()) {
          return absl::InvalidArgumentError(
              StrCat(source, ": $.op_engines.", op, ": expected an engine name"));
        }
        table.op_engines_[op] = engine.get<std::string>();
      }
    } else {
      return absl::InvalidArgumentError(StrCat(source, ": unknown field '", key, "'"));
    }
  }
  return table;
}

void EngineTable::Merge(const EngineTable& other) {
  for (const auto& [id, conf] : other.engines_) engines_[id] = conf;
  for (const auto& [op, engine] : other.op_engines_) op_engines_[op] = engine;
  if (!other.default_engine_.empty()) default_engine_ = other.default_engine_;
}

const EngineConfig* EngineTable::Find(std::string_view engine) const {
  auto it = engines_.find(engine);
  return it == engines_.end() ? nullptr : &it->second;
}

const std::string& EngineTable::EngineForOp(std::string_view op_type) const {
  auto it = op_engines_.find(op_type);
  return it == op_engines_.end() ? default_engine_ : it->second;
}

bool EngineTable::HasOpMapping(std::string_view op_type) const {
  return op_engines_.find(op_type) != op_engines_.end();
}

}  // namespace npuplan
