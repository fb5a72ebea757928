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

}  // namespace npuplan::partition

#endif  // NPUPLAN_PARTITION_OP_TYPES_H_
