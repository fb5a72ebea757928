#include "npuplan/verify/branch_runs.h"

#include <algorithm>
#include <limits>

namespace npuplan::memory {

BranchRuns::BranchRuns(const Model& model) : scopes_(model) {
  lanes_of_scope_.resize(scopes_.size());
  std::vector<std::pair<int32_t, int32_t>> by_owner;  // (owner, scope)
  for (size_t s = 1; s < scopes_.size(); ++s) {
    by_owner.emplace_back(scopes_.owner(static_cast<int32_t>(s)).value, static_cast<int32_t>(s));
  }
  std::sort(by_owner.begin(), by_owner.end());
  sibling_at_.assign(scopes_.size(), 0);
  sibling_begin_.push_back(0);
  for (size_t i = 0; i < by_owner.size(); ++i) {
    if (i > 0 && by_owner[i].first != by_owner[i - 1].first) {
      sibling_begin_.push_back(static_cast<int32_t>(i));
    }
    siblings_.push_back(by_owner[i].second);
    sibling_at_[static_cast<size_t>(by_owner[i].second)] =
        static_cast<int32_t>(sibling_begin_.size() - 1);
  }
  sibling_begin_.push_back(static_cast<int32_t>(by_owner.size()));
  open_.push_back(0);
}

void BranchRuns::Enter(int32_t sv) {
  // Close what does not hold sv; then open sv's scopes below the last open
  // one. Each scope opens and closes once per contiguous visit.
  while (open_.back() != 0 && !Encloses(open_.back(), sv)) {
    const int32_t closed = open_.back();
    open_.pop_back();
    const int32_t parent = scopes_.parent(closed);
    if (parent == 0) continue;
    // A scope visited again (an order where its nodes are not contiguous)
    // hands on only its new nodes: each node counts once per scope.
    for (size_t k = 0; k < lanes_of_scope_[static_cast<size_t>(closed)].size(); ++k) {
      LaneEntry& e = lanes_of_scope_[static_cast<size_t>(closed)][k];
      if (e.stretch.count == e.handed) continue;
      const Stretch child = e.stretch;
      const int32_t fresh = child.count - e.handed;
      e.handed = child.count;
      Stretch& st = Get(parent, e.lane).stretch;
      st.lo = st.count == 0 ? child.lo : std::min(st.lo, child.lo);
      st.hi = std::max(st.hi, child.hi);
      st.count += fresh;
    }
  }
  const size_t at = open_.size();
  const int32_t top = open_.back();
  for (int32_t t = sv; t != top; t = scopes_.parent(t)) open_.push_back(t);
  std::reverse(open_.begin() + static_cast<std::ptrdiff_t>(at), open_.end());
}

bool BranchRuns::Encloses(int32_t outer, int32_t inner) const {
  const size_t d = static_cast<size_t>(scopes_.depth(outer));
  // The scope the sweep is in: its ancestors are the open path, one per depth.
  if (inner == open_.back()) return d < open_.size() && open_[d] == outer;
  while (scopes_.depth(inner) > scopes_.depth(outer)) inner = scopes_.parent(inner);
  return inner == outer;
}

int32_t BranchRuns::Escape(int32_t su, int32_t sv) const {
  int32_t s = su;
  while (s != 0 && !Encloses(scopes_.parent(s), sv)) s = scopes_.parent(s);
  if (s == 0) return -1;
  int32_t t = sv;
  while (scopes_.depth(t) > scopes_.depth(s)) t = scopes_.parent(t);
  if (t != 0 && scopes_.depth(t) == scopes_.depth(s) && scopes_.owner(t) == scopes_.owner(s))
    return -1;  // sibling branches never run together
  return s;
}

const BranchRuns::LaneEntry* BranchRuns::Find(int32_t scope, int32_t lane) const {
  for (const LaneEntry& e : lanes_of_scope_[static_cast<size_t>(scope)]) {
    if (e.lane == lane) return &e;
  }
  return nullptr;
}

BranchRuns::LaneEntry& BranchRuns::Get(int32_t scope, int32_t lane) {
  std::vector<LaneEntry>& list = lanes_of_scope_[static_cast<size_t>(scope)];
  for (LaneEntry& e : list) {
    if (e.lane == lane) return e;
  }
  list.push_back(LaneEntry{lane, -1, -1, {}});
  return list.back();
}

void BranchRuns::Placed(NodeId v, int32_t sv, int32_t lane, int32_t pos) {
  if (lane_path_.size() <= static_cast<size_t>(lane)) {
    lane_path_.resize(static_cast<size_t>(lane) + 1);
  }
  std::vector<Placement>& path = lane_path_[static_cast<size_t>(lane)];
  while (!path.empty() && !Encloses(path.back().scope, sv)) path.pop_back();
  if (!path.empty() && path.back().scope == sv) {
    path.back() = {sv, v, pos};
  } else {
    path.push_back({sv, v, pos});
  }
  if (sv == 0) return;
  LaneEntry& own = Get(sv, lane);
  own.last = v.value;
  own.last_pos = pos;
  Stretch& st = own.stretch;
  if (st.count == 0) st.lo = pos;
  st.hi = pos;
  ++st.count;
}

// The path's entries are nested scopes, the latest last: the first one from
// the end that holds sv is the latest placement that runs whenever sv does
// (a scope left off the path was closed, and holds no later node).
std::pair<NodeId, int32_t> BranchRuns::LastRunning(int32_t lane, int32_t sv) const {
  if (static_cast<size_t>(lane) >= lane_path_.size()) return {NodeId(), -1};
  const std::vector<Placement>& path = lane_path_[static_cast<size_t>(lane)];
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (scopes_.depth(it->scope) <= scopes_.depth(sv) && Encloses(it->scope, sv)) {
      return {it->node, it->pos};
    }
  }
  return {NodeId(), -1};
}

void BranchRuns::BeginNode(size_t width) {
  width_ = width;
  used_ = 0;
}

int32_t* BranchRuns::Group(int32_t branch_scope) {
  for (size_t g = 0; g < used_; ++g) {
    if (group_scope_[g] == branch_scope) return group_clock_[g].data();
  }
  if (used_ == group_scope_.size()) {
    group_scope_.push_back(0);
    group_clock_.emplace_back();
  }
  group_scope_[used_] = branch_scope;
  group_clock_[used_].assign(width_, -1);
  return group_clock_[used_++].data();
}

void BranchRuns::Cover(int32_t* state, std::span<const int32_t> branches, int32_t taken) const {
  std::vector<Stretch> others;
  for (size_t j = 0; j < width_; ++j) {
    others.clear();
    for (int32_t s : branches) {
      if (s == taken) continue;
      const LaneEntry* e = Find(s, static_cast<int32_t>(j));
      // A stretch with another node inside is not the other branch's alone.
      if (e != nullptr && e->stretch.count > 0 && e->stretch.whole()) others.push_back(e->stretch);
    }
    std::sort(others.begin(), others.end(),
              [](const Stretch& a, const Stretch& b) { return a.lo < b.lo; });
    for (const Stretch& st : others) {
      if (state[j] >= st.lo - 1) state[j] = std::max(state[j], st.hi);
    }
  }
}

void BranchRuns::Fold(int32_t* cv) {
  if (used_ == 0) return;
  // Groups by If (owner), each If once.
  std::vector<std::pair<int32_t, int32_t>> order;  // (owner, group)
  order.reserve(used_);
  for (size_t g = 0; g < used_; ++g) {
    order.emplace_back(scopes_.owner(group_scope_[g]).value, static_cast<int32_t>(g));
  }
  std::sort(order.begin(), order.end());
  out_.assign(cv, cv + width_);
  for (size_t i = 0; i < order.size();) {
    const std::span<const int32_t> branches =
        Siblings(group_scope_[static_cast<size_t>(order[i].second)]);
    meet_.assign(width_, std::numeric_limits<int32_t>::max());
    auto meet_run = [&](int32_t taken, const int32_t* group) {
      state_.assign(cv, cv + width_);
      if (group != nullptr) {
        for (size_t j = 0; j < width_; ++j) state_[j] = std::max(state_[j], group[j]);
      }
      Cover(state_.data(), branches, taken);
      for (size_t j = 0; j < width_; ++j) meet_[j] = std::min(meet_[j], state_[j]);
    };
    for (int32_t s : branches) {
      const int32_t* group = nullptr;
      for (size_t k = i; k < order.size() && order[k].first == order[i].first; ++k) {
        const size_t g = static_cast<size_t>(order[k].second);
        if (group_scope_[g] == s) group = group_clock_[g].data();
      }
      meet_run(s, group);
    }
    // A branch without nodes (no scope) is a run that ran none of them.
    if (static_cast<int32_t>(branches.size()) < scopes_.branches(branches.front())) {
      meet_run(-1, nullptr);
    }
    for (size_t j = 0; j < width_; ++j) out_[j] = std::max(out_[j], meet_[j]);
    const int32_t owner = order[i].first;
    while (i < order.size() && order[i].first == owner) ++i;
  }
  std::copy(out_.begin(), out_.end(), cv);
  used_ = 0;
}

}  // namespace npuplan::memory
