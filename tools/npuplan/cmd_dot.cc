// `npuplan dot FILE -o OUT.dot`: Graphviz view of a graph or plan. Streams are
// fill colours, subgraphs are clusters, events are dashed red edges.
#include <cstdio>
#include <memory>

#include "npuplan/plan/plan_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"

namespace npuplan::cli {
namespace {

constexpr const char* kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                    "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ToDot(const Plan& plan) {
  const Model& m = plan.model;
  std::string out = StrCat("digraph ", Quote(m.name()), " {\n  rankdir=TB;\n  node [shape=box, style=filled, fontsize=10];\n");
  auto stream_of = [&](NodeId id) {
    int64_t p = id.index() < plan.physical_stream.size() ? plan.physical_stream[id.index()] : -1;
    return p >= 0 ? p : m.node(id).stream_id;
  };
  for (GraphId g : m.GraphsPreOrder()) {
    const Graph& graph = m.graph(g);
    std::string indent = "  ";
    if (g != kRootGraph) {
      out += StrCat("  subgraph ", Quote("cluster_" + graph.name), " {\n    label=", Quote(graph.name + " (in " +
                    m.node(graph.parent_node).name + ")"), ";\n");
      indent = "    ";
    }
    for (NodeId id : graph.nodes) {
      const Node& n = m.node(id);
      int64_t s = stream_of(id);
      std::string color = s >= 0 ? kPalette[s % (sizeof(kPalette) / sizeof(kPalette[0]))] : "#ffffff";
      std::string label = StrCat(n.name, "\\n", n.type, s >= 0 ? StrCat(" s", s) : std::string());
      out += StrCat(indent, Quote(n.name), " [label=", Quote(label), ", fillcolor=", Quote(color), "];\n");
    }
    if (g != kRootGraph) out += "  }\n";
  }
  for (const Node& n : m.nodes()) {
    for (const OutputRef& in : n.inputs) {
      out += StrCat("  ", Quote(m.node(in.node).name), " -> ", Quote(n.name), ";\n");
    }
    for (NodeId c : n.control_inputs) {
      out += StrCat("  ", Quote(m.node(c).name), " -> ", Quote(n.name), " [style=dotted];\n");
    }
  }
  for (const SyncEvent& e : plan.events.events) {
    out += StrCat("  ", Quote(m.node(e.send).name), " -> ", Quote(m.node(e.recv).name),
                  " [style=dashed, color=red, label=", Quote(StrCat(e.kind == SyncKind::kNotify ? "n" : "e", e.id)), "];\n");
  }
  return out + "}\n";
}

struct DotFlags {
  std::string input, output;
  LoadOptions load;
};

int RunDot(const DotFlags& f) {
  auto in = LoadInput(f.input, f.load);
  if (!in.ok()) return ReportStatus(in.status());
  if (in->is_plan) {  // drawn only if it does not lie about itself (its stage checks are verify's)
    if (auto s = CheckPlanClaims(in->plan, f.input); !s.ok()) return ReportStatus(s);
  }
  return ReportStatus(WriteFileAtomically(f.output, ToDot(in->plan)));
}

void SetupDot(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<DotFlags>();
  CLI::App* cmd = app.add_subcommand("dot", "Write a Graphviz view of a graph or plan (streams as colours)");
  cmd->add_option("file", flags->input, "Graph or plan file")->required();
  cmd->add_option("-o,--output", flags->output, "Output .dot file (- for standard output)")
      ->required();
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  AddReadLimitFlags(cmd, &flags->load);
  AddInputShapeFlag(cmd, &flags->load);
  cmd->callback([flags, &inv] { inv.exit_code = RunDot(*flags); });
}

NPUPLAN_REGISTER_COMMAND("dot", SetupDot);

}  // namespace
}  // namespace npuplan::cli
