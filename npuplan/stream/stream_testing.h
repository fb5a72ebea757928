// Test helpers for the stream module (header-only, used by *_test.cc).
//
// ParseStreamTestGraph: an npuplan.graph/1 document whose nodes may omit
// "outputs" (each then gets one [1] float16 output), verified on load.
// PassHarness: one graph's engine subgraphs plus an AssignContext, to run
// single passes of the chain. CompileStreams: the whole driver (+ attached).
#ifndef NPUPLAN_STREAM_STREAM_TESTING_H_
#define NPUPLAN_STREAM_STREAM_TESTING_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/pass/pass.h"
#include "npuplan/stream/assign_attached_stream_pass.h"
#include "npuplan/stream/logical_stream_assignment.h"
#include "npuplan/stream/logical_stream_pass.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::stream::testing {

inline void AddDefaultOutputs(nlohmann::json& nodes) {
  for (auto& n : nodes) {
    if (!n.contains("outputs") && n.value("type", "") != "NetOutput") {
      n["outputs"] = nlohmann::json::array({{{"shape", {1}}, {"dtype", "float16"}}});
    }
  }
}

inline absl::StatusOr<Model> ParseStreamTestGraph(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError("test graph is not valid JSON");
  if (!j.contains("format")) j["format"] = kGraphFormat;
  if (j.contains("nodes")) AddDefaultOutputs(j["nodes"]);
  if (j.contains("subgraphs")) {
    for (auto& sg : j["subgraphs"]) {
      if (sg.contains("nodes")) AddDefaultOutputs(sg["nodes"]);
    }
  }
  NPUPLAN_ASSIGN_OR_RETURN(Model model, GraphFromJson(j, "<test>"));
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(model));
  return model;
}

// Runs single LogicalStreamPass objects on the root graph.
struct PassHarness {
  Plan plan;
  CompileOptions options;
  DecisionLog log{/*keep=*/true};
  Statistics stats;
  std::unique_ptr<AssignContext> ctx;
  GraphState gs;

  static absl::StatusOr<std::unique_ptr<PassHarness>> Create(std::string_view graph,
                                                             std::map<std::string, std::string> opts = {}) {
    auto h = std::make_unique<PassHarness>();
    NPUPLAN_ASSIGN_OR_RETURN(h->plan.model, ParseStreamTestGraph(graph));
    h->options = CompileOptions::FromModel(h->plan.model, opts, false);
    h->ctx = std::make_unique<AssignContext>(h->plan.model, h->options, h->log, h->stats);
    NPUPLAN_ASSIGN_OR_RETURN(h->ctx->stream_options,
                             ReadStreamOptions(h->options, h->plan.model.root().attrs));
    NPUPLAN_RETURN_IF_ERROR(InitGraphState(h->gs, h->plan.model, kRootGraph, *h->ctx, -1, false));
    return h;
  }
  template <typename P>
  absl::StatusOr<bool> Run() {
    P pass;
    return pass.Run(gs, *ctx);
  }
  const Node& node(std::string_view name) const { return plan.model.node(plan.model.FindNode(name)); }
  Node& mutable_node(std::string_view name) { return plan.model.node(plan.model.FindNode(name)); }
  // Stream of the engine subgraph holding `name`.
  int64_t SubgraphStream(std::string_view name) const { return gs.SubgraphOf(node(name)).stream_id; }
  int32_t SubgraphIndex(std::string_view name) const { return gs.partition.subgraph_of[node(name).topo_id]; }
};

// Compiles `graph` through logical-stream-assignment (+ the attached pass),
// with verification after each pass.
inline absl::StatusOr<Plan> CompileStreams(std::string_view graph, std::map<std::string, std::string> opts = {},
                                           DecisionLog* log = nullptr, bool attached = true) {
  Plan plan;
  NPUPLAN_ASSIGN_OR_RETURN(plan.model, ParseStreamTestGraph(graph));
  plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  plan.EnsureNodeVectors();
  CompileOptions options = CompileOptions::FromModel(plan.model, opts, false);
  NPUPLAN_RETURN_IF_ERROR(options.Validate());
  DecisionLog local;
  Statistics stats;
  PassContext ctx{options, log ? *log : local, stats};
  ctx.instrumentation.verify_each = true;
  PassPipeline p("test");
  p.AddPass<LogicalStreamAssignment>();
  if (attached) p.AddPass<AssignAttachedStreamPass>();
  NPUPLAN_RETURN_IF_ERROR(p.Run(plan, ctx).status());
  return plan;
}

inline int64_t StreamOf(const Plan& plan, std::string_view name) {
  return plan.model.node(plan.model.FindNode(name)).stream_id;
}

}  // namespace npuplan::stream::testing

#endif  // NPUPLAN_STREAM_STREAM_TESTING_H_
