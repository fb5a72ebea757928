// Strong id types for nodes and graphs only: a NodeId where a GraphId is expected does not compile.
// Stream and event ids are plain integers (Node::stream_id int64_t, SyncEvent::id int32_t).
#ifndef NPUPLAN_IR_IDS_H_
#define NPUPLAN_IR_IDS_H_

#include <cstdint>
#include <functional>
#include <limits>

namespace npuplan {

template <typename Tag>
struct StrongId {
  static constexpr int32_t kInvalid = -1;
  int32_t value = kInvalid;

  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  constexpr size_t index() const { return static_cast<size_t>(value); }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
};

struct NodeIdTag {};
struct GraphIdTag {};
// A node of the model (global across root graph and subgraphs).
using NodeId = StrongId<NodeIdTag>;
// A graph of the model; GraphId(0) is the root graph.
using GraphId = StrongId<GraphIdTag>;

inline constexpr GraphId kRootGraph{0};

}  // namespace npuplan

template <typename Tag>
struct std::hash<npuplan::StrongId<Tag>> {
  size_t operator()(npuplan::StrongId<Tag> id) const noexcept { return std::hash<int32_t>()(id.value); }
};

#endif  // NPUPLAN_IR_IDS_H_
