// GE's event order and numbering (RefreshContinuousEvents), and the event
// table helpers the events passes share: renumbering, recounting, the next
// free id, a snapshot to tell whether a pass changed the table.
#ifndef NPUPLAN_EVENTS_GE_ORDER_H_
#define NPUPLAN_EVENTS_GE_ORDER_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/plan/plan.h"
#include "npuplan/support/big_vector.h"

namespace npuplan::events {

// GE's event order (RefreshContinuousEvents over NodeCompareKey maps):
// main-stream events first, then attached ones; by sender node name, then
// sender graph name (then node index), then old id. Returns the indices of
// `keys` in that order; O(s log s + e) for s distinct senders, e events.
struct GeOrderKey {
  NodeId send;
  bool attached = false;  // sent from an attached stream
  int64_t id = 0;         // old id
};
std::vector<uint32_t> GeOrder(const Model& m, std::span<const GeOrderKey> keys);
// Step 1 of GeOrder: ranks distinct sender nodes by (node name, graph name,
// node index): rank[sender] = 0..|senders|-1 (other entries untouched).
void RankSendersByName(const Model& m, std::span<const int32_t> senders, BigVector<int32_t>& rank);
// The same order as a list: sorts distinct sender node ids in place.
// `prefix_of_node` (optional, per NodeId: SyncView::TakeNamePrefixes()) saves
// reading each sender's Node for its name prefix.
void SortSendersByName(const Model& m, BigVector<int32_t>& senders,
                       std::span<const uint64_t> prefix_of_node = {});

// Each table position's (id, sender, receiver): what a pass compares to tell
// whether it changed the event table.
class EventTableSnapshot {
 public:
  explicit EventTableSnapshot(std::span<const SyncEvent> evs) : entries_(evs.size()) {
    for (size_t i = 0; i < evs.size(); ++i) entries_[i] = {evs[i].id, evs[i].send, evs[i].recv};
  }
  bool Differs(std::span<const SyncEvent> evs) const {
    if (evs.size() != entries_.size()) return true;
    for (size_t i = 0; i < evs.size(); ++i) {
      const Entry& b = entries_[i];
      if (b.id != evs[i].id || b.send != evs[i].send || b.recv != evs[i].recv) return true;
    }
    return false;
  }

 private:
  struct Entry {
    int32_t id;
    NodeId send, recv;
  };
  BigVector<Entry> entries_;
};

// Renumbers ids GE's way (RefreshContinuousEvents): events ordered by sender
// node name, then sender graph name, then old id; main-stream events first,
// attached-stream events continue the numbering. Events and notifies are
// numbered separately from 0. Updates event_count / notify_count. True when
// some event's id, sender or receiver at some table position changed.
bool RenumberGeOrder(Plan& plan);

// Recomputes event_count / notify_count from the ids.
void RecountIds(EventTable& table);

// Renumbers the ids of each kind 0..m-1 in their order (events that shared an
// id still share one) after events were removed, and recounts.
void CompactIds(EventTable& table);

// Next free id of `kind`.
int64_t NextId(const EventTable& table, SyncKind kind);

}  // namespace npuplan::events

#endif  // NPUPLAN_EVENTS_GE_ORDER_H_
