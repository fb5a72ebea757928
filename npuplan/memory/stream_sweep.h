// Stream-aware sweep allocation: the memory planner's linear-size placement
// for graphs of any size, exact about cross-stream reuse without listing
// conflict pairs.
//
// Each buffer has a lifetime [lower, upper) in plan order, the set of streams
// its uses run on, and per stream t a *release time* R_t: the plan position
// from which every node of t is ordered after all of the buffer's uses (see
// StreamAwareReuse::SweepInput). A later buffer b may take a's bytes iff
// first_use_t(b) >= R_t(a) for every stream t that b uses — the
// happens-before condition.
//
// The sweep visits buffers by (lower, size descending, index). A dead buffer's
// bytes enter the free pool of stream t at its R_t; a buffer takes the
// smallest block (lowest offset on ties) free in the pools of all its streams,
// preferring among the few best fitting blocks one whose bytes are free in no
// pool of a stream it does not use and at most twice the best fit's length
// (bytes another stream could use now are left to it), else space at the top.
// Blocks come from the pool of b's first stream (released by b.lower); on b's
// other streams t each owner a of the bytes must have R_t(a) <= first_use_t(b)
// (released by the time b runs there). Taking bytes removes them from every
// pool; a later release only returns bytes its buffer still owns (R_t grows
// along reuse chains, so the newest owner's release comes last).
//
//   bytes ^   s1: a ──► (a dead, released to s1 at once; to s0 only when
//         |             s0 waits for a)
//         |   [ a ][ c ]   c on s1 reuses a's bytes right after a
//         |   [ b      ]   b on s0 may not: s0 never waits for a
//         +-------------> plan order
#ifndef NPUPLAN_MEMORY_STREAM_SWEEP_H_
#define NPUPLAN_MEMORY_STREAM_SWEEP_H_

#include <cstdint>
#include <vector>

#include "npuplan/verify/stream_aware_reuse.h"  // SweepBuffer, SweepBuffers

namespace npuplan::memory {

struct SweepResult {
  std::vector<int64_t> offsets;
  int64_t peak = 0;
};

// Places `buffers` (num_streams streams). O(n log n) plus the blocks split
// by releases. Deterministic.
SweepResult SweepStreamAware(const std::vector<SweepBuffer>& buffers, int num_streams);
// The same over flat tables (StreamAwareReuse::SweepInputTable), with
// buffers.k streams.
SweepResult SweepStreamAware(const SweepBuffers& buffers);

}  // namespace npuplan::memory

#endif  // NPUPLAN_MEMORY_STREAM_SWEEP_H_
