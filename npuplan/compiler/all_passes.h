// Headers of every pass listed in passes.def.
#ifndef NPUPLAN_COMPILER_ALL_PASSES_H_
#define NPUPLAN_COMPILER_ALL_PASSES_H_

#include "npuplan/events/events_passes.h"
#include "npuplan/memory/memory_planning.h"
#include "npuplan/partition/partition_passes.h"
#include "npuplan/pass/pass.h"
#include "npuplan/stream/assign_attached_stream_pass.h"
#include "npuplan/stream/logical_stream_assignment.h"
#include "npuplan/stream/stream_budget.h"

#endif  // NPUPLAN_COMPILER_ALL_PASSES_H_
