// `npuplan summary PLAN [--json] [--nodes]`: the stream allocation summary
// (SPEC S9). Text: one table row per logical stream (stream, engines, nodes,
// device tasks, events in/out, user label), a row per physical piece of a
// stream the split cut, a row per attached stream; node names only with
// --nodes; then the device resources against the budgets (issue 23). --json
// is GE's summary (its keys unchanged: scripts read it) plus "resources".
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "npuplan/events/resource_use.h"
#include "npuplan/plan/task_model.h"
#include "npuplan/sim/plan_program.h"
#include "npuplan/stream/stream_summary.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/option_flags.h"
#include "tools/npuplan/plan_input.h"

namespace npuplan::cli {
namespace {

struct SummaryFlags {
  LoadOptions load;  // reader limits
  std::string plan;
  bool json = false;
  bool nodes = false;
  std::vector<std::string> options;
};

// One row of the table.
struct Row {
  std::string stream;
  std::map<std::string, int64_t> engines;  // engine → nodes
  int64_t nodes = 0, tasks = 0, events_in = 0, events_out = 0;
  std::string label;
};

std::string EngineCell(const std::map<std::string, int64_t>& engines) {
  if (engines.empty()) return "-";
  auto top = std::max_element(engines.begin(), engines.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string cell = top->first.empty() ? "(none)" : EchoName(top->first);
  if (engines.size() > 1) cell += StrCat(" +", engines.size() - 1);
  return cell;
}

std::string StreamTable(const Plan& plan, const StreamAllocationSummary& s) {
  const Model& m = plan.model;
  const StreamResult& sr = plan.streams;
  auto logical_of = [&](int64_t physical) -> int64_t {
    if (auto it = sr.split_to_logical.find(physical); it != sr.split_to_logical.end()) return it->second;
    return physical;
  };
  // Rows keyed by (logical, physical); physical == -1 is the logical stream's own row.
  std::map<std::pair<int64_t, int64_t>, Row> rows;
  std::map<int64_t, Row> attached;
  std::map<int64_t, int64_t> attached_owner;  // attached id → logical stream listing it
  for (const LogicalStream& ls : sr.streams) {
    for (int64_t a : ls.attached_ids) attached_owner.emplace(a, ls.id);
  }
  std::map<int64_t, std::set<int64_t>> pieces;  // logical → physical ids
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const NodeId id(static_cast<int32_t>(i));
    const Node& n = m.node(id);
    if (n.stream_id >= 0) {
      const int64_t physical = sim::MainStreamOf(plan, id);
      pieces[n.stream_id].insert(physical);
      const int64_t tasks = i < plan.tasks.size() ? plan.tasks[i] : NodeTasks(n, m.engine_table);
      for (int64_t phys : {int64_t{-1}, physical}) {
        Row& r = rows[{n.stream_id, phys}];
        ++r.engines[n.engine];
        ++r.nodes;
        r.tasks = CheckedAdd(r.tasks, tasks).value_or(INT64_MAX);  // plan values: saturates
      }
    }
    for (int64_t a : n.attached_stream_ids) {
      Row& r = attached[a];
      ++r.engines[n.engine];
      ++r.nodes;
      r.tasks = CheckedAdd(r.tasks, AttachedNodeTasks(n)).value_or(INT64_MAX);
    }
  }
  for (const SyncEvent& e : plan.events.events) {
    if (!e.send.valid() || !e.recv.valid() || e.send.index() >= m.num_nodes() || e.recv.index() >= m.num_nodes()) {
      continue;
    }
    auto count = [&](NodeId node, int32_t a, bool in) {
      const Node& n = m.node(node);
      if (a >= 0 && static_cast<size_t>(a) < n.attached_stream_ids.size()) {
        Row& r = attached[n.attached_stream_ids[a]];
        ++(in ? r.events_in : r.events_out);
        return;
      }
      if (n.stream_id < 0) return;
      const int64_t physical = sim::MainStreamOf(plan, node);
      for (int64_t phys : {int64_t{-1}, physical}) {
        Row& r = rows[{n.stream_id, phys}];
        ++(in ? r.events_in : r.events_out);
      }
    };
    count(e.send, e.send_attached, false);
    count(e.recv, e.recv_attached, true);
  }
  std::vector<std::vector<std::string>> table = {{"stream", "engine", "nodes", "tasks", "events in", "events out", "label"}};
  auto add = [&](std::string name, const Row& r, const std::string& label) {
    table.push_back({std::move(name), EngineCell(r.engines), StrCat(r.nodes), StrCat(r.tasks), StrCat(r.events_in),
                     StrCat(r.events_out), label});
  };
  for (const LogicalStreamInfo& info : s.logical_streams) {
    const Row& r = rows[{info.id, -1}];
    add(StrCat(info.id), r, EchoName(info.user_stream_label));
    const auto& phys = pieces[info.id];
    if (phys.size() <= 1 && (phys.empty() || logical_of(*phys.begin()) == info.id)) continue;
    size_t k = 0;
    for (int64_t p : phys) {
      add(StrCat("  ", p, " (piece ", ++k, "/", phys.size(), ")"), rows[{info.id, p}], "");
    }
  }
  for (const auto& [a, r] : attached) {
    auto owner = attached_owner.find(a);
    add(owner != attached_owner.end() ? StrCat(a, " (attached to ", owner->second, ")") : StrCat(a, " (attached)"), r,
        "");
  }
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& row : table) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : table) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool number = c >= 2 && c <= 5;
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? "" : "  ";
      line += number ? pad + row[c] : (c + 1 == row.size() ? row[c] : row[c] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string SummaryText(const Plan& plan, const StreamAllocationSummary& s, bool nodes) {
  int64_t physical = 0;
  for (int64_t p : s.physical_stream_nums) physical += p;
  std::string out =
      StrCat("logical streams: ", s.logical_streams.size(), " (mode ",
             s.mode.empty() ? "?" : EchoName(s.mode), "), physical streams: ", physical,
             ", attached streams: ", s.attached_stream_ids.size(),
             ", assigned by stream pass: ", s.assigned_by_stream_pass ? "yes" : "no", "\n");
  out += StreamTable(plan, s);
  if (!nodes) return out + "(node names per stream: --nodes)\n";
  for (const LogicalStreamInfo& i : s.logical_streams) {
    out += StrCat("stream ", i.id, ": ", i.nodes.size(), " nodes\n");
    for (const std::string& n : i.nodes) out += StrCat("  ", EchoName(n), "\n");
  }
  return out;
}

int RunSummary(const SummaryFlags& f) {
  auto plan = LoadPlan(f.plan, f.load);
  if (!plan.ok()) return ReportStatus(plan.status());
  auto summary = GetStreamAllocationSummary(*plan);
  if (!summary.ok()) {
    return ReportStatus(absl::Status(
        summary.status().code(), StrCat(f.plan, ": ", std::string(summary.status().message()))));
  }
  // Device resources against the budgets (--option npuplan.maxStreams=N …; default the device
  // limits).
  CompileOptions budgets;
  for (const auto& [k, v] : OptionOverrides(f.options)) budgets.Set(k, v);
  if (absl::Status s = budgets.Validate(); !s.ok()) return ReportStatus(s);
  const events::ResourceUse use = events::PlanResourceUse(*plan, budgets);
  std::string text;
  if (f.json) {
    // GE's summary keys unchanged; the resources are one more key.
    nlohmann::json j = nlohmann::json::parse(StreamSummaryToJson(*summary));
    j["resources"] = nlohmann::json::parse(events::ResourceUseJson(use));
    text = j.dump(1) + "\n";
  } else {
    text = SummaryText(*plan, *summary, f.nodes) + events::ResourceUseText(use);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

void SetupSummary(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<SummaryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "Print the stream allocation summary of a plan (a table per stream) and its device resources "
      "against the budgets");
  cmd->add_option("plan", flags->plan, "Plan file (npuplan.plan/1)")->required();
  AddReadLimitFlags(cmd, &flags->load);
  cmd->add_flag("--json", flags->json,
                "Print GE's summary as JSON (plus \"resources\") instead of the table");
  cmd->add_flag("--nodes", flags->nodes, "Also list the nodes of every logical stream, one per line");
  AddOptionFlag(cmd, &flags->options);  // budgets to show the resources against
  cmd->callback([flags, &inv] { inv.exit_code = RunSummary(*flags); });
}

NPUPLAN_REGISTER_COMMAND("summary", SetupSummary);

}  // namespace
}  // namespace npuplan::cli
