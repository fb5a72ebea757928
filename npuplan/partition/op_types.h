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
inline constexpr std::string_view kSpecialTypes[] = {"PartitionedCall",
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
// Bit L is set when a special type has length L: most types are turned away
// by their length (the marking asks this of every root node).
inline constexpr uint32_t kSpecialTypeLengths = [] {
  uint32_t bits = 0;
  for (std::string_view t : kSpecialTypes) bits |= 1u << t.size();
  return bits;
}();
inline bool IsSpecialType(std::string_view t) {
  if (t.size() > 31 || ((kSpecialTypeLengths >> t.size()) & 1u) == 0) return false;
  for (std::string_view k : kSpecialTypes) {
    if (k == t) return true;
  }
  return false;
}

}  // namespace npuplan::partition

#endif  // NPUPLAN_PARTITION_OP_TYPES_H_
