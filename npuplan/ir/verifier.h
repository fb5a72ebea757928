// The IR verifier (SPEC G4). Checks invariants without trusting the passes
// that produced the model: it recomputes everything it checks.
//
// Structure (always): names unique across the model; every data input names
// an existing node of the same graph and a valid output anchor; control
// inputs likewise; each graph acyclic over data + control edges; topo ids
// continuous from 0 per graph and consistent with the edges; subgraph
// ownership consistent (each subgraph owned by exactly one node that lists
// it, no ownership cycle); `_parent_node_index` of subgraph Data nodes within
// the parent's inputs.
//
// Stage facts: IrProperty names them; their checks are the rows of
// npuplan/verify/stage_checks.def, run by verify::VerifyPlan. Failures are
// Internal errors that name the rule and node.
#ifndef NPUPLAN_IR_VERIFIER_H_
#define NPUPLAN_IR_VERIFIER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "npuplan/ir/graph.h"

namespace npuplan {

// Stage facts a pass may require on entry or establish on exit.
enum class IrProperty : uint32_t {
  kTopoSorted = 1u << 0,
  kPartitioned = 1u << 1,
  kLogicalStreams = 1u << 2,
  kAttachedStreams = 1u << 3,
  kMemoryPlanned = 1u << 4,
  kTasks = 1u << 5,
  kSyncEvents = 1u << 6,
  kPhysicalStreams = 1u << 7,
  kActiveStreams = 1u << 8,
  kSyncNodes = 1u << 9,
};
using IrProperties = uint32_t;
constexpr IrProperties operator|(IrProperty a, IrProperty b) {
  return static_cast<uint32_t>(a) | static_cast<uint32_t>(b);
}
constexpr IrProperties operator|(IrProperties a, IrProperty b) { return a | static_cast<uint32_t>(b); }
constexpr bool Has(IrProperties set, IrProperty p) { return (set & static_cast<uint32_t>(p)) != 0; }
std::string PropertyNames(IrProperties props);

absl::Status VerifyStructure(const Model& model);
// The same checks one by one, each reporting its own first failure: what
// VerifyStructure runs when its combined pass finds a failure (so the
// message is this one's), and the reference its tests compare it with.
absl::Status VerifyStructureCheckByCheck(const Model& model);

// Stream ids form 0..k-1 without holes over all nodes of root and subgraphs
// (SPEC S6; the logical-streams row "stream-ids" of verify/stage_checks.def).
absl::Status VerifyStreamIdsContinuous(const Model& model);

}  // namespace npuplan

#endif  // NPUPLAN_IR_VERIFIER_H_
