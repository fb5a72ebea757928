// Test helpers for the partition module: a tiny graph builder and a runner
// that parses, marks, partitions (verify-each) and verifies the result.
#ifndef NPUPLAN_PARTITION_PARTITION_TEST_UTIL_H_
#define NPUPLAN_PARTITION_PARTITION_TEST_UTIL_H_

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/partition/dynamic_shape_partition.h"
#include "npuplan/partition/mark_unknown_shape_nodes.h"
#include "npuplan/pass/pass.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/verify/verify.h"

namespace npuplan::partition::testing {

// Builds an npuplan.graph/1 document node by node. Shapes default to [4]
// (static); pass {-1} for a dynamic output.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "g") {
    j_["format"] = "npuplan.graph/1";
    j_["name"] = std::move(name);
    j_["nodes"] = nlohmann::json::array();
  }
  GraphBuilder& Node(const std::string& name, const std::string& type, std::vector<std::string> inputs = {},
                     std::vector<int64_t> shape = {4}, nlohmann::json attrs = nlohmann::json::object(),
                     std::vector<std::string> control = {}) {
    nlohmann::json n = {{"name", name}, {"type", type}};
    if (!inputs.empty()) n["inputs"] = inputs;
    if (!control.empty()) n["control_inputs"] = control;
    if (type != "NetOutput") n["outputs"] = nlohmann::json::array({{{"shape", shape}, {"dtype", "float32"}}});
    if (!attrs.empty()) n["attrs"] = attrs;
    Target().push_back(std::move(n));
    return *this;
  }
  GraphBuilder& Data(const std::string& name, std::vector<int64_t> shape = {4}) { return Node(name, "Data", {}, shape); }
  GraphBuilder& Const(const std::string& name) { return Node(name, "Const"); }
  GraphBuilder& Op(const std::string& name, std::vector<std::string> inputs, std::vector<int64_t> shape = {4}) {
    return Node(name, "Add", std::move(inputs), shape);
  }
  GraphBuilder& Dyn(const std::string& name, std::vector<std::string> inputs) {
    return Node(name, "Add", std::move(inputs), {-1});
  }
  // An unknown node with a static output (forced), so its consumers stay static.
  GraphBuilder& Unk(const std::string& name, std::vector<std::string> inputs) {
    return Node(name, "Add", std::move(inputs), {4}, {{"_force_unknown_shape", true}});
  }
  GraphBuilder& Output(std::vector<std::string> inputs) { return Node("out", "NetOutput", std::move(inputs)); }
  GraphBuilder& Option(const std::string& k, const std::string& v) {
    j_["options"][k] = v;
    return *this;
  }
  GraphBuilder& GraphAttr(const std::string& k, nlohmann::json v) {
    j_["attrs"][k] = std::move(v);
    return *this;
  }
  // Following Node() calls go into subgraph `name` owned by `parent` (which
  // must list it in its "subgraphs" attribute via Owns()).
  GraphBuilder& Subgraph(const std::string& name, const std::string& parent) {
    j_["subgraphs"].push_back({{"name", name}, {"parent", parent}, {"nodes", nlohmann::json::array()}});
    in_subgraph_ = true;
    return *this;
  }
  GraphBuilder& Owns(const std::string& node, const std::string& subgraph) {
    for (auto& n : j_["nodes"]) {
      if (n["name"] == node) n["subgraphs"].push_back(subgraph);
    }
    if (j_.contains("subgraphs")) {
      for (auto& sg : j_["subgraphs"]) {
        for (auto& n : sg["nodes"]) {
          if (n["name"] == node) n["subgraphs"].push_back(subgraph);
        }
      }
    }
    return *this;
  }
  GraphBuilder& Root() {
    in_subgraph_ = false;
    return *this;
  }
  std::string Json() const { return j_.dump(); }

 private:
  nlohmann::json& Target() { return in_subgraph_ ? j_["subgraphs"].back()["nodes"] : j_["nodes"]; }
  nlohmann::json j_;
  bool in_subgraph_ = false;
};

struct PartitionRun {
  Plan plan;
  DecisionLog log{/*keep=*/true};
  Statistics stats;
  // Remark lines joined by '\n'.
  std::string LogText() const {
    std::string s;
    for (const Remark& r : log.remarks()) s += r.ToLine() + "\n";
    return s;
  }
  // Where node `name` ended: "root", or the kind of its partition subgraph.
  std::string KindOf(std::string_view name) const {
    const Model& m = plan.model;
    NodeId id = m.FindNode(name);
    if (!id.valid()) return "missing";
    GraphId g = m.node(id).graph;
    if (g == kRootGraph) return "root";
    for (const PartitionSubgraph& sg : plan.partition.subgraphs) {
      if (sg.name == m.graph(g).name) return sg.kind;
    }
    return "nested:" + m.graph(g).name;
  }
  // Name of the graph holding `name`.
  std::string GraphOf(std::string_view name) const {
    return plan.model.graph(plan.model.node(plan.model.FindNode(name)).graph).name;
  }
};

inline absl::StatusOr<std::unique_ptr<PartitionRun>> RunPartition(
    std::string_view json, const std::map<std::string, std::string>& overrides = {}) {
  NPUPLAN_ASSIGN_OR_RETURN(Model model, ParseGraphJson(json, "<test>"));
  NPUPLAN_RETURN_IF_ERROR(VerifyStructure(model));
  auto run = std::make_unique<PartitionRun>();
  CompileOptions options = CompileOptions::FromModel(model, overrides, /*read_environment=*/false);
  NPUPLAN_RETURN_IF_ERROR(options.Validate());
  run->plan.model = std::move(model);
  run->plan.established = static_cast<IrProperties>(IrProperty::kTopoSorted);
  PassPipeline pipeline("partition");
  pipeline.AddPass<MarkUnknownShapeNodes>();
  pipeline.AddPass<DynamicShapePartition>();
  PassContext ctx{options, run->log, run->stats};
  ctx.instrumentation.verify_each = true;
  NPUPLAN_RETURN_IF_ERROR(pipeline.Run(run->plan, ctx).status());
  NPUPLAN_RETURN_IF_ERROR(verify::VerifyPlan(run->plan));
  return run;
}

}  // namespace npuplan::partition::testing

#endif  // NPUPLAN_PARTITION_PARTITION_TEST_UTIL_H_
