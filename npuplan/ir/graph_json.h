// Reader and writer of the native graph format `npuplan.graph/1` (SPEC G2,
// docs/graph-format.md). The reader reports the file and the JSON path of the
// first problem ("g.json: $.nodes[3].inputs[1]: unknown node 'x'"); it
// resolves omitted engines from the op-type table and checks structure that
// the format itself must get right (names, references, anchors, dims). The
// graph-level invariants (acyclicity, ownership) are the verifier's.
//
// Both directions stream: the reader is a SAX handler (nlohmann::json::sax_parse)
// that builds the IR as the text goes by — only attribute values that are lists
// or maps, engine entries and the "format" value become small DOMs — and the
// writer emits text through JsonWriter, byte-identical to nlohmann's dump(1) of
// the document with sorted keys. Precedence of errors in a document with several
// problems: invalid JSON, then a top level that is not an object, then a missing
// or wrong "format", then the first other problem in document order (field
// checks), then references, ownership and cycles. A limit (GraphReadLimits)
// stops the reader at once.
#ifndef NPUPLAN_IR_GRAPH_JSON_H_
#define NPUPLAN_IR_GRAPH_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/support/json_writer.h"

namespace npuplan {

inline constexpr std::string_view kGraphFormat = "npuplan.graph/1";

// Resource limits of the reader (issue #11 item 5): input beyond one is
// rejected with an error naming the limit and the CLI flag that raises it,
// instead of exhausting memory or stack. Defaults are generous.
struct GraphReadLimits {
  int64_t max_nodes = int64_t{1} << 24;          // 16,777,216 nodes, all graphs (--max-nodes)
  int64_t max_edges = int64_t{1} << 26;          // 67,108,864 data + control inputs (--max-edges)
  int64_t max_string_bytes = int64_t{1} << 24;   // 16 MiB per JSON string or key (--max-string-bytes)
  int64_t max_attr_elements = int64_t{1} << 24;  // values inside one attribute value (--max-attr-elements)
  // Subgraph nesting depth (root = 0), and list/map nesting inside one
  // attribute value (--max-depth).
  int64_t max_depth = 64;
};

struct GraphReadOptions {
  // Base engine table (built-in, or merged with --engines FILE); the graph's
  // own "engines" section is merged on top.
  const EngineTable* engines = nullptr;
  // Sort every graph topologically after reading (mode from ge.topoSortingMode).
  bool topo_sort = true;
  // Non-empty: the ge.topoSortingMode to sort with instead of the graph's
  // own (the command line's --option ge.topoSortingMode=…).
  std::string topo_sorting_mode;
  GraphReadLimits limits;
};

absl::StatusOr<Model> ParseGraphJson(std::string_view text, std::string_view source,
                                     const GraphReadOptions& opts = {});
// The same for text the reader may consume: it is freed as soon as it is
// parsed, before the model is built and sorted (a 1M-node graph's text is
// ~210 MB). `source` must not point into `text`.
absl::StatusOr<Model> ParseGraphJsonOwned(std::string text, std::string_view source,
                                          const GraphReadOptions& opts = {});
absl::StatusOr<Model> ReadGraphFile(const std::string& path, const GraphReadOptions& opts = {});
// From an already parsed document (the plan reader uses this for "graph"); the
// document is walked through the same reader, so checks and limits are the same.
absl::StatusOr<Model> GraphFromJson(const nlohmann::json& j, std::string_view source,
                                    const GraphReadOptions& opts = {});

// Deterministic JSON of the model in npuplan.graph/1 (sorted keys, graphs in
// pre-order, one-space indentation, trailing newline).
std::string WriteGraphJson(const Model& model);
// The same document as one value of a larger one (the plan's "graph").
void WriteGraph(const Model& model, JsonWriter& w);

// Attribute values <-> JSON (shared with the plan format).
void WriteAttr(const AttrValue& v, JsonWriter& w);
nlohmann::json AttrToJson(const AttrValue& v);
absl::StatusOr<AttrValue> AttrFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace npuplan

#endif  // NPUPLAN_IR_GRAPH_JSON_H_
