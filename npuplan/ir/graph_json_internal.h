// Internal (not installed): what the graph_json*.cc files share. The reader
// runs in two phases: the SAX handler (graph_json_reader.h) collects a
// RawDocument as the text goes by, without touching the Model's node table;
// BuildModel (graph_json_build.cc) then adds the nodes in the order the format
// defines (root nodes, then each subgraph's), resolves references and checks
// ownership, exactly as a two-phase DOM reader would. Nothing here reaches a
// public header.
#ifndef NPUPLAN_IR_GRAPH_JSON_INTERNAL_H_
#define NPUPLAN_IR_GRAPH_JSON_INTERNAL_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/graph.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/support/json_writer.h"
#include "npuplan/support/str_util.h"

namespace npuplan::graph_json_internal {

// "source: where: what", the reader's one error form.
inline absl::Status Bad(std::string_view source, const std::string& where, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": ", where, ": ", what));
}

// An attribute map as a JSON object (graph_json_attributes.cc; the writer
// uses it for the graphs' and nodes' "attrs").
void WriteAttrMap(const AttrMap& m, JsonWriter& w);

// The reference lists of a node.
enum class RefKind : uint8_t { kInputs, kControl, kSubgraphs };

// A node's references of one kind: entries [begin, begin + count) of
// RawDocument::refs.
struct RefRange {
  uint32_t begin = 0, count = 0;
};

struct RawNode {
  Node node;
  int32_t index = 0;  // position in its graph's "nodes" array
  RefRange refs[3];   // by RefKind
};

struct RawGraph {
  std::string name;
  bool has_name = false;
  bool name_ok = false;  // a non-empty string
  std::optional<std::string> parent;
  AttrMap attrs;
  std::deque<RawNode> nodes;  // no moves while growing
  uint32_t seen = 0;          // field bits
};

// What the first phase collected.
struct RawDocument {
  // Name, options, engines and root attrs already read; no nodes yet.
  Model model;
  RawGraph root;
  std::vector<RawGraph> subgraphs;
  // Every reference string, one after the other; refs holds (offset, length).
  std::string ref_chars;
  std::vector<std::pair<uint64_t, uint32_t>> refs;
  int64_t total_nodes = 0;
};

// The second phase: the Model of a document whose fields all passed the first
// phase's checks (then sorted topologically, or renumbered, as opts says).
absl::StatusOr<Model> BuildModel(RawDocument doc, std::string_view source,
                                 const GraphReadOptions& opts);

}  // namespace npuplan::graph_json_internal

#endif  // NPUPLAN_IR_GRAPH_JSON_INTERNAL_H_
