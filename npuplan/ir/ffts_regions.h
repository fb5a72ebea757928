// FFTS / FFTS+ subgraphs (ge-reference §4.2). A node with `_ffts_sub_graph`
// or `_ffts_plus_sub_graph` (GE puts them on a PartitionedCall) runs its
// subgraphs as one FFTS task of its own: GE generates no task for the nodes
// inside (TaskGenerator's filter) and its event insertion does not descend
// into them (InsertSyncEvents' filter); the owner's own edges order the work.
// Shared by the events passes, the events verifier, the task model's reader
// and the simulator's dependencies, so that all read the region the same way.
#ifndef NPUPLAN_IR_FFTS_REGIONS_H_
#define NPUPLAN_IR_FFTS_REGIONS_H_

#include <cstdint>
#include <vector>

#include "npuplan/ir/graph.h"

namespace npuplan {

// True for a node carrying `_ffts_sub_graph` or `_ffts_plus_sub_graph`.
bool IsFftsOwner(const Node& node);

// Per GraphId: 1 when the graph lies inside an FFTS owner's subgraph (at any
// depth below it). Empty when the model has no FFTS owner.
std::vector<uint8_t> FftsRegionGraphs(const Model& model);

}  // namespace npuplan

#endif  // NPUPLAN_IR_FFTS_REGIONS_H_
