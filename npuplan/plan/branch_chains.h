// Stream order when a plan holds every branch of an If/Case but a run takes
// one (docs/events.md, "Branches in the sweeps").
//
// The happens-before sweeps (the events optimisations, the verifier) give each
// slot a vector clock from its stream predecessor. With branches that is wrong
// twice over: a slot in the else branch does not follow the then branch's
// slots on its stream (they do not run with it), and a slot after the If
// follows whichever branch ran — only what every branch guarantees. So the
// chain state of a stream is
//   * inside branch b of X: the state before X, then b's own slots;
//   * after X: the element-wise minimum (meet) over X's branches of the state
//     each left (the state before X for a branch without a slot there, and
//     for "no branch seen" when a branch has no slot at all);
// and each branch's state covers the other branches' stretches of every
// stream it reaches (a clock entry says "every slot up to here that runs is
// done"; those never run with it).
// An edge into v from a slot u that need not run when v runs (u inside a
// branch that v is outside of) gives v nothing when u and v lie in sibling
// branches; otherwise the state of u's stream after the outermost such If
// closed, standing for a point past that If's last slot on the stream —
// where GE's dynamic executor records an owner's events (RecordSlots) and
// stream-activation's exit gate records a main-stream end. Callers that
// cannot say the gate will sit on u's own stream do not ExpectSender the
// edge, and it gives nothing.
//
// BranchChains keeps those states during one sweep in slot order. The caller
// owns the slots' clocks (ChainClocks); the states it makes are flat clocks
// of k entries of its own. A graph without If/Case branches has no state: the
// chain predecessor is the previous slot on the stream (active() is false).
// Slots of a branch are contiguous in the execution order (pre-order): a
// branch seen again after its If closed opens it again, which is sound (the
// closed state already holds every way through it).
#ifndef NPUPLAN_PLAN_BRANCH_CHAINS_H_
#define NPUPLAN_PLAN_BRANCH_CHAINS_H_

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "npuplan/ir/graph.h"
#include "npuplan/plan/execution_view.h"

namespace npuplan {

// Per node, the innermost If/Case branch that holds it (0: none); per branch
// scope its owner, parent scope and depth. Other subgraphs (loops, calls)
// belong to their owner's scope.
class BranchScopes {
 public:
  explicit BranchScopes(const Model& model);
  bool any() const { return scopes_.size() > 1; }
  // Scopes, 0 (outside every branch) included.
  size_t size() const { return scopes_.size(); }
  int32_t of(NodeId n) const { return any() ? node_scope_[n.index()] : 0; }
  NodeId owner(int32_t scope) const { return scopes_[scope].owner; }
  int32_t parent(int32_t scope) const { return scopes_[scope].parent; }
  int32_t depth(int32_t scope) const { return scopes_[scope].depth; }
  // How many branches `scope`'s owner has.
  int32_t branches(int32_t scope) const { return scopes_[scope].branches; }

 private:
  struct Scope {
    NodeId owner;
    int32_t parent = 0;
    int32_t depth = 0;
    int32_t branches = 0;
  };
  std::vector<Scope> scopes_;        // [0] = outside every branch
  std::vector<int32_t> node_scope_;  // by node, only when any()
};

// What the caller's sweep keeps per slot.
class ChainClocks {
 public:
  virtual ~ChainClocks() = default;
  // Copies the slot's clock (k entries, indexed as the states are).
  virtual void Read(int32_t slot, int32_t* out) = 0;
  // The chain's reader of the slot is done (see BranchChains, "References").
  virtual void Release(int32_t slot) = 0;
};

// References: while active(), the chain reads every slot once — its stream
// successor, or the state that replaces it at a branch boundary, or Finish —
// so the caller counts one chain reader for every slot with a stream
// (without branches only slots with a stream successor are read).
class BranchChains {
 public:
  // `view` gives the chain's streams and slot order; clocks have `k`
  // entries; `clock_entry` maps the view's stream to its clock entry (empty:
  // the same number). Clock positions are the view's unless Before says
  // otherwise; a stream's slots inside one If must sit on one clock entry
  // (a logical stream never changes physical stream inside a branch).
  BranchChains(const Model& model, const SyncView& view, size_t k,
               std::vector<int32_t> clock_entry = {});

  bool active() const { return scopes_.any(); }
  // The slots of a stream (in order) whose clocks the chain reads, once each:
  // all of them while active(), else all but the last ("References").
  std::span<const int32_t> ChainRead(std::span<const int32_t> stream_slots) const {
    return active() || stream_slots.empty() ? stream_slots
                                            : stream_slots.first(stream_slots.size() - 1);
  }

  // A clock source: a slot's clock, a flat clock, or nothing (all -1). A
  // sender's flat clock is the state after an If on a stream (`exit`: one id
  // per If and stream, so two edges through it are one), which stands for
  // a point at clock position `pos` there, past every slot of the If: a
  // clock knowing that position knows the whole state (in each run, every
  // slot up to there that ran is done, and the state is the last one's).
  struct Source {
    int32_t slot = -1;
    const int32_t* flat = nullptr;
    int32_t exit = -1;
    int32_t pos = -1;
    bool none() const { return slot < 0 && flat == nullptr; }
  };

  // Before slot v's clock: the state of v's stream as v sees it. A flat
  // source stays valid until After(v). `clock_pos`: v's position in its
  // clock entry (-1: its position in the view).
  Source Before(int32_t v, ChainClocks& clocks, int32_t clock_pos = -1);
  // v's clock is done: v heads its stream.
  void After(int32_t v);
  // Before the sweep: an edge u→v will ask Sender(u, v); an edge out of a
  // branch not expected gives v nothing.
  void ExpectSender(int32_t u, int32_t v);
  // The sender of an edge u→v as v sees it (valid during v's turn).
  Source Sender(int32_t u, int32_t v) const;
  // How u's runs relate to v's: u runs whenever v runs (same branch, or u
  // outside v's branches); u lies in a branch v is outside of; or u and v
  // lie in sibling branches (never run together).
  enum class Relation { kRunsWith, kOutOfBranch, kSibling };
  Relation Relate(int32_t u, int32_t v) const;
  // After the sweep: releases the last slot of each stream.
  void Finish(ChainClocks& clocks);

 private:
  using Flat = int32_t;               // index into flats_, -1 = all entries -1
  static constexpr Flat kNoEnd = -2;  // a branch whose end is not known yet
  struct Segment {  // clock positions of one branch's slots on a stream (lo > hi: none)
    int32_t lo = 0, hi = -1;
  };
  struct StreamEntry {
    int64_t stream;
    Flat saved;                     // the stream's state before the If
    int32_t start;                  // the clock position of its last slot before this branch
    std::vector<Flat> ends;         // by branch (in sweep order): its state at the branch's end
    std::vector<Segment> segments;  // by branch: its slots on the stream
  };
  struct Frame {
    int32_t branch;  // the scope of the branch being swept
    int32_t serial;
    std::vector<int32_t> seen;  // branch scopes swept so far; the last is `branch`'s ordinal
    int32_t ordinal = 0;        // of `branch` in `seen`
    std::vector<StreamEntry> streams;
  };
  struct Head {  // a stream's state: its last slot, or a flat clock
    int32_t slot = -1;
    Flat flat = -1;
  };

  Flat NewFlat();
  Flat CopyFlat(Flat f);
  void FreeFlat(Flat f);
  void MeetInto(Flat& acc, Flat f);  // acc = min(acc, f); -1 absorbs
  // The stream's state as a flat clock (its slot's clock read and released).
  Flat TakeHead(int64_t s, ChainClocks& clocks);
  void Enter(int32_t scope, ChainClocks& clocks);
  void Touch(int64_t s, int32_t pos, ChainClocks& clocks);
  void EndBranch(Frame& f, ChainClocks& clocks);
  void Switch(Frame& f, int32_t branch, ChainClocks& clocks);
  void Close(ChainClocks& clocks);
  // In a run of branch `ordinal` (-1: of none) no other branch's slot runs:
  // each entry of `state` that reaches a stretch of them on its stream
  // covers it (a clock says "every slot up to here that runs is done").
  void CoverOtherBranches(const Frame& f, int32_t ordinal, Flat& state);
  size_t Entry(int64_t s) const;  // the clock entry of the view's stream s
  int32_t ScopeOfSlot(int32_t slot) const { return scopes_.of(view_.node_of(slot)); }
  // The outermost branch holding u that does not hold v: {its owner, whether
  // v lies in a sibling branch}; owner invalid when u runs whenever v does.
  std::pair<NodeId, bool> Crossing(int32_t u, int32_t v) const;

  const SyncView& view_;
  const size_t k_;
  const std::vector<int32_t> clock_entry_;
  BranchScopes scopes_;
  std::vector<Head> head_;  // by stream
  // By stream: the serials of the frames that keep it, outermost first.
  std::vector<std::vector<int32_t>> saved_in_;
  std::vector<Frame> stack_;
  int32_t serial_ = 0;
  int32_t scope_ = 0;              // the scope the stack stands for
  std::vector<int32_t> chain_;     // Enter's scratch
  std::vector<int32_t> last_pos_;  // by stream: clock position of its last slot swept
  std::vector<std::vector<int32_t>> flats_;
  std::vector<Flat> free_flats_;
  // Exit states of (owner, stream) that some crossing edge reads: the
  // stream's state once the If closed (-1 before, or all entries -1).
  struct Exit {
    Flat flat = -1;
    int32_t pos = -1;
    int32_t id = -1;
  };
  std::map<std::pair<int32_t, int64_t>, Exit> exits_;
};

}  // namespace npuplan

#endif  // NPUPLAN_PLAN_BRANCH_CHAINS_H_
