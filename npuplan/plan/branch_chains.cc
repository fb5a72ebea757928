#include "npuplan/plan/branch_chains.h"

#include <algorithm>

#include "npuplan/ir/control_flow_types.h"

namespace npuplan {

BranchScopes::BranchScopes(const Model& model) {
  scopes_.push_back(Scope{});
  const size_t graphs = model.num_graphs();
  if (graphs <= 1) return;
  // Scope of each graph, parents first (explicit stack; an ownership cycle,
  // which the model verifier refuses, ends in scope 0).
  constexpr int32_t kUnknown = -1, kVisiting = -2;
  std::vector<int32_t> graph_scope(graphs, kUnknown);
  graph_scope[0] = 0;
  for (size_t g0 = 1; g0 < graphs; ++g0) {
    std::vector<GraphId> walk{GraphId(static_cast<int32_t>(g0))};
    while (!walk.empty()) {
      const GraphId g = walk.back();
      int32_t& slot = graph_scope[g.index()];
      if (slot >= 0) {
        walk.pop_back();
        continue;
      }
      const NodeId p = model.graph(g).parent_node;
      if (!p.valid() || p.index() >= model.num_nodes()) {
        slot = 0;
        walk.pop_back();
        continue;
      }
      const Node& owner = model.node(p);
      const int32_t outer = owner.graph.index() < graphs ? graph_scope[owner.graph.index()] : 0;
      if (outer == kUnknown && slot != kVisiting) {
        slot = kVisiting;
        walk.push_back(owner.graph);
        continue;
      }
      const int32_t parent = outer < 0 ? 0 : outer;  // kVisiting: a cycle
      if (IsBranchNode(owner)) {
        slot = static_cast<int32_t>(scopes_.size());
        scopes_.push_back(Scope{p, parent, scopes_[parent].depth + 1,
                                static_cast<int32_t>(owner.subgraphs.size())});
      } else {
        slot = parent;
      }
      walk.pop_back();
    }
  }
  if (scopes_.size() == 1) return;
  node_scope_.assign(model.num_nodes(), 0);
  for (size_t g = 1; g < graphs; ++g) {
    if (graph_scope[g] <= 0) continue;
    for (NodeId id : model.graphs()[g].nodes) node_scope_[id.index()] = graph_scope[g];
  }
}

BranchChains::BranchChains(const Model& model, const SyncView& view, size_t k,
                           std::vector<int32_t> clock_entry)
    : view_(view), k_(k), clock_entry_(std::move(clock_entry)), scopes_(model) {
  if (!active()) return;
  const size_t streams = static_cast<size_t>(std::max<int64_t>(view.num_streams(), 0));
  head_.assign(streams, Head{});
  last_pos_.assign(streams, -1);
  saved_in_.assign(streams, {});
}

BranchChains::Flat BranchChains::NewFlat() {
  if (!free_flats_.empty()) {
    const Flat f = free_flats_.back();
    free_flats_.pop_back();
    return f;
  }
  flats_.emplace_back(k_);
  return static_cast<Flat>(flats_.size() - 1);
}

BranchChains::Flat BranchChains::CopyFlat(Flat f) {
  if (f < 0) return -1;
  const Flat c = NewFlat();
  std::copy(flats_[f].begin(), flats_[f].end(), flats_[c].begin());
  return c;
}

void BranchChains::FreeFlat(Flat f) {
  if (f >= 0) free_flats_.push_back(f);
}

void BranchChains::MeetInto(Flat& acc, Flat f) {
  if (acc < 0) return;  // already every entry -1
  if (f < 0) {
    FreeFlat(acc);
    acc = -1;
    return;
  }
  std::vector<int32_t>& a = flats_[acc];
  const std::vector<int32_t>& b = flats_[f];
  for (size_t x = 0; x < k_; ++x) a[x] = std::min(a[x], b[x]);
}

BranchChains::Flat BranchChains::TakeHead(int64_t s, ChainClocks& clocks) {
  Head& h = head_[s];
  Flat f = h.flat;
  if (h.slot >= 0) {
    f = NewFlat();
    clocks.Read(h.slot, flats_[f].data());
    clocks.Release(h.slot);
  }
  h = Head{};
  return f;
}

void BranchChains::Touch(int64_t s, int32_t pos, ChainClocks& clocks) {
  // The frames that keep s are a prefix of the stack (serials are unique and
  // a frame outlives the frames above it): find where it ends.
  std::vector<int32_t>& saved = saved_in_[s];
  size_t i = std::min(saved.size(), stack_.size());
  if (i > 0 && saved[i - 1] != stack_[i - 1].serial) {
    i = static_cast<size_t>(std::partition_point(saved.begin(), saved.begin() + i,
                                                 [&](const int32_t& x) {
                                                   return x == stack_[&x - saved.data()].serial;
                                                 }) -
                            saved.begin());
  }
  saved.resize(i);
  if (i < stack_.size()) {
    // First slot of the stream inside these branches: each If keeps the
    // state before it; its earlier branches left the stream as it was.
    Flat state = TakeHead(s, clocks);
    for (; i < stack_.size(); ++i) {
      Frame& f = stack_[i];
      StreamEntry e{s, CopyFlat(state), last_pos_[s], {}, {}};
      for (int32_t o = 0; o < f.ordinal; ++o) e.ends.push_back(CopyFlat(state));
      saved.push_back(f.serial);
      f.streams.push_back(std::move(e));
      if (f.ordinal > 0) CoverOtherBranches(f, f.ordinal, state);  // as Switch does
    }
    head_[s].flat = state;
  }
  last_pos_[s] = pos;
}

void BranchChains::EndBranch(Frame& f, ChainClocks& clocks) {
  for (StreamEntry& e : f.streams) {
    // The branch's slots on the stream: those swept since it began.
    if (e.segments.size() <= static_cast<size_t>(f.ordinal)) e.segments.resize(f.ordinal + 1);
    if (last_pos_[e.stream] > e.start) e.segments[f.ordinal] = {e.start + 1, last_pos_[e.stream]};
    const Flat end = TakeHead(e.stream, clocks);
    if (e.ends.size() <= static_cast<size_t>(f.ordinal)) e.ends.resize(f.ordinal + 1, kNoEnd);
    Flat& slot = e.ends[f.ordinal];
    if (slot == kNoEnd) {
      slot = end;
    } else {  // the branch swept again (not pre-order): either end may be the one
      MeetInto(slot, end);
      FreeFlat(end);
    }
  }
}

void BranchChains::Switch(Frame& f, int32_t branch, ChainClocks& clocks) {
  EndBranch(f, clocks);
  f.branch = branch;
  auto it = std::find(f.seen.begin(), f.seen.end(), branch);
  f.ordinal = static_cast<int32_t>(it - f.seen.begin());
  if (it == f.seen.end()) f.seen.push_back(branch);
  // This branch starts from the state before the If, past the slots of the
  // branches before it (they do not run with it).
  for (StreamEntry& e : f.streams) {
    Flat state = CopyFlat(e.saved);
    CoverOtherBranches(f, f.ordinal, state);
    head_[e.stream].flat = state;
    e.start = last_pos_[e.stream];
  }
}

size_t BranchChains::Entry(int64_t s) const {
  return clock_entry_.empty() ? static_cast<size_t>(s) : static_cast<size_t>(clock_entry_[s]);
}

void BranchChains::CoverOtherBranches(const Frame& f, int32_t ordinal, Flat& state) {
  if (state < 0) {
    state = NewFlat();
    std::fill(flats_[state].begin(), flats_[state].end(), -1);
  }
  std::vector<int32_t>& c = flats_[state];
  for (const StreamEntry& x : f.streams) {
    int32_t& known = c[Entry(x.stream)];
    // The branches' stretches follow each other on the stream in sweep order.
    for (size_t o = 0; o < x.segments.size(); ++o) {
      const Segment& seg = x.segments[o];
      if (seg.lo > seg.hi || known >= seg.hi) continue;
      if (static_cast<int32_t>(o) == ordinal || seg.lo > known + 1) break;
      known = seg.hi;
    }
  }
}

void BranchChains::Close(ChainClocks& clocks) {
  EndBranch(stack_.back(), clocks);
  Frame f = std::move(stack_.back());
  stack_.pop_back();
  const NodeId owner = scopes_.owner(f.branch);
  const bool every_branch_seen = static_cast<int32_t>(f.seen.size()) >= scopes_.branches(f.branch);
  for (StreamEntry& e : f.streams) {
    // A run takes one branch (or, when some branch has no slot, maybe none
    // of those swept): what every way through guarantees.
    Flat state = -1;
    for (size_t o = 0; o < e.ends.size(); ++o) {
      Flat end = e.ends[o] == kNoEnd ? -1 : e.ends[o];
      CoverOtherBranches(f, static_cast<int32_t>(o), end);
      if (o == 0) {
        state = end;
      } else {
        MeetInto(state, end);
        FreeFlat(end);
      }
    }
    if (!every_branch_seen) {
      CoverOtherBranches(f, -1, e.saved);
      MeetInto(state, e.saved);
    }
    FreeFlat(e.saved);
    head_[e.stream].flat = state;
    if (auto it = exits_.find({owner.value, e.stream}); it != exits_.end()) {
      Exit& x = it->second;
      FreeFlat(x.flat);
      x.flat = CopyFlat(state);
      x.pos = -1;
      for (const Segment& seg : e.segments)
        x.pos = seg.lo <= seg.hi ? std::max(x.pos, seg.hi) : x.pos;
    }
  }
}

void BranchChains::Enter(int32_t scope, ChainClocks& clocks) {
  // Climb from `scope` to the first scope on the stack (or to a sibling of
  // the stack's branch at its level, or to no branch): the frames above stay
  // closed, the climbed ones open. Each frame is opened and closed once, so
  // the climbs cost the sweep O(frames) however deep the branches nest.
  chain_.clear();
  int32_t s = scope;
  while (s != 0) {
    const size_t at = static_cast<size_t>(scopes_.depth(s) - 1);
    if (at < stack_.size() &&
        (stack_[at].branch == s || scopes_.owner(stack_[at].branch) == scopes_.owner(s)))
      break;
    chain_.push_back(s);
    s = scopes_.parent(s);
  }
  const size_t keep = s == 0 ? 0 : static_cast<size_t>(scopes_.depth(s));
  while (stack_.size() > keep) Close(clocks);
  if (keep > 0 && stack_[keep - 1].branch != s) Switch(stack_[keep - 1], s, clocks);
  for (auto it = chain_.rbegin(); it != chain_.rend(); ++it)
    stack_.push_back(Frame{*it, serial_++, {*it}, 0, {}});
  scope_ = scope;
}

BranchChains::Source BranchChains::Before(int32_t v, ChainClocks& clocks, int32_t clock_pos) {
  const int64_t s = view_.stream(v);
  if (!active()) {
    const int32_t p = view_.pos(v);
    return p > 0 ? Source{view_.stream_slots(s)[p - 1], nullptr} : Source{};
  }
  if (const int32_t scope = ScopeOfSlot(v); scope != scope_) Enter(scope, clocks);
  Touch(s, clock_pos >= 0 ? clock_pos : view_.pos(v), clocks);
  const Head& h = head_[s];
  if (h.slot >= 0) return Source{h.slot, nullptr};
  return Source{-1, h.flat >= 0 ? flats_[h.flat].data() : nullptr};
}

void BranchChains::After(int32_t v) {
  if (!active()) return;
  const int64_t s = view_.stream(v);
  FreeFlat(head_[s].flat);
  head_[s] = Head{v, -1};
}

std::pair<NodeId, bool> BranchChains::Crossing(int32_t u, int32_t v) const {
  const int32_t su = ScopeOfSlot(u), sv = ScopeOfSlot(v);
  if (su == 0 || su == sv) return {NodeId(), false};
  // Climb to the lowest common scope, keeping the child on each side: u's
  // is the outermost branch holding u and not v.
  int32_t a = su, b = sv, child_a = 0, child_b = 0;
  while (scopes_.depth(a) > scopes_.depth(b)) a = scopes_.parent(child_a = a);
  while (scopes_.depth(b) > scopes_.depth(a)) b = scopes_.parent(child_b = b);
  while (a != b) {
    a = scopes_.parent(child_a = a);
    b = scopes_.parent(child_b = b);
  }
  if (child_a == 0) return {NodeId(), false};  // u's branches hold v
  const NodeId owner = scopes_.owner(child_a);
  return {owner, child_b != 0 && scopes_.owner(child_b) == owner};
}

BranchChains::Relation BranchChains::Relate(int32_t u, int32_t v) const {
  if (!active()) return Relation::kRunsWith;
  const auto [owner, sibling] = Crossing(u, v);
  if (!owner.valid()) return Relation::kRunsWith;
  return sibling ? Relation::kSibling : Relation::kOutOfBranch;
}

void BranchChains::ExpectSender(int32_t u, int32_t v) {
  if (!active()) return;
  const auto [owner, sibling] = Crossing(u, v);
  if (!owner.valid() || sibling) return;
  auto [it, fresh] = exits_.try_emplace({owner.value, view_.stream(u)});
  if (fresh) it->second.id = static_cast<int32_t>(exits_.size() - 1);
}

BranchChains::Source BranchChains::Sender(int32_t u, int32_t v) const {
  if (!active()) return Source{u, nullptr};
  const auto [owner, sibling] = Crossing(u, v);
  if (!owner.valid()) return Source{u, nullptr};
  if (sibling) return Source{};  // sibling branches never run together
  auto it = exits_.find({owner.value, view_.stream(u)});
  if (it == exits_.end() || it->second.flat < 0) return Source{};  // not expected, not closed
  const Exit& x = it->second;
  return Source{-1, flats_[x.flat].data(), x.id, x.pos};
}

void BranchChains::Finish(ChainClocks& clocks) {
  if (!active()) return;
  while (!stack_.empty()) Close(clocks);
  for (Head& h : head_) {
    if (h.slot >= 0) clocks.Release(h.slot);
    FreeFlat(h.flat);
    h = Head{};
  }
}

}  // namespace npuplan
