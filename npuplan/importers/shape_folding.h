// Shape-arithmetic folding for the ONNX importer (SPEC G3), run after ONNX's
// own shape inference.
//
// ONNX shape inference leaves a tensor's dims unknown whenever they come from
// a computed shape tensor (Shape → Gather/Slice → Concat → Reshape, Expand,
// ConstantOfShape, Tile). This pass evaluates those small integer tensors
// symbolically — element by element, an element staying unknown when it
// depends on a truly dynamic dim — and writes every dim it can now prove into
// the graph's value_info. The importer then re-runs ONNX inference so the new
// facts flow through all downstream ops, and repeats until nothing changes.
//
// Tracked values: integer and bool tensors of rank ≤ 1 with at most
// kMaxTrackedElements elements, from initializers, Constant nodes, Shape,
// Size, Gather, Slice, Concat, Squeeze/Unsqueeze, Cast, Identity, Reshape,
// Add/Sub/Mul/Div/Mod/Min/Max, Neg/Abs, comparisons (Equal, Less, …),
// Not/And/Or, Where, Range, ConstantOfShape (int value) and ReduceProd.
// Consumers whose output shapes it refines: Reshape, Expand,
// ConstantOfShape, Tile, Range, Slice, Resize (sizes), Pad, Split. Subgraphs
// (If/Loop/Scan) see the values of their enclosing scopes.
#ifndef NPUPLAN_IMPORTERS_SHAPE_FOLDING_H_
#define NPUPLAN_IMPORTERS_SHAPE_FOLDING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace npuplan::onnx_import {

inline constexpr int64_t kMaxTrackedElements = 64;

// Folds shape arithmetic in `graph` and its subgraphs; returns how many dims
// became known (0 = fixed point), or InvalidArgument naming the node whose
// values make its output invalid (a negative ConstantOfShape/Resize/Pad size,
// negative Tile repeats, a dim product that overflows int64).
absl::StatusOr<int64_t> FoldShapeArithmetic(onnx::GraphProto& graph);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_SHAPE_FOLDING_H_
