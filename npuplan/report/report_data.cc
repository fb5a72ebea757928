#include "npuplan/report/report_data.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <map>
#include <set>

#include "npuplan/sim/trace_views.h"
#include "npuplan/support/str_util.h"

namespace npuplan::report {
namespace {

using nlohmann::json;
using Kind = sim::ProgramItem::Kind;

int64_t Ns(double us) { return std::llround(us * 1000.0); }

// Name → index for a sorted set of names.
std::map<std::string, int64_t> IndexOf(const std::set<std::string>& names) {
  std::map<std::string, int64_t> out;
  for (const std::string& n : names) out.emplace(n, static_cast<int64_t>(out.size()));
  return out;
}

// Report node table: NodeIds in the order they are added (first come, first
// numbered).
class NodeTable {
 public:
  bool Has(NodeId n) const { return index_.count(n.value) > 0; }
  int64_t Add(NodeId n) {
    auto [it, fresh] = index_.emplace(n.value, static_cast<int64_t>(order_.size()));
    if (fresh) order_.push_back(n);
    return it->second;
  }
  int64_t operator[](NodeId n) const { return index_.at(n.value); }
  const std::vector<NodeId>& order() const { return order_; }

 private:
  std::map<int32_t, int64_t> index_;
  std::vector<NodeId> order_;
};

// Decodes UTF-8 into code points; an invalid byte becomes U+FFFD (as the
// JSON writer replaces it), so the script sees exactly these characters.
std::vector<char32_t> CodePoints(const std::string& s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    ok = ok && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
         !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000);
    out.push_back(ok ? cp : char32_t{0xFFFD});
    i += ok ? len : 1;
  }
  return out;
}

std::string Utf8(const std::vector<char32_t>& cps, size_t from) {
  std::string out;
  for (size_t i = from; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// Names in table order, each as [p, q, "middle"]: the first p and the last q
// UTF-16 code units (what JavaScript's slice counts) are the previous name's,
// the middle is new ("l12_ffn_up" after "l11_ffn_up": [1, 7, "2"]); and each
// node's kind: an index into "kinds", the distinct [engine, graph, type]
// triples (indices into "engines", "graphs", "types", each sorted by name).
void NodesJson(const Plan& plan, const NodeTable& table, json& out) {
  const Model& m = plan.model;
  std::set<std::string> engines, graphs, types;
  for (NodeId id : table.order()) {
    const Node& n = m.node(id);
    engines.insert(n.engine);
    graphs.insert(m.graph(n.graph).name);
    types.insert(n.type);
  }
  const auto ei = IndexOf(engines), gi = IndexOf(graphs), ti = IndexOf(types);
  std::set<std::tuple<int64_t, int64_t, int64_t>> kind_set;
  for (NodeId id : table.order()) {
    const Node& n = m.node(id);
    kind_set.emplace(ei.at(n.engine), gi.at(m.graph(n.graph).name), ti.at(n.type));
  }
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> kind_index;
  json kinds = json::array();
  for (const auto& k : kind_set) {
    kind_index.emplace(k, static_cast<int64_t>(kinds.size()));
    kinds.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k)});
  }
  json names = json::array(), kind = json::array();
  std::vector<char32_t> prev;
  auto units = [](char32_t c) { return c >= 0x10000 ? 2 : 1; };
  for (NodeId id : table.order()) {
    const Node& n = m.node(id);
    const std::vector<char32_t> cps = CodePoints(n.name);
    size_t k = 0, p = 0;
    while (k < prev.size() && k < cps.size() && prev[k] == cps[k]) p += units(cps[k++]);
    size_t e = 0, q = 0;
    while (e < prev.size() - k && e < cps.size() - k && prev[prev.size() - 1 - e] == cps[cps.size() - 1 - e]) {
      q += units(cps[cps.size() - 1 - e]);
      ++e;
    }
    names.push_back(p);
    names.push_back(q);
    names.push_back(Utf8(std::vector<char32_t>(cps.begin(), cps.end() - static_cast<std::ptrdiff_t>(e)), k));
    prev = cps;
    kind.push_back(kind_index.at({ei.at(n.engine), gi.at(m.graph(n.graph).name), ti.at(n.type)}));
  }
  out["names"] = std::move(names);
  out["kind"] = std::move(kind);
  out["kinds"] = std::move(kinds);
  out["engines"] = json(std::vector<std::string>(engines.begin(), engines.end()));
  out["graphs"] = json(std::vector<std::string>(graphs.begin(), graphs.end()));
  out["types"] = json(std::vector<std::string>(types.begin(), types.end()));
}

struct PoolBuffer {
  NodeId node;
  int32_t output = 0;
  int64_t offset = 0, size = 0, lower = 0, upper = 0, members = 0;
};

// Pool buffers (aliases sharing TensorPlacement::buffer drawn once).
std::vector<PoolBuffer> PoolBuffers(const Plan& plan) {
  std::map<std::string, PoolBuffer> by_name;
  for (const TensorPlacement& t : plan.memory.tensors) {
    if (!IsPoolRegion(t.region) || !t.node.valid() || t.node.index() >= plan.model.num_nodes()) {
      continue;
    }
    const std::string key = t.buffer.empty() ? StrCat(t.node.value, ":", t.output) : t.buffer;
    auto [it, fresh] = by_name.try_emplace(key);
    PoolBuffer& b = it->second;
    if (fresh) {
      b = {t.node, t.output, t.offset, t.size, t.first_use, t.last_use, 0};
    } else {
      b.size = std::max(b.size, t.size);
      b.lower = std::min(b.lower, t.first_use);
      b.upper = std::max(b.upper, t.last_use);
    }
    ++b.members;
  }
  std::vector<PoolBuffer> out;
  for (auto& [k, b] : by_name) out.push_back(b);
  std::sort(out.begin(), out.end(), [](const PoolBuffer& a, const PoolBuffer& b) {
    return std::tie(a.lower, a.offset, a.upper, a.node, a.output) < std::tie(b.lower, b.offset, b.upper, b.node, b.output);
  });
  return out;
}

json StreamsJson(const Plan& plan, const sim::SimResult& r) {
  const std::vector<sim::StreamInfo> info = sim::DescribeStreams(plan, r);
  json streams = json::array();
  for (size_t s = 0; s < r.streams.size(); ++s) {
    const sim::StreamInfo& i = info[s];
    streams.push_back({{"id", i.plan_stream}, {"name", i.name}, {"logical", i.logical}, {"piece", i.piece},
                       {"pieces", i.pieces}, {"attached", i.attached ? 1 : 0}, {"label", i.label},
                       {"tasks", r.streams[s].tasks}, {"busy", Ns(r.streams[s].busy_us)}});
  }
  return streams;
}

// Node numbers: a stream's plain tasks (main task, first run) number their
// nodes in order, stream after stream, so the task list need not name them;
// the other tasks ("ext") name theirs, then come the pool buffers' owners.
// in_ext marks the ext task items.
void NumberNodes(const sim::SimResult& r, bool per_item, const std::vector<PoolBuffer>* drawn,
                 NodeTable& nodes, std::vector<char>& in_ext) {
  if (per_item) {
    for (size_t g = 0; g < r.items.size(); ++g) {
      const sim::SimItem& it = r.items[g];
      if (it.kind != Kind::kTask) continue;
      if (it.attached >= 0 || it.run > 0 || nodes.Has(it.node)) {
        in_ext[g] = 1;
      } else {
        nodes.Add(it.node);
      }
    }
    for (size_t g = 0; g < r.items.size(); ++g) {
      if (in_ext[g]) nodes.Add(r.items[g].node);
    }
  }
  if (drawn != nullptr) {
    for (const PoolBuffer& b : *drawn) nodes.Add(b.node);
  }
}

// Tasks, blocking waits and records per stream, delta-coded; returns the
// task index of every task item within its stream, for crit and ext.
std::vector<int64_t> TimelineJson(const sim::SimResult& r, const NodeTable& nodes,
                                  const std::vector<char>& in_ext, json& d) {
  const size_t ns = r.streams.size();
  std::vector<int64_t> task_index(r.items.size(), -1);
  json tasks = json::array(), waits = json::array(), records = json::array(), ext = json::array();
  std::vector<int64_t> count(ns, 0);
  for (size_t s = 0; s < ns; ++s) {
    tasks.push_back(json::array());
    waits.push_back(json::array());
    records.push_back(json::array());
  }
  std::vector<int64_t> task_end(ns, 0), wait_end(ns, 0), record_start(ns, 0);
  for (size_t g = 0; g < r.items.size(); ++g) {
    const sim::SimItem& it = r.items[g];
    const size_t s = static_cast<size_t>(it.stream);
    const int64_t start = Ns(it.start), end = Ns(it.end);
    switch (it.kind) {
      case Kind::kTask:
        task_index[g] = count[s]++;
        tasks[s].push_back(start - task_end[s]);
        tasks[s].push_back(end - start);
        task_end[s] = end;
        if (in_ext[g]) ext.push_back({s, task_index[g], nodes[it.node], it.attached, it.run});
        break;
      case Kind::kRecord:
        records[s].push_back(start - record_start[s]);
        record_start[s] = start;
        break;
      case Kind::kWait:
        if (it.end > it.ready) {
          const int64_t ready = Ns(it.ready);
          waits[s].push_back(ready - wait_end[s]);
          waits[s].push_back(end - ready);
          wait_end[s] = end;
        }
        break;
    }
  }
  d["tasks"] = std::move(tasks);
  d["waits"] = std::move(waits);
  d["records"] = std::move(records);
  d["ext"] = std::move(ext);
  return task_index;
}

// Arrows, by record end.
json ArrowsJson(const sim::SimResult& r, const NodeTable& nodes) {
  struct Arrow {
    int64_t from, to;
    int32_t from_stream, to_stream, kind;
    int64_t id;
  };
  std::vector<Arrow> arrows;
  for (const sim::SimItem& it : r.items) {
    if (it.kind != Kind::kWait || it.bound < 0) continue;
    const sim::SimItem& rec = r.items[it.bound];
    const sim::SyncObject& so = r.program.syncs[it.sync];
    const int32_t kind = so.kind == sim::SyncObject::Kind::kEvent    ? 0
                         : so.kind == sim::SyncObject::Kind::kNotify ? 1
                                                                     : 2;
    int64_t id = so.id;
    if (kind == 2) {
      const NodeId activator(static_cast<int32_t>(so.id));
      id = nodes.Has(activator) ? nodes[activator] : -1;
    }
    arrows.push_back({Ns(rec.end), Ns(it.end), rec.stream, it.stream, kind, id});
  }
  std::stable_sort(arrows.begin(), arrows.end(),
                   [](const Arrow& a, const Arrow& b) { return a.from < b.from; });
  json a = json::array();
  int64_t prev = 0;
  for (const Arrow& x : arrows) {
    for (int64_t v : {int64_t{x.from_stream}, x.from - prev, int64_t{x.to_stream},
                      std::max<int64_t>(0, x.to - x.from), int64_t{x.kind}, x.id}) {
      a.push_back(v);
    }
    prev = x.from;
  }
  return a;
}

// Critical path: the main task of each (node, run) on it.
json CritJson(const sim::SimResult& r, const std::vector<int64_t>& task_index) {
  const size_t ns = r.streams.size();
  std::map<std::pair<int32_t, int32_t>, size_t> item_of;  // (node, run) → main task item
  for (size_t g = 0; g < r.items.size(); ++g) {
    const sim::SimItem& it = r.items[g];
    if (it.kind == Kind::kTask && it.attached < 0)
      item_of.emplace(std::pair(it.node.value, it.run), g);
  }
  std::vector<std::set<int64_t>> on_path(ns);
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const int32_t run = i < r.critical_path_runs.size() ? r.critical_path_runs[i] : 0;
    auto it = item_of.find({r.critical_path[i].value, run});
    if (it == item_of.end()) continue;
    on_path[r.items[it->second].stream].insert(task_index[it->second]);
  }
  json crit = json::array();  // per stream: task indices, delta-coded
  for (size_t st = 0; st < ns; ++st) {
    json list = json::array();
    int64_t prev_task = 0;
    for (int64_t t : on_path[st]) {
      list.push_back(t - prev_task);
      prev_task = t;
    }
    crit.push_back(std::move(list));
  }
  return crit;
}

// Too many items to draw one by one: per stream, busy percent in buckets of time.
json BucketsJson(const sim::SimResult& r) {
  const size_t ns = r.streams.size();
  constexpr size_t kBuckets = 2000;
  const double span = r.makespan > 0 ? r.makespan : 1.0;
  std::vector<std::vector<double>> busy(ns, std::vector<double>(kBuckets, 0.0));
  const double width = span / kBuckets;
  for (const sim::SimItem& it : r.items) {
    if (it.kind == Kind::kWait || it.end <= it.start) continue;
    const size_t first = std::min(kBuckets - 1, static_cast<size_t>(it.start / width));
    const size_t last = std::min(kBuckets - 1, static_cast<size_t>(it.end / width));
    for (size_t b = first; b <= last; ++b) {
      busy[it.stream][b] +=
          std::max(0.0, std::min(it.end, (b + 1) * width) - std::max(it.start, b * width));
    }
  }
  json buckets = json::array();
  for (size_t s = 0; s < ns; ++s) {
    json row = json::array();
    for (size_t b = 0; b < kBuckets; ++b)
      row.push_back(std::lround(std::min(100.0, 100.0 * busy[s][b] / width)));
    buckets.push_back(std::move(row));
  }
  return buckets;
}

// Memory in use over simulated time.
void MemoryInUseJson(const Plan& plan, const sim::SimResult& r, json& d) {
  const sim::MemoryInUse use = sim::PoolMemoryInUse(plan, r);
  const int64_t align = std::max<int64_t>(1, plan.memory.alignment);
  if (use.steps.empty()) return;
  constexpr size_t kMaxSteps = 2000;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (ns, bytes)
  if (use.steps.size() <= kMaxSteps) {
    for (const auto& [t, b] : use.steps) steps.emplace_back(Ns(t), b);
  } else {
    const double width = (r.makespan > 0 ? r.makespan : 1.0) / kMaxSteps;
    int64_t bucket = -1;
    for (const auto& [t, b] : use.steps) {
      const int64_t k = static_cast<int64_t>(t / width);
      if (k != bucket) {
        steps.emplace_back(Ns(k * width), b);
        bucket = k;
      } else {
        steps.back().second = std::max(steps.back().second, b);
      }
    }
  }
  json flat = json::array();
  int64_t prev = 0;
  for (const auto& [t, b] : steps) {
    flat.push_back(t - prev);
    flat.push_back((b + align - 1) / align);
    prev = t;
  }
  d["memt"] = {{"unit", align}, {"steps", std::move(flat)}, {"max", use.max_bytes}};
}

// The pool's buffers drawn one by one, in units of `unit`.
void PoolBuffersJson(const std::vector<PoolBuffer>& buffers, int64_t unit, const NodeTable& nodes,
                     json& pool) {
  json flat = json::array(), other = json::array();
  int64_t prev = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PoolBuffer& b = buffers[i];
    for (int64_t v :
         {b.lower - prev, b.upper - b.lower, b.offset / unit, b.size / unit, nodes[b.node]}) {
      flat.push_back(v);
    }
    if (b.output != 0 || b.members != 1) other.push_back({i, b.output, b.members});
    prev = b.lower;
  }
  pool["b"] = std::move(flat);
  pool["bx"] = std::move(other);
}

// Too many to draw one by one: the live-bytes curve only, as change points.
json PoolLiveJson(const std::vector<PoolBuffer>& buffers, int64_t unit) {
  std::map<int64_t, int64_t> delta;
  for (const PoolBuffer& b : buffers) {
    if (b.upper <= b.lower || b.size <= 0) continue;
    delta[b.lower] += b.size;
    delta[b.upper] -= b.size;
  }
  json flat = json::array();
  int64_t live = 0, prev = 0;
  for (const auto& [x, dv] : delta) {
    live += dv;
    flat.push_back(x - prev);
    flat.push_back(live / unit);
    prev = x;
  }
  return flat;
}

json PoolJson(const MemoryResult& mem, const std::vector<PoolBuffer>& buffers, bool draw_buffers,
              const NodeTable& nodes) {
  int64_t unit = 0;  // the largest unit every offset and size is a multiple of
  for (const PoolBuffer& b : buffers) unit = std::gcd(std::gcd(unit, b.offset), b.size);
  if (unit <= 0) unit = 1;
  json pool = {{"unit", unit},
               {"peak", mem.peak},
               {"lower", mem.lower_bound},
               {"optimal", mem.optimal},
               {"buffers", buffers.size()},
               {"dynamic", mem.dynamic_tensors.size()}};
  int64_t x0 = -1, x1 = 0;
  for (const PoolBuffer& b : buffers) {
    if (b.upper <= b.lower || b.size <= 0) continue;
    x0 = x0 < 0 ? b.lower : std::min(x0, b.lower);
    x1 = std::max(x1, b.upper);
  }
  pool["x0"] = std::max<int64_t>(x0, 0);
  pool["x1"] = x1;
  int64_t constants = 0, inputs = 0;
  if (auto it = mem.region_bytes.find("constant"); it != mem.region_bytes.end())
    constants = it->second;
  if (auto it = mem.region_bytes.find("input"); it != mem.region_bytes.end()) inputs = it->second;
  pool["constant"] = constants;
  pool["input"] = inputs;
  if (draw_buffers) {
    PoolBuffersJson(buffers, unit, nodes, pool);
  } else {
    pool["live"] = PoolLiveJson(buffers, unit);
  }
  return pool;
}

}  // namespace

json PlanReportData(const Plan& plan, const sim::SimResult& r, const ReportDataOptions& options) {
  const Model& m = plan.model;
  json d = {
      {"v", 1}, {"graph", m.name()}, {"makespan", Ns(r.makespan)}, {"critUs", r.critical_path_us}};
  d["streams"] = StreamsJson(plan, r);

  size_t num_items = 0;  // tasks, records and blocking waits
  for (const sim::SimItem& it : r.items) num_items += it.kind != Kind::kWait || it.end > it.ready;
  const bool per_item = num_items <= options.max_timeline_items;
  const std::vector<PoolBuffer> buffers =
      plan.memory.planned ? PoolBuffers(plan) : std::vector<PoolBuffer>{};
  const bool draw_buffers = buffers.size() <= options.max_memory_buffers;

  NodeTable nodes;
  std::vector<char> in_ext(r.items.size(), 0);
  NumberNodes(r, per_item, draw_buffers ? &buffers : nullptr, nodes, in_ext);
  NodesJson(plan, nodes, d);

  if (per_item) {
    const std::vector<int64_t> task_index = TimelineJson(r, nodes, in_ext, d);
    d["arrows"] = ArrowsJson(r, nodes);
    d["crit"] = CritJson(r, task_index);
  } else {
    d["buckets"] = BucketsJson(r);
    d["items"] = num_items;
    d["maxItems"] = options.max_timeline_items;
  }
  MemoryInUseJson(plan, r, d);
  if (plan.memory.planned) d["pool"] = PoolJson(plan.memory, buffers, draw_buffers, nodes);
  return d;
}

std::string ScriptSafeJson(const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 50);
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace npuplan::report
