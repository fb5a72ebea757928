// Headers of every pass listed in passes.def.
#ifndef NPUPLAN_COMPILER_ALL_PASSES_H_
#define NPUPLAN_COMPILER_ALL_PASSES_H_

#include "npuplan/events/device_limit_check.h"
#include "npuplan/events/event_id_allocation.h"
#include "npuplan/events/event_minimization.h"
#include "npuplan/events/event_reuse.h"
#include "npuplan/events/physical_stream_split.h"
#include "npuplan/events/stream_activation.h"
#include "npuplan/events/sync_event_insertion.h"
#include "npuplan/events/sync_event_optimization.h"
#include "npuplan/events/sync_node_generation.h"
#include "npuplan/events/task_count_assignment.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/pass/pass.h"
#include "npuplan/stream/assign_attached_stream_pass.h"
#include "npuplan/stream/in_place_write_ordering.h"
#include "npuplan/stream/logical_stream_assignment.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/stream/stream_budget.h"

#endif  // NPUPLAN_COMPILER_ALL_PASSES_H_
