// Operator types both partition passes treat specially (GE's DATA/CONSTANT
// families), written once so the two passes cannot disagree.
#ifndef NPUPLAN_PARTITION_OP_TYPES_H_
#define NPUPLAN_PARTITION_OP_TYPES_H_

#include <cstdint>
#include <string_view>

namespace npuplan::partition {

inline bool IsDataType(std::string_view t) {
  return t == "Data" || t == "RefData" || t == "AippData";
}
inline bool IsConstType(std::string_view t) { return t == "Const" || t == "Constant"; }
// Call and control-flow types: a root graph holding one is never made wholly
// dynamic by the host-scheduling threshold.
inline bool IsSpecialType(std::string_view t) {
  // The lengths of the names below: most types are turned away by theirs
  // (the marking asks this of every root node).
  constexpr uint32_t kLengths = (1u << 2) | (1u << 4) | (1u << 5) | (1u << 8) | (1u << 11) |
                                (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15) | (1u << 16) |
                                (1u << 23);
  if (t.size() > 31 || ((kLengths >> t.size()) & 1u) == 0) return false;
  static constexpr std::string_view kTypes[] = {"PartitionedCall",
                                                "StatefulPartitionedCall",
                                                "Case",
                                                "If",
                                                "StatelessIf",
                                                "While",
                                                "StatelessWhile",
                                                "StreamActive",
                                                "StreamSwitch",
                                                "StreamMerge",
                                                "Enter",
                                                "RefEnter",
                                                "NextIteration",
                                                "RefNextIteration"};
  for (std::string_view k : kTypes) {
    if (k == t) return true;
  }
  return false;
}

}  // namespace npuplan::partition

#endif  // NPUPLAN_PARTITION_OP_TYPES_H_
