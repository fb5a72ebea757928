// The plan reader's check of the fields it does not turn into Plan data: a
// field present in a plan file is either read or checked, never ignored.
//   - unknown fields (outside the graph, which its own reader checks) are
//     errors naming the JSON path;
//   - derived fields must agree with the plan read from the same file:
//     $.summary (node, graph, stream and event counts, memory figures),
//     $.nodes.<n>.graph / topo_id / send_events / recv_events, and
//     $.nodes.<n>.stream before the physical split (= logical_stream);
//   - $.nodes, when present, has an entry for every node; a stage is listed
//     once; integers narrower than int64 (send_attached, recv_attached,
//     memory tensor outputs) are in range instead of truncated.
#ifndef NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_
#define NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/json_document.h"

namespace npuplan {

// The field checks' view of the large sections' entries ($.nodes,
// $.memory.tensors), gathered by the reader from the DOM it reads each entry
// from, so that no entry is parsed twice. Entries come in document order,
// and only until the first one a check refuses: the checks report the first
// failure in that order.
class PlanEntryFacts {
 public:
  // $.nodes.<key>, read for node `id` (its logical stream already stored).
  void AddNode(const Model& m, std::string_view key, NodeId id, const nlohmann::json& entry,
               bool physical, std::string_view src);
  // $.memory.tensors[i] beside the keys of $.memory; `stored` = what the
  // reader stored of its "output".
  void AddTensor(size_t i, const nlohmann::json& entry, int32_t stored, std::string_view src);
  void SetMemoryKeys(std::vector<std::string> keys) { memory_keys_ = std::move(keys); }

  bool nodes_present = false;

 private:
  friend class FieldChecker;
  // A node entry's send_events / recv_events as written: integers kept in
  // `ints_` [begin, end); anything else in `others_`.
  struct IdList {
    enum State : uint8_t { kAbsent, kInts, kOther };
    size_t begin = 0, end = 0;
    State state = kAbsent;
  };
  struct Other {
    std::string dump;
    std::string type;  // its type name when it is not an array, else ""
  };
  struct NodeEntry {
    NodeId id;
    IdList send, recv;
  };
  // Keyed by 2 * entry + (0 send, 1 recv).
  IdList ReadIdList(const nlohmann::json& entry, std::string_view key, size_t other_key);

  std::vector<NodeEntry> nodes_;
  std::vector<int64_t> ints_;
  std::map<size_t, Other> others_;
  // The first entry whose unknown field, graph or topo_id is wrong (checked
  // before its event lists), and the first whose stream is (after them).
  size_t early_at_ = SIZE_MAX, stream_at_ = SIZE_MAX;
  absl::Status early_, stream_;
  absl::Status tensor_;  // the first tensor entry's failure
  std::vector<std::string> memory_keys_;
};

// InvalidArgument "<src>: <JSON path>: <what>" for the first field that fails.
absl::Status CheckPlanDocumentFields(const JsonText& doc, const Plan& plan,
                                     const PlanEntryFacts& facts, std::string_view src);

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_JSON_FIELDS_H_
