#include "npuplan/kernel/kernel_graph.h"

#include <algorithm>
#include <queue>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/json_fields.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/text_checks.h"

namespace npuplan::kernel {

int CacheConfig::Find(std::string_view name) const {
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// 2 * Size (+ fixed): sizes are at most kMaxKernelValue when read, but a graph
// built in code is not read: saturated, so that the evaluator's checked sums
// report the overflow.
static int64_t TwiceSizePlus(int64_t size, int64_t fixed) {
  return CheckedAdd(CheckedMul(size, 2).value_or(INT64_MAX), fixed).value_or(INT64_MAX);
}

int64_t KernelGraph::SpillTraffic(int buf_id) const {
  const KernelBuffer& b = buffer(buf_id);
  return b.copy_in_backed ? b.size : TwiceSizePlus(b.size, 0);
}

int64_t KernelGraph::SpillOutCycles(int buf_id, const CacheConfig& config) const {
  const KernelBuffer& b = buffer(buf_id);
  return b.copy_in_backed ? 0 : TwiceSizePlus(b.size, config.spill_fixed_cycles);
}

int64_t KernelGraph::SpillInCycles(int buf_id, const CacheConfig& config) const {
  return TwiceSizePlus(buffer(buf_id).size, config.spill_fixed_cycles);
}

namespace {

using json = nlohmann::json;

absl::Status Bad(std::string_view source, std::string_view path, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": ", std::string(path), ": ", std::string(msg)));
}

}  // namespace

absl::Status FinalizeKernelGraph(KernelGraph& g, const CacheConfig& config,
                                 std::string_view source) {
  const int n = g.num_nodes();
  for (int i = 0; i < n; ++i) {
    if (g.nodes[i].id != i) {
      return Bad(source, absl::StrCat("Nodes[", i, "]"),
                 absl::StrCat("node Ids must be 0..N-1 in order (rule=dense-ids); found Id ",
                              g.nodes[i].id));
    }
  }
  // Buffers from ALLOC/FREE nodes.
  int max_buf = -1;
  for (const KernelNode& v : g.nodes) {
    if (v.kind != NodeKind::kOp) {
      if (v.buf_id < 0) return Bad(source, absl::StrCat("Nodes[", v.id, "].BufId"), "negative BufId");
      if (v.buf_id >= n) {  // buf_index is sized by the largest BufId
        return Bad(source, absl::StrCat("Nodes[", v.id, "].BufId"),
                   absl::StrCat("BufId ", v.buf_id, " is not below the node count ", n));
      }
      max_buf = std::max(max_buf, v.buf_id);
    }
  }
  g.buf_index.assign(max_buf + 1, -1);
  g.buffers.clear();
  for (const KernelNode& v : g.nodes) {
    if (v.kind == NodeKind::kOp) continue;
    const std::string path = absl::StrCat("Nodes[", v.id, "]");
    int level = config.Find(v.type);
    if (level < 0) return Bad(source, path + ".Type", absl::StrCat("unknown cache type \"", v.type, "\""));
    if (v.size <= 0) return Bad(source, path + ".Size", "buffer size must be positive");
    int& idx = g.buf_index[v.buf_id];
    if (idx < 0) {
      idx = static_cast<int>(g.buffers.size());
      KernelBuffer b;
      b.buf_id = v.buf_id;
      b.level = level;
      b.size = v.size;
      g.buffers.push_back(b);
    }
    KernelBuffer& b = g.buffers[idx];
    if (b.level != level || b.size != v.size) {
      return Bad(source, path,
                 absl::StrCat("ALLOC/FREE of buffer ", v.buf_id, " disagree on Size/Type (rule=alloc-free-pairing)"));
    }
    int& slot = v.kind == NodeKind::kAlloc ? b.alloc_node : b.free_node;
    if (slot >= 0) {
      return Bad(source, path,
                 absl::StrCat("buffer ", v.buf_id, " has two ", v.op, " nodes (", slot, " and ", v.id,
                              ") (rule=alloc-free-pairing)"));
    }
    slot = v.id;
  }
  // Keep buffers sorted by buf_id for determinism.
  std::sort(g.buffers.begin(), g.buffers.end(),
            [](const KernelBuffer& a, const KernelBuffer& b) { return a.buf_id < b.buf_id; });
  for (size_t i = 0; i < g.buffers.size(); ++i) g.buf_index[g.buffers[i].buf_id] = static_cast<int>(i);
  for (const KernelBuffer& b : g.buffers) {
    if (b.alloc_node < 0 || b.free_node < 0) {
      return Bad(source, absl::StrCat("buffer ", b.buf_id),
                 absl::StrCat("has no ", b.alloc_node < 0 ? "ALLOC" : "FREE", " node (rule=alloc-free-pairing)"));
    }
  }
  for (const KernelNode& v : g.nodes) {
    if (v.kind != NodeKind::kOp) continue;
    for (int b : v.bufs) {
      if (!g.HasBuffer(b)) {
        return Bad(source, absl::StrCat("Nodes[", v.id, "].Bufs"),
                   absl::StrCat("buffer ", b, " has no ALLOC/FREE (rule=undeclared-buffer)"));
      }
      KernelBuffer& kb = g.buffers[g.buf_index[b]];
      if (kb.users.empty() || kb.users.back() != v.id) kb.users.push_back(v.id);
      if (v.op == "COPY_IN") kb.copy_in_backed = true;
    }
  }
  // Edges.
  g.succ.assign(n, {});
  g.pred.assign(n, {});
  for (size_t e = 0; e < g.edges.size(); ++e) {
    auto [a, b] = g.edges[e];
    if (a < 0 || a >= n || b < 0 || b >= n) {
      return Bad(source, absl::StrCat("Edges[", e, "]"), absl::StrCat("names a missing node [", a, ", ", b, "]"));
    }
    if (a == b) return Bad(source, absl::StrCat("Edges[", e, "]"), "self loop (rule=dag)");
    g.succ[a].push_back(b);
    g.pred[b].push_back(a);
  }
  for (int v = 0; v < n; ++v) {
    std::sort(g.succ[v].begin(), g.succ[v].end());
    g.succ[v].erase(std::unique(g.succ[v].begin(), g.succ[v].end()), g.succ[v].end());
    std::sort(g.pred[v].begin(), g.pred[v].end());
    g.pred[v].erase(std::unique(g.pred[v].begin(), g.pred[v].end()), g.pred[v].end());
  }
  // DAG check (Kahn).
  std::vector<int> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.pred[v].size());
  std::vector<int> stack;
  for (int v = 0; v < n; ++v) if (indeg[v] == 0) stack.push_back(v);
  int seen = 0;
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    ++seen;
    for (int s : g.succ[v]) if (--indeg[s] == 0) stack.push_back(s);
  }
  if (seen != n) {
    for (int v = 0; v < n; ++v) {
      if (indeg[v] > 0) return Bad(source, absl::StrCat("Nodes[", v, "]"), "lies on a cycle (rule=dag)");
    }
  }
  for (const KernelNode& v : g.nodes) {
    if (g.pred[v.id].empty() && v.kind != NodeKind::kAlloc) {
      return Bad(source, absl::StrCat("Nodes[", v.id, "]"), absl::StrCat(v.op, " node is a root; roots must be ALLOC (rule=roots-alloc)"));
    }
    if (g.succ[v.id].empty() && v.kind != NodeKind::kFree) {
      return Bad(source, absl::StrCat("Nodes[", v.id, "]"), absl::StrCat(v.op, " node is a leaf; leaves must be FREE (rule=leaves-free)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<KernelGraph> ParseKernelGraph(std::string_view json_text, const CacheConfig& config,
                                             std::string_view source) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(json_text, source));
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": malformed JSON: ", e.what()));
  }
  if (!doc.is_object()) return Bad(source, "$", "expected an object with \"Nodes\" and \"Edges\"");
  auto nodes_it = doc.find("Nodes");
  auto edges_it = doc.find("Edges");
  if (nodes_it == doc.end() || !nodes_it->is_array()) return Bad(source, "$.Nodes", "missing or not an array");
  if (edges_it == doc.end() || !edges_it->is_array()) return Bad(source, "$.Edges", "missing or not an array");
  if (nodes_it->size() > static_cast<size_t>(kMaxKernelNodes)) {
    return Bad(source, "$.Nodes", absl::StrCat("the case has ", nodes_it->size(), " nodes, more than the limit ",
                                               kMaxKernelNodes));
  }
  const JsonFields f(source);
  // Ids index arrays of the case's own size: a node Id, BufId or edge end
  // beyond the node count is refused before anything is sized by it (every
  // buffer has an ALLOC and a FREE node, so BufIds below N are plenty).
  const int64_t n = static_cast<int64_t>(nodes_it->size());
  const int64_t max_id = std::max<int64_t>(n - 1, 0);
  auto buf_id = [&](const json& v, const std::string& path) -> absl::StatusOr<int> {
    NPUPLAN_ASSIGN_OR_RETURN(int64_t b, f.Int(v, path));
    if (b < 0 || b >= std::max<int64_t>(n, 1)) {
      return Bad(source, path, absl::StrCat("BufId ", b, " is out of range: BufIds are 0..", max_id,
                                            " (below the case's node count, ", n, ")"));
    }
    return static_cast<int>(b);
  };
  KernelGraph g;
  g.nodes.reserve(nodes_it->size());
  for (size_t i = 0; i < nodes_it->size(); ++i) {
    const json& jn = (*nodes_it)[i];
    const std::string path = absl::StrCat("Nodes[", i, "]");
    if (!jn.is_object()) return Bad(source, path, "expected an object");
    KernelNode v;
    NPUPLAN_ASSIGN_OR_RETURN(int64_t id, f.RequiredInt(jn, path, "Id"));
    if (id != static_cast<int64_t>(i)) {  // compared before narrowing: 2^32 + i is not i
      return Bad(source, path, absl::StrCat("node Ids must be 0..N-1 in order (rule=dense-ids); found Id ", id));
    }
    v.id = static_cast<int>(id);
    NPUPLAN_ASSIGN_OR_RETURN(v.op, f.RequiredString(jn, path, "Op"));
    if (v.op == "ALLOC" || v.op == "FREE") {
      v.kind = v.op == "ALLOC" ? NodeKind::kAlloc : NodeKind::kFree;
      if (!jn.contains("BufId")) return Bad(source, path, "missing field 'BufId'");
      NPUPLAN_ASSIGN_OR_RETURN(v.buf_id, buf_id(jn["BufId"], path + ".BufId"));
      NPUPLAN_ASSIGN_OR_RETURN(v.size, f.RequiredInt(jn, path, "Size", JsonFields::kMin, kMaxKernelValue));
      NPUPLAN_ASSIGN_OR_RETURN(v.type, f.RequiredString(jn, path, "Type"));
    } else {
      if (v.op == "SPILL_OUT" || v.op == "SPILL_IN") {
        return Bad(source, path, "SPILL nodes are not allowed in an input graph");
      }
      v.kind = NodeKind::kOp;
      NPUPLAN_ASSIGN_OR_RETURN(v.pipe, f.RequiredString(jn, path, "Pipe"));
      NPUPLAN_ASSIGN_OR_RETURN(v.cycles, f.RequiredInt(jn, path, "Cycles", 0, kMaxKernelValue));
      auto bufs = jn.find("Bufs");
      if (bufs == jn.end() || !bufs->is_array()) return Bad(source, path + ".Bufs", "missing or not an array");
      for (size_t k = 0; k < bufs->size(); ++k) {
        NPUPLAN_ASSIGN_OR_RETURN(int b, buf_id((*bufs)[k], absl::StrCat(path, ".Bufs[", k, "]")));
        v.bufs.push_back(b);
      }
    }
    g.nodes.push_back(std::move(v));
  }
  for (size_t e = 0; e < edges_it->size(); ++e) {
    const json& je = (*edges_it)[e];
    const std::string path = absl::StrCat("Edges[", e, "]");
    if (!je.is_array() || je.size() != 2) return Bad(source, path, "expected [src, dst]");
    NPUPLAN_ASSIGN_OR_RETURN(int64_t a, f.Int(je[0], path + "[0]"));
    NPUPLAN_ASSIGN_OR_RETURN(int64_t b, f.Int(je[1], path + "[1]"));
    if (a < 0 || a >= n || b < 0 || b >= n) {
      return Bad(source, path, absl::StrCat("names a missing node [", a, ", ", b, "] (the case has ", n, " nodes)"));
    }
    g.edges.emplace_back(static_cast<int>(a), static_cast<int>(b));
  }
  NPUPLAN_RETURN_IF_ERROR(FinalizeKernelGraph(g, config, source));
  return g;
}

absl::StatusOr<KernelGraph> LoadKernelGraph(const std::string& path, const CacheConfig& config) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  NPUPLAN_ASSIGN_OR_RETURN(KernelGraph g, ParseKernelGraph(text, config, path));
  std::string stem = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (auto dot = stem.rfind('.'); dot != std::string::npos) stem = stem.substr(0, dot);
  g.name = stem;
  return g;
}

std::string KernelGraphToJson(const KernelGraph& g) {
  std::ostringstream os;
  os << "{\n  \"Nodes\": [\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const KernelNode& v = g.nodes[i];
    if (v.kind == NodeKind::kOp) {
      os << "    {\"Id\": " << v.id << ", \"Op\": \"" << v.op << "\", \"Pipe\": \"" << v.pipe
         << "\", \"Cycles\": " << v.cycles << ", \"Bufs\": [";
      for (size_t k = 0; k < v.bufs.size(); ++k) os << (k ? ", " : "") << v.bufs[k];
      os << "]}";
    } else {
      os << "    {\"Id\": " << v.id << ", \"Op\": \"" << v.op << "\", \"BufId\": " << v.buf_id
         << ", \"Size\": " << v.size << ", \"Type\": \"" << v.type << "\"}";
    }
    os << (i + 1 < g.nodes.size() ? ",\n" : "\n");
  }
  os << "  ],\n  \"Edges\": [\n";
  for (size_t e = 0; e < g.edges.size(); ++e) {
    os << "    [" << g.edges[e].first << ", " << g.edges[e].second << "]"
       << (e + 1 < g.edges.size() ? ",\n" : "\n");
  }
  os << "  ]\n}\n";
  return os.str();
}

}  // namespace npuplan::kernel
