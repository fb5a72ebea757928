// Graph-level facts about attached streams, read from node attributes only.
// Shared by the events passes, the events verifier and the CPU back end's
// dependency checker, so that all three read GE's attributes the same way
// (each still draws its own conclusions from them).
#ifndef NPUPLAN_IR_ATTACHED_STREAMS_H_
#define NPUPLAN_IR_ATTACHED_STREAMS_H_

#include <cstdint>
#include <vector>

#include "npuplan/ir/graph.h"

namespace npuplan {

// Input indices whose producers attached stream `attached` of `node` depends
// on: `_attached_stream_depend_value_list` inside `_attached_stream_info` (a
// map for attached stream 0, or a list) / `_attached_resource_depend_value_list_int`
// (alias `_attached_stream_depend_value_list`) in the `_attached_stream_info_list`
// entry of attached stream `attached` (the entries marked
// `_attached_resource_is_valid`, else all, in order). Empty when the node
// declares none.
std::vector<int64_t> AttachedDependIndices(const Node& node, int32_t attached);

// The attached streams of `node` (indices, ascending) whose depend list names
// an input read from `producer`.
std::vector<int32_t> AttachedReadersOf(const Node& node, NodeId producer);

// Data- and Const-like nodes: their values exist before the model starts, so
// they are never waited for (GE excludes them from attached-stream events).
bool IsDataOrConst(const Node& node);

// Send/Recv (and notify) nodes materialised by sync-node-generation; on an
// attached stream they stand for their neighbour's attached task.
bool IsSyncNode(const Node& node);

// A node that only orders its stream: a Send/Recv node or a loop gate. It
// runs no computation, touches no memory and reads nothing of a parent
// graph; the order it carries is the events'.
bool CarriesOnlyOrder(const Node& node);

}  // namespace npuplan

#endif  // NPUPLAN_IR_ATTACHED_STREAMS_H_
