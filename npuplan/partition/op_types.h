// Operator types both partition passes treat specially (GE's DATA/CONSTANT
// families), written once so the two passes cannot disagree.
#ifndef NPUPLAN_PARTITION_OP_TYPES_H_
#define NPUPLAN_PARTITION_OP_TYPES_H_

#include <string_view>

namespace npuplan::partition {

inline bool IsDataType(std::string_view t) {
  return t == "Data" || t == "RefData" || t == "AippData";
}
inline bool IsConstType(std::string_view t) { return t == "Const" || t == "Constant"; }
// Call and control-flow types: a root graph holding one is never made wholly
// dynamic by the host-scheduling threshold.
inline bool IsSpecialType(std::string_view t) {
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
