// What the events passes read of a plan: the execution view and the
// execution semantics (both in npuplan/plan/, shared with the verifier), and
// GE's event order (ge_order.h). The names stay reachable as events::… .
#ifndef NPUPLAN_EVENTS_SYNC_VIEW_H_
#define NPUPLAN_EVENTS_SYNC_VIEW_H_

#include "npuplan/events/ge_order.h"
#include "npuplan/ir/attached_streams.h"
#include "npuplan/plan/execution_semantics.h"
#include "npuplan/plan/execution_view.h"

namespace npuplan::events {

using ::npuplan::ActivationInfo;
using ::npuplan::ComputeActivation;
using ::npuplan::DynamicAttrNode;
using ::npuplan::DynamicPathGraphs;
using ::npuplan::DynamicSubgraphBoundary;
using ::npuplan::Enclosure;
using ::npuplan::IdsContinuous;
using ::npuplan::kMaxNotifies;
using ::npuplan::kNodePrefetch;
using ::npuplan::kRecvTasks;
using ::npuplan::kReservedTasks;
using ::npuplan::kSendTasks;
using ::npuplan::MayOpenStream;
using ::npuplan::OnDynamicPath;
using ::npuplan::PrefetchNode;
using ::npuplan::RecordSlots;
using ::npuplan::SendSlots;
using ::npuplan::SyncView;
// Attached-stream attribute readers (npuplan/ir/attached_streams.h).
using ::npuplan::AttachedDependIndices;
using ::npuplan::IsDataOrConst;

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_SYNC_VIEW_H_
