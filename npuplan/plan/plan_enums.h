// The plan's closed vocabularies as enums, each with one name table: the
// names are the plan format's strings (docs/plan-format.md), written by the
// plan writer and mapped back by the reader, so the JSON, the decision log
// and every message keep the same text. Passes compare enums, never names.
#ifndef NPUPLAN_PLAN_PLAN_ENUMS_H_
#define NPUPLAN_PLAN_PLAN_ENUMS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace npuplan {

// Index `e` of a name table.
template <typename E, size_t N>
constexpr std::string_view EnumName(const std::string_view (&names)[N], E e) {
  return names[static_cast<size_t>(e)];
}
// The enum whose name is `name`, or nullopt when the table has no such name.
template <typename E, size_t N>
constexpr std::optional<E> EnumFromName(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

// streams.mode: how logical-stream-assignment assigned the streams.
enum class StreamMode : uint8_t { kNone, kMulti, kSingle, kDynamicSingle, kDynamicMulti };
inline constexpr std::string_view kStreamModeNames[] = {"", "multi", "single", "dynamic-single",
                                                        "dynamic-multi"};
static_assert(std::size(kStreamModeNames) == static_cast<size_t>(StreamMode::kDynamicMulti) + 1);
constexpr std::string_view StreamModeName(StreamMode m) { return EnumName(kStreamModeNames, m); }
constexpr std::optional<StreamMode> ParseStreamMode(std::string_view s) {
  return EnumFromName<StreamMode>(kStreamModeNames, s);
}
// A dynamic mode: some graph is unknown-shape and its streams follow GE's
// dynamic-shape allocator (the names' "dynamic" prefix).
constexpr bool IsDynamicStreamMode(StreamMode m) {
  return m == StreamMode::kDynamicSingle || m == StreamMode::kDynamicMulti;
}

// partition.decision: what dynamic-shape-partition did with the root graph.
// kNone ("") only before the pass ran; a plan file never carries it.
enum class PartitionDecision : uint8_t { kNone, kStatic, kWholeDynamic, kPartitioned, kSkipped };
inline constexpr std::string_view kPartitionDecisionNames[] = {"", "static", "whole-dynamic",
                                                               "partitioned", "skipped"};
static_assert(std::size(kPartitionDecisionNames) ==
              static_cast<size_t>(PartitionDecision::kSkipped) + 1);
constexpr std::string_view PartitionDecisionName(PartitionDecision d) {
  return EnumName(kPartitionDecisionNames, d);
}
constexpr std::optional<PartitionDecision> ParsePartitionDecision(std::string_view s) {
  return EnumFromName<PartitionDecision>(kPartitionDecisionNames, s);
}

// partition.subgraphs[].kind.
enum class SubgraphKind : uint8_t { kKnown, kUnknown, kInput };
inline constexpr std::string_view kSubgraphKindNames[] = {"known", "unknown", "input"};
static_assert(std::size(kSubgraphKindNames) == static_cast<size_t>(SubgraphKind::kInput) + 1);
constexpr std::string_view SubgraphKindName(SubgraphKind k) {
  return EnumName(kSubgraphKindNames, k);
}
constexpr std::optional<SubgraphKind> ParseSubgraphKind(std::string_view s) {
  return EnumFromName<SubgraphKind>(kSubgraphKindNames, s);
}

// memory.tensors[].region.
enum class MemoryRegion : uint8_t { kActivation, kInput, kConstant, kWorkspace };
inline constexpr std::string_view kMemoryRegionNames[] = {"activation", "input", "constant",
                                                          "workspace"};
static_assert(std::size(kMemoryRegionNames) == static_cast<size_t>(MemoryRegion::kWorkspace) + 1);
constexpr std::string_view MemoryRegionName(MemoryRegion r) {
  return EnumName(kMemoryRegionNames, r);
}
constexpr std::optional<MemoryRegion> ParseMemoryRegion(std::string_view s) {
  return EnumFromName<MemoryRegion>(kMemoryRegionNames, s);
}
// Activation and workspace tensors share the activation pool (peak).
constexpr bool IsPoolRegion(MemoryRegion r) {
  return r == MemoryRegion::kActivation || r == MemoryRegion::kWorkspace;
}

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_PLAN_ENUMS_H_
