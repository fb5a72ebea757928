// ClockPool (chunks shared copy-on-write) against flat clocks of k entries,
// the form the sweeps used before: random copies, joins, sets, releases and
// exchanges with flat clocks (BranchChains' states), and whole happens-before sweeps over random
// slot graphs against reachability.
#include "npuplan/verify/clock_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace npuplan::verify {
namespace {

TEST(ClockPoolTest, ReadsAsFlatClocksUnderRandomOperations) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    const size_t k = 1 + rng() % 100;  // within one chunk, and across several
    const int32_t slots = 60;
    ClockPool pool(slots, k);
    std::vector<std::vector<int32_t>> flat(slots);
    std::vector<bool> live(slots, false);
    auto pick_live = [&]() -> int32_t {
      std::vector<int32_t> l;
      for (int32_t s = 0; s < slots; ++s) {
        if (live[s]) l.push_back(s);
      }
      return l.empty() ? -1 : l[rng() % l.size()];
    };
    for (int op = 0; op < 3000; ++op) {
      const int32_t s = static_cast<int32_t>(rng() % slots);
      auto random_flat = [&]() {
        std::vector<int32_t> c(k);
        for (int32_t& v : c) v = static_cast<int32_t>(rng() % 50) - 1;
        return c;
      };
      switch (rng() % 7) {
        case 0:  // a fresh clock, or a copy of a live one
          if (live[s]) break;
          if (const int32_t f = pick_live(); f >= 0 && rng() % 4 != 0) {
            // Without another reader counted, s may take f's clock over.
            if (rng() % 2 == 0) ++pool.refs(f);
            pool.CopyOf(s, f);
            flat[s] = flat[f];
            if (!pool.live(f)) live[f] = false;
          } else {
            pool.Fresh(s);
            flat[s].assign(k, -1);
          }
          ++pool.refs(s);
          live[s] = true;
          break;
        case 1:
          if (const int32_t f = pick_live(); f >= 0 && live[s] && f != s) {
            pool.Join(s, f);
            for (size_t x = 0; x < k; ++x) flat[s][x] = std::max(flat[s][x], flat[f][x]);
          }
          break;
        case 2:
        case 3:
          if (live[s]) {
            const size_t x = rng() % k;
            const int32_t v = static_cast<int32_t>(rng() % 50) - 1;
            pool.Set(s, x, v);
            flat[s][x] = v;
          }
          break;
        case 4:
          if (live[s]) {
            pool.Unref(s);
            live[s] = pool.live(s);
          }
          break;
        case 5:  // a clock from a flat one
          if (live[s]) break;
          flat[s] = random_flat();
          pool.FromFlat(s, flat[s].data());
          ++pool.refs(s);
          live[s] = true;
          break;
        case 6:
          if (live[s]) {
            const std::vector<int32_t> other = random_flat();
            pool.JoinFlat(s, other.data());
            for (size_t x = 0; x < k; ++x) flat[s][x] = std::max(flat[s][x], other[x]);
          }
          break;
      }
      std::vector<int32_t> read(k);
      for (int32_t t = 0; t < slots; ++t) {
        ASSERT_EQ(pool.live(t), live[t]);
        if (!live[t]) continue;
        for (size_t x = 0; x < k; ++x) ASSERT_EQ(pool.Get(t, x), flat[t][x]) << "op " << op;
        pool.ReadInto(t, read.data());
        ASSERT_EQ(read, flat[t]) << "op " << op;
      }
    }
  }
}

// Slots in execution order 0..n-1 on random streams, random forward edges:
// the sweep's clock answers "a happens before b" exactly as reachability
// over stream order and edges does.
TEST(ClockPoolTest, SweepMatchesReachabilityOnRandomSlotGraphs) {
  std::mt19937 rng(11);
  for (int round = 0; round < 60; ++round) {
    const int32_t n = 20 + static_cast<int32_t>(rng() % 120);
    const size_t k = 1 + rng() % 70;
    std::vector<int32_t> stream(n), pos(n), pred(n, -1);
    std::vector<int32_t> last(k, -1), count(k, 0);
    for (int32_t v = 0; v < n; ++v) {
      stream[v] = static_cast<int32_t>(rng() % k);
      pos[v] = count[stream[v]]++;
      pred[v] = last[stream[v]];
      last[stream[v]] = v;
    }
    std::vector<std::vector<int32_t>> in(n);
    const int32_t edges = static_cast<int32_t>(rng() % (2 * n));
    for (int32_t e = 0; e < edges; ++e) {
      const int32_t a = static_cast<int32_t>(rng() % n), b = static_cast<int32_t>(rng() % n);
      if (a < b) in[b].push_back(a);
    }
    // reach[a][b]: a path a → b (a == b included).
    std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
    for (int32_t b = 0; b < n; ++b) {
      reach[b][b] = 1;
      std::vector<int32_t> from = in[b];
      if (pred[b] >= 0) from.push_back(pred[b]);
      for (int32_t a : from) {
        for (int32_t x = 0; x < n; ++x) reach[x][b] |= reach[x][a];
      }
    }
    ClockPool pool(n, k);
    for (int32_t v = 0; v < n; ++v) {
      if (pred[v] >= 0) ++pool.refs(pred[v]);
      for (int32_t a : in[v]) ++pool.refs(a);
    }
    for (int32_t v = 0; v < n; ++v) {
      if (pred[v] >= 0) {
        pool.CopyOf(v, pred[v]);
      } else {
        pool.Fresh(v);
      }
      for (int32_t a : in[v]) pool.Join(v, a);
      pool.Set(v, static_cast<size_t>(stream[v]), pos[v]);
      for (int32_t a = 0; a <= v; ++a) {
        const bool ordered = pool.Get(v, static_cast<size_t>(stream[a])) >= pos[a];
        ASSERT_EQ(ordered, reach[a][v] != 0) << "round " << round << ": " << a << " -> " << v;
      }
      for (int32_t a : in[v]) pool.Unref(a);
      if (pool.refs(v) == 0) {
        ++pool.refs(v);
        pool.Unref(v);
      }
    }
  }
}

}  // namespace
}  // namespace npuplan::verify
