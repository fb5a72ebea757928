// ComputeTensorLifetimes' last steps (tensor_lifetimes_internal.h): the
// alias groups become buffers (members, size, region, uses, loops,
// lifetime), then the buffers' deterministic order and the tensor index.
#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <tuple>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/support/sort_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/verify/tensor_lifetimes_internal.h"

namespace npuplan::memory::lifetimes_internal {
using namespace std::string_view_literals;
namespace {

// Appends TensorName(model, t) to the last block of `store` (a new block when
// it does not fit) and returns a view of it.
std::string_view StoreTensorName(const Model& model, TensorRef t,
                                 std::vector<BigVector<char>>& store) {
  const std::string& node = model.node(t.node).name;
  char suffix[16] = {':'};
  std::string_view tail = ":workspace";
  if (t.output != TensorRef::kWorkspace) {
    char* end = std::to_chars(suffix + 1, suffix + sizeof(suffix), t.output).ptr;
    tail = std::string_view(suffix, static_cast<size_t>(end - suffix));
  }
  const size_t length = node.size() + tail.size();
  if (store.empty() || store.back().capacity() - store.back().size() < length) {
    store.emplace_back().reserve(std::max(kHugePageBytes, length));
  }
  BigVector<char>& block = store.back();
  const size_t at = block.size();
  block.insert(block.end(), node.begin(), node.end());
  block.insert(block.end(), tail.begin(), tail.end());
  return {block.data() + at, length};
}

}  // namespace

// Streamed nodes of a loop (the loop node and its subgraphs, recursively), cached.
const std::vector<NodeId>& LifetimeBuilder::LoopSpan(NodeId loop) {
  auto it = loop_nodes_.find(loop.value);
  if (it != loop_nodes_.end()) return it->second;
  std::vector<NodeId> span;
  std::vector<NodeId> stack = {loop};
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    span.push_back(x);
    for (GraphId sg : model_.node(x).subgraphs) {
      for (NodeId c : model_.graph(sg).nodes) stack.push_back(c);
    }
  }
  return loop_nodes_.emplace(loop.value, std::move(span)).first->second;
}

// Buffers ahead whose owner node GroupBuffers prefetches.
constexpr size_t kPrefetchAhead = 8;

// 5. Group into buffers (members in tensor order): a counting sort of the
// tensors by root.
absl::Status LifetimeBuilder::GroupBuffers() {
  const size_t nt = tensors_.size();
  BigVector<int> root(nt);
  BigVector<int32_t> begin(nt + 1, 0);
  for (size_t t = 0; t < nt; ++t) {
    root[t] = uf_.Find(static_cast<int>(t));
    ++begin[static_cast<size_t>(root[t]) + 1];
  }
  uf_ = UnionFind(0);
  for (size_t t = 1; t <= nt; ++t) begin[t] += begin[t - 1];
  BigVector<int> members(nt);
  BigVector<int32_t> next(begin.begin(), begin.end() - 1);
  for (size_t t = 0; t < nt; ++t)
    members[static_cast<size_t>(next[static_cast<size_t>(root[t])]++)] = static_cast<int>(t);
  // Back to the block cache for the arrays below (fresh pages cost more
  // than the work on them).
  FreeStorage(next);
  FreeStorage(root);
  // Made in the plan order of their owners (the roots), which is nearly the
  // order SortBuffers settles on (by first touch): its permutation then moves
  // each buffer a short way, not across a million-entry array.
  std::vector<int> roots;
  roots.reserve(nt);
  for (size_t r = 0; r < nt; ++r) {
    if (begin[r + 1] > begin[r]) roots.push_back(static_cast<int>(r));
  }
  // Usually in plan order already (tensors in node order): one pass then.
  StableSortByKey(roots, [&](int r) { return lt_.position[tensors_[r].node.index()]; });
  // Made region by region too (SortBuffers' first key): otherwise its
  // permutation would carry each workspace / input / constant buffer across
  // the activations, a cache miss per buffer. An error is still the one the
  // plain plan order would meet first: the earliest root in that order.
  std::vector<int> rank_of(roots.size());  // root's index in plan order, by position in `roots`
  // Per position in `roots`: its alias group (where its members start in
  // `members`, how many) and its owner's node. The roots sit anywhere in the
  // tensor arrays: gathered in one short loop, whose independent loads
  // overlap, instead of a cache miss at a time in the long loop below.
  struct Group {
    int32_t begin, count;
    NodeId owner;
  };
  BigVector<Group> groups(roots.size());
  {
    for (size_t i = 0; i < roots.size(); ++i) {
      const int r = roots[i];
      groups[i] = {begin[r], begin[r + 1] - begin[r], tensors_[r].node};
    }
    std::vector<int8_t> region(roots.size());
    for (size_t i = 0; i < roots.size(); ++i) {
      region[i] = RegionRank(std::span<const int>(members.data() + groups[i].begin,
                                                  static_cast<size_t>(groups[i].count)));
    }
    // A stable counting sort by region (four ranks), straight into place.
    std::array<size_t, 5> region_at = {};
    for (int8_t r : region) ++region_at[static_cast<size_t>(r) + 1];
    for (size_t k = 1; k < region_at.size(); ++k) region_at[k] += region_at[k - 1];
    std::vector<int> by_region(roots.size());
    BigVector<Group> groups_by_region(roots.size());
    for (size_t i = 0; i < roots.size(); ++i) {
      const size_t d = region_at[static_cast<size_t>(region[i])]++;
      by_region[d] = roots[i];
      groups_by_region[d] = groups[i];
      rank_of[d] = static_cast<int>(i);
    }
    roots = std::move(by_region);
    groups = std::move(groups_by_region);
  }
  buffers_.reserve(roots.size());
  lt_.member_store.reserve(nt);
  // Without loops a buffer's uses are among its members' nodes and
  // consumers: no reallocation (each would copy and fault in a larger block),
  // and no loops. Then no store moves while the buffers are made, and
  // AddBuffer points their spans into the stores at once (no Ranges per
  // buffer, no second pass over the buffers).
  direct_spans_ = !has_loops_;
  if (direct_spans_) {
    lt_.use_store.reserve(nt + consumers_.size());
  } else {
    ranges_.reserve(roots.size());
  }
  const TensorRef* const member_base = lt_.member_store.data();
  const NodeId* const use_base = lt_.use_store.data();
  absl::Status first_error;
  int first_error_rank = std::numeric_limits<int>::max();
  for (size_t i = 0; i < roots.size(); ++i) {
    const int r = roots[i];
    // The owner's name (StoreTensorName) is a cache miss per buffer: the
    // node record of an owner a few buffers ahead is fetched meanwhile.
    if (i + kPrefetchAhead < roots.size()) {
      const NodeId owner = groups[i + kPrefetchAhead].owner;
      __builtin_prefetch(&model_.node(owner).name);
      // What AddBuffer reads of the owner tensor (the root) and its node.
      const size_t t = static_cast<size_t>(roots[i + kPrefetchAhead]);
      __builtin_prefetch(&tensor_bytes_[std::min(t, tensor_bytes_.size() - 1)]);
      __builtin_prefetch(&consumer_begin_[std::min(t, consumer_begin_.size() - 1)]);
      __builtin_prefetch(&facts_[owner.index()]);
    }
    // Its consumers a few buffers later (their range is in cache by then),
    // and their facts (SetLifetime) later still.
    if (i + kPrefetchAhead / 2 < roots.size()) {
      const size_t t = static_cast<size_t>(roots[i + kPrefetchAhead / 2]);
      if (t + 1 < consumer_begin_.size() && consumer_begin_[t] < consumer_begin_[t + 1])
        __builtin_prefetch(&consumers_[static_cast<size_t>(consumer_begin_[t])]);
    }
    if (i + kPrefetchAhead / 4 < roots.size()) {
      const size_t t = static_cast<size_t>(roots[i + kPrefetchAhead / 4]);
      if (t + 1 < consumer_begin_.size()) {
        for (int32_t c = consumer_begin_[t]; c < consumer_begin_[t + 1]; ++c)
          __builtin_prefetch(&facts_[consumers_[static_cast<size_t>(c)].index()]);
      }
    }
    absl::Status s = AddBuffer(r, std::span<const int>(members.data() + groups[i].begin,
                                                       static_cast<size_t>(groups[i].count)));
    if (!s.ok() && rank_of[i] < first_error_rank) {
      first_error = std::move(s);
      first_error_rank = rank_of[i];
    }
  }
  if (!first_error.ok()) return first_error;
  if (direct_spans_) {
    // The reservations above bound what the buffers append.
    if (lt_.member_store.data() != member_base || lt_.use_store.data() != use_base ||
        !lt_.loop_store.empty()) {
      return absl::InternalError("memory: a buffer store grew past its reservation");
    }
    return absl::OkStatus();
  }
  // The storage is final: point the spans into it (before SortBuffers
  // permutes the buffers, which then carry them along).
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Ranges& r = ranges_[i];
    const bool last = i + 1 == buffers_.size();
    const size_t member_end = last ? lt_.member_store.size() : ranges_[i + 1].member_begin;
    const size_t use_end = last ? lt_.use_store.size() : ranges_[i + 1].use_begin;
    const size_t loop_end = last ? lt_.loop_store.size() : ranges_[i + 1].loop_begin;
    buffers_[i].members = {lt_.member_store.data() + r.member_begin, member_end - r.member_begin};
    buffers_[i].uses = {lt_.use_store.data() + r.use_begin, use_end - r.use_begin};
    buffers_[i].loops = {lt_.loop_store.data() + r.loop_begin, loop_end - r.loop_begin};
  }
  FreeStorage(ranges_);
  return absl::OkStatus();
}

// The region of an alias group as AddBuffer sets it, as SortBuffers ranks
// it: activation 0, workspace 1, input 2, constant 3.
int8_t LifetimeBuilder::RegionRank(std::span<const int> members) const {
  bool constant = false, input = false, workspace = false;
  for (int t : members) {
    const TensorRef ref = tensors_[t];
    if (ref.output == TensorRef::kWorkspace) {
      workspace = true;
      continue;
    }
    const uint8_t flags = facts_[ref.node.index()].flags;
    if (flags & kConstantLike) constant = true;
    if ((flags & kData) && (flags & kRootGraph)) input = true;
  }
  return constant ? 3 : input ? 2 : workspace ? 1 : 0;
}

// The buffer of one alias group (or its tensors' names in lt.dynamic).
absl::Status LifetimeBuilder::AddBuffer(int root, std::span<const int> members) {
  const Model& model = model_;
  // Built in place: moving it in would touch a fresh slot twice.
  LogicalBuffer& b = buffers_.emplace_back();
  constexpr size_t kMaxStore = std::numeric_limits<uint32_t>::max();
  if (lt_.member_store.size() > kMaxStore || lt_.use_store.size() > kMaxStore ||
      lt_.loop_store.size() > kMaxStore) {
    return absl::InvalidArgumentError("memory: more than 2^32 buffer members, uses or loops");
  }
  const Ranges r{static_cast<uint32_t>(lt_.member_store.size()),
                 static_cast<uint32_t>(lt_.use_store.size()),
                 static_cast<uint32_t>(lt_.loop_store.size())};
  if (!direct_spans_) ranges_.push_back(r);
  bool dynamic = false, constant = false, input = false, workspace = false;
  int64_t bytes = 0;
  std::vector<int32_t>& touch = touch_;  // NodeId values touching the buffer
  touch.clear();
  BigVector<TensorRef>& store = lt_.member_store;
  for (int t : members) {
    TensorRef ref = tensors_[t];
    store.push_back(ref);
    if (ref.output == TensorRef::kWorkspace) {
      workspace = true;
      bytes = std::max(bytes, ws_bytes_[ref.node.index()]);
      touch.push_back(ref.node.value);
      continue;
    }
    const uint8_t flags = facts_[ref.node.index()].flags;
    if (flags & kConstantLike) constant = true;
    if ((flags & kData) && (flags & kRootGraph)) input = true;
    const int64_t sz = tensor_bytes_[static_cast<size_t>(t)];
    if (sz < 0) {
      dynamic = true;
    } else {
      bytes = std::max(bytes, sz);
    }
    touch.push_back(ref.node.value);
    for (int32_t c = consumer_begin_[t]; c < consumer_begin_[t + 1]; ++c)
      touch.push_back(consumers_[static_cast<size_t>(c)].value);
  }
  std::sort(touch.begin(), touch.end());
  touch.erase(std::unique(touch.begin(), touch.end()), touch.end());
  const auto first = store.begin() + static_cast<std::ptrdiff_t>(r.member_begin);
  if (members.size() > 1) {
    std::sort(first, store.end(), [&](const TensorRef& x, const TensorRef& y) {
      return std::make_pair(facts_[x.node.index()].position, x.output) <
             std::make_pair(facts_[y.node.index()].position, y.output);
    });
  }
  // Keep the first-defined tensor as the owner (the union root is the smallest index).
  auto owner = std::find(first, store.end(), tensors_[root]);
  std::rotate(first, owner, owner + 1);
  const TensorRef owner_ref = *first;
  if (dynamic) {
    for (auto it = first; it != store.end(); ++it) lt_.dynamic.push_back(TensorName(model, *it));
    store.resize(r.member_begin);
    buffers_.pop_back();
    if (!direct_spans_) ranges_.pop_back();
    return absl::OkStatus();
  }
  b.name = StoreTensorName(model, owner_ref, lt_.name_store);
  b.region = constant    ? MemoryRegion::kConstant
             : input     ? MemoryRegion::kInput
             : workspace ? MemoryRegion::kWorkspace
                         : MemoryRegion::kActivation;
  b.bytes = bytes;
  std::optional<int64_t> aligned = AlignUp(bytes, alignment_);
  if (!aligned)
    return Bad(model.node(owner_ref.node),
               StrCat("tensor size ", bytes, " overflows int64 when aligned"));
  b.size = *aligned;
  const bool iteration_local = ScopeLoops(b, r, touch);
  SetLifetime(b, r, touch, iteration_local);
  if (direct_spans_) {
    b.members = {store.data() + r.member_begin, store.size() - r.member_begin};
    b.uses = {lt_.use_store.data() + r.use_begin, lt_.use_store.size() - r.use_begin};
  }
  return absl::OkStatus();
}

// The loops around b's touches; whether b is iteration-local (see
// LogicalBuffer::iteration_loop): every touch in one body graph whose parent
// is the outermost loop, none of them a Data / NetOutput / parent node, all
// on one stream without attached streams.
bool LifetimeBuilder::ScopeLoops(LogicalBuffer& b, const Ranges& r,
                                 const std::vector<int32_t>& touch) const {
  if (!has_loops_) return false;  // no loops around anything
  const Model& model = model_;
  bool iteration_local = !touch.empty();
  GraphId body;
  int64_t only_stream = -1;
  for (int32_t x : touch) {
    const Node& node = model.node(NodeId(x));
    if (!body.valid()) body = node.graph;
    const NodeId loop = loop_of_graph_[node.graph.index()];
    iteration_local = iteration_local && node.graph == body && loop.valid() &&
                      model.graph(body).parent_node == loop && node.type != "Data"sv &&
                      node.type != "NetOutput"sv && node.subgraphs.empty() && node.stream_id >= 0 &&
                      node.attached_stream_ids.empty() &&
                      (only_stream < 0 || node.stream_id == only_stream);
    only_stream = node.stream_id;
  }
  BigVector<int32_t>& loops = lt_.loop_store;
  for (int32_t x : touch) {
    const Node& node = model.node(NodeId(x));
    if (NodeId loop = loop_of_graph_[node.graph.index()]; loop.valid()) loops.push_back(loop.value);
    if (IsLoopNode(node) && !loop_of_graph_[node.graph.index()].valid()) loops.push_back(x);
  }
  const auto first = loops.begin() + static_cast<std::ptrdiff_t>(r.loop_begin);
  std::sort(first, loops.end());
  loops.erase(std::unique(first, loops.end()), loops.end());
  if (iteration_local) b.iteration_loop = model.graph(body).parent_node.value;
  return iteration_local;
}

// Uses and lifetime.
void LifetimeBuilder::SetLifetime(LogicalBuffer& b, const Ranges& r,
                                  const std::vector<int32_t>& touch, bool iteration_local) {
  const Model& model = model_;
  BigVector<NodeId>& uses = lt_.use_store;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  for (int32_t x : touch) {
    NodeId id(x);
    const NodeFacts& f = facts_[id.index()];
    if (NodeId loop(f.loop); loop.valid() && !iteration_local) {
      // The loop's nodes stand in for this touch, but not for the tasks of
      // a node with attached streams (they are no use of anything): as
      // outside loops, such a touch pins the buffer.
      if ((f.flags & kStreamed) && (f.flags & kAttached)) {
        b.pinned = lt_.pinned_store.emplace_back(
            StrCat("used by '", model.node(id).name, "' which has attached streams"));
      }
      for (NodeId y : LoopSpan(loop)) {
        const Node& yn = model.node(y);
        if (CarriesOnlyOrder(yn)) continue;  // no use (and orders nothing after it in H)
        if (yn.stream_id >= 0 && yn.attached_stream_ids.empty()) uses.push_back(y);
        lo = std::min(lo, lt_.position[y.index()]);
        hi = std::max(hi, lt_.position[y.index()]);
      }
      continue;
    }
    lo = std::min<int64_t>(lo, f.position);
    hi = std::max<int64_t>(hi, f.position);
    if ((f.flags & kNetOutput) && (f.flags & kRootGraph))
      b.live_to_end = true;  // graph outputs outlive the plan
    if (f.flags & kStreamed) {
      if (f.flags & kAttached) {
        b.pinned = lt_.pinned_store.emplace_back(
            StrCat("used by '", model.node(id).name, "' which has attached streams"));
      } else {
        uses.push_back(id);
      }
      continue;
    }
    // Streamless nodes run no task.
    if (f.flags & kNetOutput) continue;
    if (f.flags & kForwardsOnly) continue;
    if (IsPoolRegion(b.region)) {
      b.pinned = lt_.pinned_store.emplace_back(
          StrCat("used by '", model.node(id).name, "' which has no stream"));
    }
  }
  b.lower = lo == std::numeric_limits<int64_t>::max() ? 0 : lo;
  b.upper = hi + 1;
  if (b.live_to_end || !b.pinned.empty()) b.upper = lt_.num_steps;
  if (!b.pinned.empty()) b.lower = 0;
  if (b.upper <= b.lower) b.upper = b.lower + 1;
  // Unique by position (nodes in the order have distinct positions).
  const auto first = uses.begin() + static_cast<std::ptrdiff_t>(r.use_begin);
  std::sort(first, uses.end(), [&](NodeId x, NodeId y) {
    return std::make_pair(facts_[x.index()].position, x.value) <
           std::make_pair(facts_[y.index()].position, y.value);
  });
  uses.erase(std::unique(first, uses.end()), uses.end());
}

// 6. Deterministic order and the tensor index.
void LifetimeBuilder::SortBuffers() {
  auto region_rank = [](MemoryRegion r) {
    return r == MemoryRegion::kActivation  ? 0
           : r == MemoryRegion::kWorkspace ? 1
           : r == MemoryRegion::kInput     ? 2
                                           : 3;
  };
  // GroupBuffers makes the buffers region by region in the plan order of
  // their owners, which is usually the final order already (names are
  // unique: the key is a total order).
  auto before = [&](const LogicalBuffer& x, const LogicalBuffer& y) {
    const int rx = region_rank(x.region), ry = region_rank(y.region);
    if (rx != ry) return rx < ry;
    if (x.lower != y.lower) return x.lower < y.lower;
    return x.name < y.name;
  };
  bool sorted = true;
  for (size_t i = 1; i < buffers_.size() && sorted; ++i)
    sorted = before(buffers_[i - 1], buffers_[i]);
  if (sorted) {
    lt_.buffers = std::move(buffers_);
    lt_.buffer_of.Build(n_, lt_.buffers);
    std::sort(lt_.dynamic.begin(), lt_.dynamic.end());
    return;
  }
  // Indices by (region, lower) with two stable counting sorts (lower is a
  // plan position), then names within each tie (buffer names are unique).
  std::vector<int> order(buffers_.size());
  std::iota(order.begin(), order.end(), 0);
  StableSortByKey(order, [&](int i) { return buffers_[static_cast<size_t>(i)].lower; });
  StableSortByKey(order, [&](int i) {
    return static_cast<int64_t>(region_rank(buffers_[static_cast<size_t>(i)].region));
  });
  auto same_key = [&](int a, int b) {
    const LogicalBuffer &x = buffers_[static_cast<size_t>(a)],
                        &y = buffers_[static_cast<size_t>(b)];
    return region_rank(x.region) == region_rank(y.region) && x.lower == y.lower;
  };
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && same_key(order[i], order[j])) ++j;
    if (j - i > 1) {
      std::sort(order.begin() + static_cast<std::ptrdiff_t>(i),
                order.begin() + static_cast<std::ptrdiff_t>(j), [&](int a, int b) {
                  return buffers_[static_cast<size_t>(a)].name <
                         buffers_[static_cast<size_t>(b)].name;
                });
    }
    i = j;
  }
  // Permute in place, cycle by cycle: no second array of buffers.
  BigVector<int> dest(order.size());  // new position of each buffer
  for (size_t i = 0; i < order.size(); ++i)
    dest[static_cast<size_t>(order[i])] = static_cast<int>(i);
  order = {};
  for (size_t i = 0; i < dest.size(); ++i) {
    while (dest[i] != static_cast<int>(i)) {
      const size_t j = static_cast<size_t>(dest[i]);
      std::swap(buffers_[i], buffers_[j]);
      std::swap(dest[i], dest[j]);
    }
  }
  lt_.buffers = std::move(buffers_);
  lt_.buffer_of.Build(n_, lt_.buffers);
  std::sort(lt_.dynamic.begin(), lt_.dynamic.end());
}

}  // namespace npuplan::memory::lifetimes_internal
