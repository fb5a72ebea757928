#include "npuplan/pass/pass.h"

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/verify.h"

namespace npuplan {
namespace {

absl::Status AnnotateAfter(const absl::Status& s, std::string_view pass) {
  if (s.ok()) return s;
  std::string msg(s.message());
  if (msg.find("(after pass '") != std::string::npos || msg.find("[" + std::string(pass) + "]") == 0) {
    return s;
  }
  return absl::Status(s.code(), StrCat(msg, " (after pass '", pass, "')"));
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
uint64_t HashStr(std::string_view s) { return std::hash<std::string_view>()(s); }

}  // namespace

uint64_t StructuralFingerprint(const Model& model) {
  // Independent of each graph's node order: nodes in id order, each with its
  // graph, so that a pass allowed to reorder (Pass::may_reorder) passes.
  uint64_t h = model.num_nodes();
  for (const Graph& g : model.graphs()) h = Mix(Mix(h, HashStr(g.name)), g.nodes.size());
  for (size_t i = 0; i < model.num_nodes(); ++i) {
    const Node& n = model.node(NodeId(static_cast<int32_t>(i)));
    h = Mix(h, HashStr(n.name));
    h = Mix(h, HashStr(n.type));
    h = Mix(h, n.graph.value);
    for (const OutputRef& in : n.inputs) h = Mix(Mix(h, in.node.value), in.index);
    for (NodeId c : n.control_inputs) h = Mix(h, c.value + 0x1000000ULL);
    for (GraphId sg : n.subgraphs) h = Mix(h, sg.value + 0x2000000ULL);
  }
  return h;
}

uint64_t OrderFingerprint(const Model& model) {
  uint64_t h = model.num_graphs();
  for (const Graph& g : model.graphs()) {
    h = Mix(h, g.nodes.size());
    for (NodeId id : g.nodes) h = Mix(h, id.value);
  }
  return h;
}

absl::StatusOr<bool> PassPipeline::Run(Plan& plan, PassContext& ctx) {
  bool changed_any = false;
  for (const auto& pass : passes_) {
    const bool is_pipeline = dynamic_cast<const PassPipeline*>(pass.get()) != nullptr;
    if ((pass->required() & ~plan.established) != 0) {
      return absl::FailedPreconditionError(
          StrCat("pass '", pass->name(), "' requires stage(s) [", PropertyNames(pass->required() & ~plan.established),
                 "] that have not run"));
    }
    const bool verify = ctx.instrumentation.verify_each && !is_pipeline;
    uint64_t before = 0, order_before = 0;
    if (verify && pass->preserves_structure()) {
      before = StructuralFingerprint(plan.model);
      if (!pass->may_reorder()) order_before = OrderFingerprint(plan.model);
    }
    const StepTimer timer;
    auto changed = pass->Run(plan, ctx);
    if (!is_pipeline) timer.Record(ctx.stats, pass->name(), /*part=*/ctx.sub_passes);
    if (!changed.ok()) return AnnotateAfter(changed.status(), pass->name());
    plan.established |= pass->provided();
    changed_any |= *changed;
    if (is_pipeline) continue;
    ++ctx.sequence;
    const StepTimer verify_timer;
    if (verify) {
      if (pass->preserves_structure() && StructuralFingerprint(plan.model) != before) {
        return absl::InternalError(StrCat("verifier[frozen-graph]: pass '", pass->name(),
                                          "' changed the graph structure while it must be frozen (SPEC G5)"));
      }
      if (pass->preserves_structure() && !pass->may_reorder() && OrderFingerprint(plan.model) != order_before) {
        return absl::InternalError(StrCat("verifier[frozen-order]: pass '", pass->name(),
                                          "' changed a graph's execution order and does not declare may_reorder"));
      }
      // After a sub-pass the plan is inside its holder's stage
      // (plan.in_progress): the claims allow that stage's partial results.
      NPUPLAN_RETURN_IF_ERROR(AnnotateAfter(verify::VerifyPlan(plan), pass->name()));
      if (!ctx.sub_passes)
        verify_timer.Record(ctx.stats, "verify-each");  // else in the holder's time
    }
    if (ctx.instrumentation.after_pass) {
      NPUPLAN_RETURN_IF_ERROR(ctx.instrumentation.after_pass(ctx.sequence, pass->name(), plan));
    }
  }
  return changed_any;
}

std::string PassPipeline::Describe() const {
  std::string out;
  for (const auto& pass : passes_) {
    if (!out.empty()) out += ",";
    if (const PassPipeline* p = pass->nested()) {
      out += StrCat(pass->name(), "(", p->Describe(), ")");
    } else {
      out += std::string(pass->name());
    }
  }
  return out;
}

}  // namespace npuplan
