// The engine table (GE's engine_conf.json + priorities, ge-reference §2.1) and
// the op-type → engine mapping. Defaults ship as data/engines.json, compiled
// into the binary; `--engines FILE` and a graph's "engines" section override.
#ifndef NPUPLAN_IR_ENGINE_TABLE_H_
#define NPUPLAN_IR_ENGINE_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"

namespace npuplan {

struct EngineConfig {
  std::string id;
  bool independent = false;         // gets its own stream(s) (HCCL)
  bool skip_assign_stream = false;  // nodes produce no task (GE_LOCAL, HOST_CPU, ffts_plus)
  bool attach = false;              // may attach to a predecessor's stream
  std::string scheduler = "TS_1";   // scheduler unit; reuse only within one
  int64_t compute_cost = 10;        // lower = higher priority
  friend bool operator==(const EngineConfig&, const EngineConfig&) = default;
};

class EngineTable {
 public:
  // The built-in production table (data/engines.json).
  static const EngineTable& Default();
  // Parses a table file ({"engines": {...}, "op_engines": {...}, "default_engine": "..."});
  // `source` names the file in errors.
  static absl::StatusOr<EngineTable> Parse(std::string_view json_text, std::string_view source);
  // The built-in table, merged with the table file `engines_file` when it is
  // not empty (`--engines FILE`).
  static absl::StatusOr<EngineTable> DefaultMergedWith(const std::string& engines_file);

  // Entries of `other` replace or extend this table's.
  void Merge(const EngineTable& other);
  void SetEngine(EngineConfig conf) { engines_[conf.id] = std::move(conf); }

  const EngineConfig* Find(std::string_view engine) const;
  // Engine of an op type: the op map, else the default engine.
  const std::string& EngineForOp(std::string_view op_type) const;
  bool HasOpMapping(std::string_view op_type) const;
  const std::map<std::string, EngineConfig, std::less<>>& engines() const { return engines_; }
  const std::string& default_engine() const { return default_engine_; }

 private:
  std::map<std::string, EngineConfig, std::less<>> engines_;
  std::map<std::string, std::string, std::less<>> op_engines_;
  std::string default_engine_ = "AIcoreEngine";
};

// Parses one engine entry ({"independent": …}) into `conf`, keeping fields
// that the entry does not mention.
absl::Status ParseEngineConfig(const std::string& id, const nlohmann::json& j, std::string_view source,
                               EngineConfig& conf);

}  // namespace npuplan

#endif  // NPUPLAN_IR_ENGINE_TABLE_H_
