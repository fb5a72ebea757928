#include "npuplan/kernel/generator.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "npuplan/support/checked_math.h"
#include "npuplan/support/status_macros.h"

namespace npuplan::kernel {

absl::StatusOr<GraphKind> ParseGraphKind(std::string_view s) {
  if (s == "matmul") return GraphKind::kMatmul;
  if (s == "flash-attention" || s == "fa") return GraphKind::kFlashAttention;
  if (s == "conv") return GraphKind::kConv;
  return absl::InvalidArgumentError(absl::StrCat("--kind: unknown value \"", std::string(s), "\" (matmul|flash-attention|conv)"));
}

namespace {

// Builds nodes and edges; FREE nodes are created by Finish() after every user.
class Builder {
 public:
  // Declares a buffer: ALLOC node now; its FREE at Finish().
  int Alloc(const std::string& type, int64_t size) {
    const int buf = next_buf_++;
    KernelNode v;
    v.id = static_cast<int>(g_.nodes.size());
    v.kind = NodeKind::kAlloc;
    v.op = "ALLOC";
    v.buf_id = buf;
    v.size = size;
    v.type = type;
    g_.nodes.push_back(v);
    alloc_[buf] = v.id;
    producer_[buf] = -1;
    return buf;
  }
  // Adds an operation that reads `ins` and writes `outs` (all in Bufs, outs first).
  int Op(const std::string& op, const std::string& pipe, int64_t cycles, const std::vector<int>& outs,
         const std::vector<int>& ins, const std::vector<int>& after = {}) {
    KernelNode v;
    v.id = static_cast<int>(g_.nodes.size());
    v.op = op;
    v.pipe = pipe;
    v.cycles = cycles;
    v.bufs = outs;
    v.bufs.insert(v.bufs.end(), ins.begin(), ins.end());
    g_.nodes.push_back(v);
    for (int b : ins) {
      if (producer_[b] >= 0) g_.edges.emplace_back(producer_[b], v.id);
      users_[b].push_back(v.id);
    }
    for (int b : outs) {
      if (producer_[b] < 0) {
        g_.edges.emplace_back(alloc_[b], v.id);
      } else {
        g_.edges.emplace_back(producer_[b], v.id);  // accumulate / update in place
      }
      producer_[b] = v.id;
      users_[b].push_back(v.id);
    }
    for (int a : after) g_.edges.emplace_back(a, v.id);
    return v.id;
  }
  int Free(int buf) {
    const KernelNode& a = g_.nodes[alloc_[buf]];
    KernelNode v;
    v.id = static_cast<int>(g_.nodes.size());
    v.kind = NodeKind::kFree;
    v.op = "FREE";
    v.buf_id = buf;
    v.size = a.size;
    v.type = a.type;
    g_.nodes.push_back(v);
    g_.edges.emplace_back(alloc_[buf], v.id);
    for (int u : users_[buf]) g_.edges.emplace_back(u, v.id);
    freed_[buf] = true;
    return v.id;
  }
  KernelGraph Finish() {
    for (auto& [buf, node] : alloc_) {
      if (!freed_[buf]) Free(buf);
    }
    return std::move(g_);
  }

 private:
  KernelGraph g_;
  int next_buf_ = 0;
  std::map<int, int> alloc_, producer_;
  std::map<int, std::vector<int>> users_;
  std::map<int, bool> freed_;
};

int64_t MoveCycles(int64_t size) { return size / 4 - 1; }
int64_t CopyInCycles(int64_t size) { return 2 * size + 69; }

void Matmul(Builder& b, const GeneratorOptions& o) {
  std::map<std::pair<int, int>, int> a_tile, b_tile;
  auto tile = [&](std::map<std::pair<int, int>, int>& m, int r, int c) {
    auto [it, fresh] = m.emplace(std::make_pair(r, c), -1);
    if (fresh) {
      it->second = b.Alloc("L1", o.tile);
      b.Op("COPY_IN", "MTE2", CopyInCycles(o.tile), {it->second}, {});
    }
    return it->second;
  };
  for (int i = 0; i < o.m; ++i) {
    for (int j = 0; j < o.n; ++j) {
      const int c = b.Alloc("L0C", 2 * o.tile);
      for (int kk = 0; kk < o.k; ++kk) {
        const int ta = tile(a_tile, i, kk), tb = tile(b_tile, kk, j);
        const int la = b.Alloc("L0A", o.tile), lb = b.Alloc("L0B", o.tile);
        b.Op("MOVE", "MTE1", MoveCycles(o.tile), {la}, {ta});
        b.Op("MOVE", "MTE1", MoveCycles(o.tile), {lb}, {tb});
        b.Op("MATMUL", "CUBE", o.tile, {c}, {lb, la});
        b.Free(la);
        b.Free(lb);
      }
      b.Op("COPY_OUT", "FIXP", 2 * o.tile + 7, {}, {c});
      b.Free(c);
    }
  }
}

void FlashAttention(Builder& b, const GeneratorOptions& o) {
  const int64_t t = o.tile;
  std::vector<int> k(o.seq, -1), v(o.seq, -1);
  for (int i = 0; i < o.seq; ++i) {
    const int q = b.Alloc("L1", 2 * t);
    b.Op("COPY_IN", "MTE2", CopyInCycles(2 * t), {q}, {});
    const int acc = b.Alloc("UB", t), mx = b.Alloc("UB", 2), sum = b.Alloc("UB", 2);
    for (int j = 0; j < o.seq; ++j) {
      if (k[j] < 0) {
        k[j] = b.Alloc("L1", 2 * t);
        b.Op("COPY_IN", "MTE2", CopyInCycles(2 * t), {k[j]}, {});
        v[j] = b.Alloc("L1", 2 * t);
        b.Op("COPY_IN", "MTE2", CopyInCycles(2 * t), {v[j]}, {});
      }
      // S = Q K^T
      const int c = b.Alloc("L0C", 2 * t);
      const int la = b.Alloc("L0A", t), lb = b.Alloc("L0B", t);
      b.Op("MOVE", "MTE1", MoveCycles(t), {la}, {q});
      b.Op("MOVE", "MTE1", MoveCycles(2 * t) - 10, {lb}, {k[j]});
      b.Op("MATMUL", "CUBE", t, {c}, {lb, la});
      b.Free(la);
      b.Free(lb);
      const int s = b.Alloc("UB", t);
      b.Op("COPY", "FIXP", 41, {s}, {c});
      b.Free(c);
      // online softmax
      const int rmax = b.Alloc("UB", 2);
      b.Op("ROWMAX", "VECTOR", 310, {rmax}, {s});
      b.Op("MAX", "VECTOR", 23, {mx}, {rmax});
      b.Op("SUB", "VECTOR", 151, {s}, {mx});
      b.Op("EXP", "VECTOR", 218, {s}, {});
      const int rsum = b.Alloc("UB", 2);
      b.Op("ROWSUM", "VECTOR", 342, {rsum}, {s});
      b.Op("ADD", "VECTOR", 24, {sum}, {rsum});
      b.Free(rmax);
      b.Free(rsum);
      const int p = b.Alloc("L1", 2 * t);
      b.Op("COPY", "MTE3", 271, {p}, {s});
      b.Free(s);
      // O += P V
      const int c2 = b.Alloc("L0C", 2 * t);
      const int la2 = b.Alloc("L0A", t), lb2 = b.Alloc("L0B", t);
      b.Op("MOVE", "MTE1", MoveCycles(t), {la2}, {p});
      b.Op("MOVE", "MTE1", MoveCycles(2 * t) - 10, {lb2}, {v[j]});
      b.Op("MATMUL", "CUBE", t, {c2}, {lb2, la2});
      b.Free(la2);
      b.Free(lb2);
      b.Free(p);
      const int otmp = b.Alloc("UB", t);
      b.Op("COPY", "FIXP", 41, {otmp}, {c2});
      b.Free(c2);
      b.Op("MUL", "VECTOR", 38, {acc}, {mx});
      b.Op("ADD", "VECTOR", 37, {acc}, {otmp});
      b.Free(otmp);
    }
    b.Op("REC", "VECTOR", 25, {sum}, {});
    b.Op("MUL", "VECTOR", 38, {acc}, {sum});
    b.Op("COPY_OUT", "MTE3", 191, {}, {acc});
    b.Free(acc);
    b.Free(mx);
    b.Free(sum);
    b.Free(q);
  }
}

void Conv(Builder& b, const GeneratorOptions& o) {
  const int64_t t = o.tile;
  std::vector<int> prev(o.width);
  for (int x = 0; x < o.width; ++x) {
    prev[x] = b.Alloc("L1", t);
    b.Op("COPY_IN", "MTE2", CopyInCycles(t), {prev[x]}, {});
  }
  for (int l = 0; l < o.layers; ++l) {
    const bool last = l + 1 == o.layers;
    const int w = b.Alloc("L1", 2 * t);
    b.Op("COPY_IN", "MTE2", CopyInCycles(2 * t), {w}, {});
    std::vector<int> next(o.width, -1);
    for (int x = 0; x < o.width; ++x) {
      const int c = b.Alloc("L0C", 2 * t);
      for (int d = -1; d <= 1; ++d) {
        if (x + d < 0 || x + d >= o.width) continue;
        const int la = b.Alloc("L0A", t), lb = b.Alloc("L0B", 2 * t);
        b.Op("MOVE", "MTE1", MoveCycles(t), {la}, {prev[x + d]});
        b.Op("MOVE", "MTE1", MoveCycles(2 * t), {lb}, {w});
        b.Op("CONV", "CUBE", 2 * t, {c}, {lb, la});
        b.Free(la);
        b.Free(lb);
      }
      if (last) {
        b.Op("COPY_OUT", "FIXP", 2 * t + 7, {}, {c});
      } else {
        next[x] = b.Alloc("L1", t);
        b.Op("COPY", "FIXP", 2 * t + 7, {next[x]}, {c});
      }
      b.Free(c);
    }
    prev = next;
  }
}

// Nodes the generator builds for `o` at most (each count from the loops
// above, rounded up); nullopt when it overflows int64.
std::optional<int64_t> MaxNodes(const GeneratorOptions& o) {
  const int64_t m = o.m, n = o.n, k = o.k, seq = o.seq, layers = o.layers, width = o.width;
  CheckedSum<> total;
  bool ok = true;
  auto term = [&](std::initializer_list<int64_t> factors) {
    CheckedProduct<> p;
    for (int64_t f : factors) ok = ok && p.Mul(f);
    ok = ok && total.Add(p.value());
  };
  switch (o.kind) {
    case GraphKind::kMatmul:  // per C tile 3 + 7 per k step; 3 per A and B tile
      term({m, n, 7 * k + 3});
      term({3, m, k});
      term({3, k, n});
      break;
    case GraphKind::kFlashAttention:  // 39 per block pair (45 kept), 6 per K/V block and 12 per row
      term({45, seq, seq});
      term({20, seq});
      break;
    case GraphKind::kConv:  // 26 per tile and layer, 3 per layer, 3 per input tile
      term({26, layers, width});
      term({3, layers});
      term({3, width});
      break;
  }
  if (!ok) return std::nullopt;
  return total.value();
}

}  // namespace

absl::StatusOr<KernelGraph> GenerateKernelGraph(const GeneratorOptions& o, const CacheConfig& config) {
  if (o.m < 1 || o.n < 1 || o.k < 1 || o.seq < 1 || o.layers < 1 || o.width < 1 || o.tile < 4) {
    return absl::InvalidArgumentError("generator: every dimension must be >= 1 and tile >= 4");
  }
  // Refused before anything is allocated: what `kernel gen` writes, the
  // kernel reader accepts.
  if (std::optional<int64_t> nodes = MaxNodes(o); !nodes || *nodes > kMaxKernelNodes) {
    return absl::InvalidArgumentError(absl::StrCat("generator: the sizes give up to ",
                                                   nodes ? absl::StrCat(*nodes) : std::string("more than 2^63"),
                                                   " nodes, more than a kernel case may have (", kMaxKernelNodes,
                                                   ")"));
  }
  Builder b;
  std::string name;
  switch (o.kind) {
    case GraphKind::kMatmul:
      Matmul(b, o);
      name = absl::StrCat("gen_matmul_", o.m, "x", o.n, "x", o.k);
      break;
    case GraphKind::kFlashAttention:
      FlashAttention(b, o);
      name = absl::StrCat("gen_fa_", o.seq);
      break;
    case GraphKind::kConv:
      Conv(b, o);
      name = absl::StrCat("gen_conv_", o.layers, "x", o.width);
      break;
  }
  KernelGraph g = b.Finish();
  if (g.num_nodes() > kMaxKernelNodes) return absl::InternalError("generator: MaxNodes undercounted");
  g.name = name;
  NPUPLAN_RETURN_IF_ERROR(FinalizeKernelGraph(g, config, name));
  return g;
}

}  // namespace npuplan::kernel
