// One run takes one branch (docs/memory.md, "A run takes one branch"): what
// the happens-before sweep (happens_before.cc) needs so that a node's clock
// holds only what is true in every run that runs the node.
//
// A plan holds every branch of an If/Case; a run takes one. A clock entry
// says "every node up to this lane position *that runs* is done", so in a
// run of branch b the other branches' stretches of a lane are covered for
// free (they never run with b), but nothing b's run did not order may be
// claimed. For a node v the sweep therefore splits v's predecessors:
//   * u runs whenever v runs (u's branch scope encloses v's): joined as is;
//   * u lies in branch S of an If X that v is outside of (u directly in S):
//     u counts only in runs of S. Per branch S of X the sweep joins v's other
//     predecessors (A) with S's group, covers the other branches' stretches
//     (Cover), and v gets the element-wise minimum over X's branches — a
//     branch with no predecessor of v gives cover(A) — joined over the Ifs;
//   * u in a sibling branch of v's, or nested deeper in X's branch: nothing.
// The lane predecessor p of v when p need not run with v: the last node q of
// the lane that does (LastRunning) plus p's position, when q is a node of
// v's own stream (its queue orders q and every node after it up to p that
// runs before v; when the stream took the lane at a node that need not run,
// v continues the stream on another lane instead); and per branch of p's If
// the last node of v's stream on the lane directly in it, as that branch's
// group. Each clock is then lowered to the minimum of its lane's later
// clocks, so that clocks grow along a lane (HappensBefore::LowerToLaterClocks).
//
// Decision keywords: none (H logs nothing; the memory passes log its use).
#ifndef NPUPLAN_VERIFY_BRANCH_RUNS_H_
#define NPUPLAN_VERIFY_BRANCH_RUNS_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/plan/branch_chains.h"

namespace npuplan::memory {

class BranchRuns {
 public:
  explicit BranchRuns(const Model& model);

  bool active() const { return scopes_.any(); }
  int32_t scope(NodeId n) const { return scopes_.of(n); }
  // A node in scope `outer` runs whenever one in scope `inner` runs.
  bool Encloses(int32_t outer, int32_t inner) const;
  // For u (scope su) that need not run with v (scope sv): the outermost branch
  // scope holding u and not v, or -1 when v lies in a sibling branch of it
  // (u then gives v nothing; so does a u deeper than the answer).
  int32_t Escape(int32_t su, int32_t sv) const;

  // The sweep reaches a node of scope sv: the branch scopes it has left
  // are closed (a branch's nodes are contiguous in the plan order), their
  // stretches handed to the enclosing scope.
  void Enter(int32_t sv);
  // The sweep gave node v (scope sv) position `pos` on `lane`.
  void Placed(NodeId v, int32_t sv, int32_t lane, int32_t pos);
  // The last node placed on `lane` that runs whenever scope sv runs, with
  // its position ({invalid, -1}: none).
  std::pair<NodeId, int32_t> LastRunning(int32_t lane, int32_t sv) const;

  // Per node of the sweep: its branch groups, then Fold.
  void BeginNode(size_t width);
  // The group clock of branch scope S (all -1 when new), `width` entries.
  int32_t* Group(int32_t branch_scope);
  // The lane predecessor p of a node left branch S0 (Escape's answer) of
  // an If: each branch of that If with a node directly in it on `lane`
  // after position `after` gives its last such node to its group.
  template <typename JoinFn>
  void LaneExits(int32_t branch_scope, int32_t lane, int32_t after, JoinFn&& join) {
    for (int32_t s : Siblings(branch_scope)) {
      const LaneEntry* e = Find(s, lane);
      if (e != nullptr && e->last_pos > after) join(Group(s), NodeId(e->last));
    }
  }
  bool has_groups() const { return used_ > 0; }
  // cv holds A (v's predecessors that run with it): cv = join over the Ifs
  // of v's groups of the minimum over each If's branches of Cover(join(A, group)).
  void Fold(int32_t* cv);

 private:
  struct Stretch {  // positions of one branch's nodes on a lane
    int32_t lo = 0, hi = -1, count = 0;
    bool whole() const { return count == hi - lo + 1; }
  };
  // What a branch scope left on one lane: its last node directly in the
  // scope (-1 none) and the stretch of its nodes (at any depth once the
  // scopes inside it closed).
  struct LaneEntry {
    int32_t lane = 0;
    int32_t last = -1, last_pos = -1;
    Stretch stretch;
    int32_t handed = 0;  // of stretch.count, given to the enclosing scope already
  };
  // A scope uses few lanes: a short list per scope, searched in order.
  const LaneEntry* Find(int32_t scope, int32_t lane) const;
  LaneEntry& Get(int32_t scope, int32_t lane);
  // The branch scopes of `scope`'s If, itself included, by scope.
  std::span<const int32_t> Siblings(int32_t scope) const {
    const size_t at = static_cast<size_t>(sibling_at_[static_cast<size_t>(scope)]);
    return {siblings_.data() + sibling_begin_[at], siblings_.data() + sibling_begin_[at + 1]};
  }
  // In a run of branch `taken` (-1: none of them) of the If whose branches
  // are `branches`, the other branches' whole stretches that `state`
  // reaches are covered.
  void Cover(int32_t* state, std::span<const int32_t> branches, int32_t taken) const;

  BranchScopes scopes_;
  // Branch scopes grouped by If (siblings_[sibling_begin_[i] ..
  // sibling_begin_[i + 1]) for the i-th If); per scope its If's i.
  std::vector<int32_t> siblings_, sibling_begin_, sibling_at_;
  std::vector<std::vector<LaneEntry>> lanes_of_scope_;  // by branch scope
  // Per lane: the last node placed there of each scope on the path from
  // the root to the last node's scope (a chain, outermost first).
  struct Placement {
    int32_t scope = 0;
    NodeId node;
    int32_t pos = -1;
  };
  std::vector<std::vector<Placement>> lane_path_;
  std::vector<int32_t> open_;  // the scopes the sweep is in, outermost first (root included)
  size_t width_ = 0;
  size_t used_ = 0;
  std::vector<int32_t> group_scope_;               // per group
  std::vector<std::vector<int32_t>> group_clock_;  // per group, width_ entries
  std::vector<int32_t> state_, meet_, out_;        // Fold's scratch
};

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_BRANCH_RUNS_H_
