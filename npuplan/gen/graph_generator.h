// Synthetic but realistic model graphs for tests and benchmarks (`npuplan gen`).
//
// A model is a stack of transformer-style layers: LayerNorm → Q/K/V MatMuls
// (three parallel AI-core branches with Const weights) → attention BatchMatMuls
// with a VectorEngine Softmax → output projection → residual Add → FFN (MatMul,
// Gelu on VectorEngine, MatMul) with an AI CPU DropOutGenMask feeding the
// dropout, and, with data parallelism, an HCCL HcomAllReduce (fused) per layer
// whose result joins later. Options add control edges between layers, stream
// labels, If/While subgraphs and dynamic (-1) dims. Everything is
// deterministic in (options, seed).
#ifndef NPUPLAN_GEN_GRAPH_GENERATOR_H_
#define NPUPLAN_GEN_GRAPH_GENERATOR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph.h"
#include "npuplan/ir/graph_json.h"

namespace npuplan {

struct GeneratorOptions {
  int64_t layers = 4;            // transformer layers (about 30 nodes each)
  int64_t target_nodes = 0;      // if > 0, overrides `layers` to reach about this many nodes
  uint64_t seed = 1;             // random choices (control edges, labels, dynamic layers)
  int64_t hidden = 1024;         // hidden size (shapes only)
  int64_t seq = 512;             // sequence length
  bool hccl = true;              // data-parallel all-reduce per layer (DNN_HCCL)
  bool aicpu = true;             // AI CPU DropOutGenMask per layer
  double control_edge_prob = 0.1;  // control edge from a layer to a later layer
  double stream_label_prob = 0.0;  // layer's FFN gets `_stream_label`
  int64_t if_every = 0;          // every k-th layer's FFN sits in an If (0 = never)
  int64_t while_every = 0;       // every k-th layer gets a While loop over a small body (0 = never)
  double dynamic_prob = 0.0;     // probability that a layer's activations have a -1 dim
  bool dynamic_input = false;    // the graph input's batch dim is -1
  int64_t batch = 8;             // batch dim of the activations (when not dynamic_input)
};

// What `gen` writes, `verify` accepts: the sizes are checked before anything
// is allocated. InvalidArgument when the graph would have more nodes than the
// graph reader's default limit, or a tensor whose byte size overflows int64
// (the products of --hidden and --seq, checked).
absl::Status CheckGeneratorSize(const GeneratorOptions& options, const GraphReadLimits& limits = {});
absl::StatusOr<Model> GenerateTransformer(const GeneratorOptions& options);

// A random layered DAG of `nodes` nodes (fan-in up to `max_fanin`), all on
// AIcoreEngine except every `hccl_every`-th node on DNN_HCCL; for scaling tests.
// CheckRandomDagSize refuses sizes beyond the graph reader's default limits
// (nodes, and nodes x max_fanin edges) before anything is allocated.
absl::Status CheckRandomDagSize(int64_t nodes, int64_t max_fanin, const GraphReadLimits& limits = {});
Model GenerateRandomDag(int64_t nodes, int64_t max_fanin, uint64_t seed, int64_t hccl_every = 0);

// One producer with `consumers` consumers, all read by the NetOutput (a
// fan-out and a fan-in of that width; scale tests). Consumers alternate
// between AIcoreEngine (the producer's engine: they may join its engine
// subgraph) and VectorEngine (one engine subgraph each).
Model GenerateFanOut(int64_t consumers);

// A chain of `depth` nested Ifs: the then branch of each If holds the next
// If, the else branch a Cast; the innermost then branch a Relu (2 * depth + 1
// graphs; scale tests).
Model GenerateNestedIf(int64_t depth);

// Gives each computing node with a data input and an output (not a
// control-flow owner, not a pass-on node) `_ref_input_index` 0 with
// probability `prob`: its output 0 then writes its input 0's memory in place,
// as GE's AssignAdd does (`gen --ref-write-prob`; docs/memory.md "In-place
// writes"). Deterministic in (model, prob, seed); returns how many it marked.
int64_t AddRefWrites(Model& model, double prob, uint64_t seed);

// Gives each control-flow owner (a node with subgraphs, in any graph) with
// probability `prob` a control edge from a node drawn among those before it
// in its graph's order (not a NetOutput, not already an input of it): a
// control edge into an owner orders all of its subgraphs
// (`gen --owner-control-prob`; docs/events.md "Control edges into an
// owner"). The graph's order stays topological. Deterministic in (model,
// prob, seed); returns how many edges it added.
int64_t AddOwnerControls(Model& model, double prob, uint64_t seed);

}  // namespace npuplan

#endif  // NPUPLAN_GEN_GRAPH_GENERATOR_H_
