// ONNX shape inference in a child process.
//
// libonnx (Debian's 1.12) crashes on malformed models in places no check of
// ours can reach ahead of time: inference functions index shapes with
// unchecked attribute values (GatherND's batch_dims), read types without null
// checks, … (docs/reliability.md lists the ones fuzzing found). Bad input must
// never take npuplan down, so inference runs in a fork()ed child that gets the
// model copy-on-write, infers, and sends the graphs back without their
// initializers (the parent keeps its own: no weight bytes cross the pipe). A
// child that dies on a signal leaves the model untouched and reports which.
#ifndef NPUPLAN_IMPORTERS_ISOLATED_INFERENCE_H_
#define NPUPLAN_IMPORTERS_ISOLATED_INFERENCE_H_

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace npuplan::onnx_import {

// Runs onnx::shape_inference::InferShapes on `model`. In a child process when
// `isolate` is true, else in this one. Returns
//   OK                  — `model` now carries the inferred types;
//   InvalidArgument     — inference threw (the message is libonnx's); `model`
//                         is unchanged when isolated;
//   Aborted             — the child died ("killed by signal 11 (Segmentation
//                         fault)"); `model` is unchanged;
//   Internal            — fork/pipe failed or the child's reply was malformed.
absl::Status InferShapes(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options, bool isolate);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ISOLATED_INFERENCE_H_
