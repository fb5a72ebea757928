// Test helpers (header-only, for *_test.cc of sim and exec): hand-built plans
// from inline graphs. `_test_stream` (int) becomes Node::stream_id,
// `_test_attached` (int list) attached_stream_ids; events are added by name.
#ifndef NPUPLAN_SIM_SIM_TESTING_H_
#define NPUPLAN_SIM_SIM_TESTING_H_

#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/testing/graph_testing.h"

namespace npuplan::sim::testing {

inline absl::StatusOr<Plan> PlanFromGraph(std::string_view json_text) {
  NPUPLAN_ASSIGN_OR_RETURN(Model model, npuplan::testing::ParseVerifiedGraph(json_text));
  Plan plan;
  plan.model = std::move(model);
  const int64_t max_stream = npuplan::testing::ApplyTestStreams(plan.model).max_any;
  plan.streams.logical = max_stream + 1;
  plan.streams.physical = max_stream + 1;
  plan.EnsureNodeVectors();
  return plan;
}

// Adds event (or notify) `id` from `send` to `recv`; aborts on unknown names (a test bug).
inline void AddEvent(Plan& plan, std::string_view send, std::string_view recv, int64_t id,
                     std::string kind = "event", int32_t send_attached = -1, int32_t recv_attached = -1) {
  SyncEvent e;
  e.id = id;
  if (auto k = ParseSyncKind(kind)) {
    e.kind = *k;
  } else {
    std::abort();
  }
  e.send = plan.model.FindNode(send);
  e.recv = plan.model.FindNode(recv);
  if (!e.send.valid() || !e.recv.valid()) std::abort();
  e.send_attached = send_attached;
  e.recv_attached = recv_attached;
  e.reason = SyncReason::kDataEdge;
  plan.events.events.push_back(e);
  if (e.kind == SyncKind::kNotify) {
    plan.events.notify_count = std::max(plan.events.notify_count, id + 1);
  } else {
    plan.events.event_count = std::max(plan.events.event_count, id + 1);
  }
}

}  // namespace npuplan::sim::testing

#endif  // NPUPLAN_SIM_SIM_TESTING_H_
