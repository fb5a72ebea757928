// Reader and writer of the native graph format `npuplan.graph/1` (SPEC G2,
// docs/graph-format.md). The reader reports the file and the JSON path of the
// first problem ("g.json: $.nodes[3].inputs[1]: unknown node 'x'"); it
// resolves omitted engines from the op-type table and checks structure that
// the format itself must get right (names, references, anchors, dims). The
// graph-level invariants (acyclicity, ownership) are the verifier's.
#ifndef NPUPLAN_IR_GRAPH_JSON_H_
#define NPUPLAN_IR_GRAPH_JSON_H_

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

inline constexpr std::string_view kGraphFormat = "npuplan.graph/1";

struct GraphReadOptions {
  // Base engine table (built-in, or merged with --engines FILE); the graph's
  // own "engines" section is merged on top.
  const EngineTable* engines = nullptr;
  // Sort every graph topologically after reading (mode from ge.topoSortingMode).
  bool topo_sort = true;
};

absl::StatusOr<Model> ParseGraphJson(std::string_view text, std::string_view source,
                                     const GraphReadOptions& opts = {});
absl::StatusOr<Model> ReadGraphFile(const std::string& path, const GraphReadOptions& opts = {});
// From an already parsed document (the plan reader uses this for "graph").
absl::StatusOr<Model> GraphFromJson(const nlohmann::json& j, std::string_view source,
                                    const GraphReadOptions& opts = {});

// Deterministic JSON of the model in npuplan.graph/1 (sorted keys, graphs in pre-order).
nlohmann::json GraphToJson(const Model& model);
std::string WriteGraphJson(const Model& model);

// Attribute values <-> JSON (shared with the plan format).
nlohmann::json AttrToJson(const AttrValue& v);
absl::StatusOr<AttrValue> AttrFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace npuplan

#endif  // NPUPLAN_IR_GRAPH_JSON_H_
