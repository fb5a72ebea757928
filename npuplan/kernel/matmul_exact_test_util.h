// Test-only: the exact minimum number of tile loads of a small tiled matmul
// over every order, by A* over states (bounds_test.cc, matmul_exact_test.cc).
//
// Model (docs/kernel.md, "Lower bounds", matmul reload bound): C[m x n] by
// k steps; the step kk of output tile C(i,j) reads A(i,kk) and B(kk,j), and the
// k steps of one output tile run in order (the accumulation chain). The A and
// B tiles share one cache of `cache` tiles; at most `open_c` output tiles are
// resident (L0C). A load brings one A or B tile into the cache (its first load
// or a reload). With `c_spills`, an output tile that has started may leave
// L0C and come back later; each return counts as one load (a C reload moves
// more than a tile reload, so counting it as one only lowers the optimum).
//
// Every plan of the generated matmul (L1 of X tiles, L0A/L0B of two tiles
// each, L0C of two output tiles, C spills allowed) is a solution of this model
// with cache = X + 4 and c_spills = true (a MOVE's L0A/L0B buffer holds the
// data of one A/B tile: counting those slots as cache slots for any tile only
// adds freedom), so that optimum is a lower bound on the plan's loads. With
// cache = X and c_spills = false every solution is a plan of the generated
// matmul (one L0A/L0B buffer at a time), so that optimum is an upper bound on
// the best plan's loads.
//
// Loading only right before the step that needs the tile and evicting dead
// tiles at once lose nothing (paging: delaying a load never costs more), so a
// transition runs one step and chooses the victims it needs. The heuristic
// (live tiles not resident, plus started output tiles not resident) is
// consistent, so the first goal popped is optimal.
#ifndef NPUPLAN_KERNEL_MATMUL_EXACT_TEST_UTIL_H_
#define NPUPLAN_KERNEL_MATMUL_EXACT_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace npuplan::kernel::testing {

struct TinyMatmul {
  int m = 3, n = 3, k = 3;
  int cache = 6;   // A and B tiles resident at once
  int open_c = 2;  // output tiles resident at once
  bool c_spills = false;
};

struct ExactLoads {
  int64_t loads = -1;  // -1: the state budget ran out
  int64_t states = 0;
  int64_t first_loads = 0;  // m*k + k*n
  int64_t reloads() const { return loads < 0 ? -1 : loads - first_loads; }
};

inline ExactLoads ExactMinLoads(const TinyMatmul& t, int64_t max_states = 20'000'000) {
  const int m = t.m, n = t.n, k = t.k, nc = m * n, nt = m * k + k * n;
  ExactLoads out;
  out.first_loads = nt;
  if (nt > 64 || nc > 32) return out;
  auto a_tile = [&](int i, int kk) { return i * k + kk; };
  auto b_tile = [&](int kk, int j) { return m * k + kk * n + j; };
  struct Key {
    uint64_t prog, mask;
    uint32_t cres;
    bool operator==(const Key& o) const {
      return prog == o.prog && mask == o.mask && cres == o.cres;
    }
  };
  struct Hash {
    size_t operator()(const Key& x) const {
      uint64_t h = x.prog * 0x9E3779B97F4A7C15ULL;
      h ^= (x.mask + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2));
      h ^= (uint64_t{x.cres} * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2));
      return static_cast<size_t>(h);
    }
  };
  std::vector<uint64_t> pw(nc + 1, 1);
  for (int c = 0; c < nc; ++c) pw[c + 1] = pw[c] * static_cast<uint64_t>(k + 1);
  auto decode = [&](uint64_t prog, std::vector<int>& p) {
    for (int c = 0; c < nc; ++c)
      p[c] = static_cast<int>(prog / pw[c] % static_cast<uint64_t>(k + 1));
  };
  // Tiles with a step still to run.
  auto live_mask = [&](const std::vector<int>& p) {
    uint64_t live = 0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int kk = p[i * n + j]; kk < k; ++kk) {
          live |= uint64_t{1} << a_tile(i, kk);
          live |= uint64_t{1} << b_tile(kk, j);
        }
      }
    }
    return live;
  };
  auto heuristic = [&](const std::vector<int>& p, uint64_t mask, uint32_t cres) {
    int h = __builtin_popcountll(live_mask(p) & ~mask);
    for (int c = 0; c < nc; ++c) {
      if (p[c] > 0 && p[c] < k && !(cres >> c & 1)) ++h;
    }
    return h;
  };
  // Symmetry: permuting the rows of A and C, the columns of B and C, and
  // (square cases) transposing map solutions to solutions of equal cost.
  // Canonical key: the least encoding over column permutations (and the
  // transpose), rows sorted by their own signature for each.
  std::vector<std::vector<int>> col_perms;
  {
    std::vector<int> s(n);
    for (int j = 0; j < n; ++j) s[j] = j;
    do {
      col_perms.push_back(s);
    } while (std::next_permutation(s.begin(), s.end()));
  }
  std::vector<int> cp(nc);
  std::vector<std::pair<uint64_t, int>> rows(m);
  auto encode = [&](const std::vector<int>& pp, uint64_t mask, uint32_t cres) {
    Key bestk{~uint64_t{0}, ~uint64_t{0}, ~0u};
    for (int tr = 0; tr < (m == n ? 2 : 1); ++tr) {
      // View: prog(i,j), A bit (i,kk), B bit (kk,j), cres(i,j) after the transpose.
      auto pv = [&](int i, int j) { return tr ? pp[j * n + i] : pp[i * n + j]; };
      auto cv = [&](int i, int j) {
        return tr ? (cres >> (j * n + i) & 1) : (cres >> (i * n + j) & 1);
      };
      auto av = [&](int i, int kk) {
        return tr ? (mask >> b_tile(kk, i) & 1) : (mask >> a_tile(i, kk) & 1);
      };
      auto bv = [&](int kk, int j) {
        return tr ? (mask >> a_tile(j, kk) & 1) : (mask >> b_tile(kk, j) & 1);
      };
      for (const std::vector<int>& s : col_perms) {
        for (int i = 0; i < m; ++i) {
          uint64_t sig = 0;
          for (int kk = 0; kk < k; ++kk) sig = sig << 1 | av(i, kk);
          for (int qq = 0; qq < n; ++qq)
            sig = sig << 4 | static_cast<uint64_t>(pv(i, s[qq]) << 1) | cv(i, s[qq]);
          rows[i] = {sig, i};
        }
        std::sort(rows.begin(), rows.end());
        Key x{0, 0, 0};
        for (int r = 0; r < m; ++r) {
          const int i = rows[r].second;
          for (int qq = 0; qq < n; ++qq) {
            x.prog += static_cast<uint64_t>(pv(i, s[qq])) * pw[r * n + qq];
            if (cv(i, s[qq])) x.cres |= 1u << (r * n + qq);
          }
          for (int kk = 0; kk < k; ++kk) {
            if (av(i, kk)) x.mask |= uint64_t{1} << a_tile(r, kk);
          }
        }
        for (int kk = 0; kk < k; ++kk) {
          for (int qq = 0; qq < n; ++qq) {
            if (bv(kk, s[qq])) x.mask |= uint64_t{1} << b_tile(kk, qq);
          }
        }
        if (std::tie(x.prog, x.mask, x.cres) < std::tie(bestk.prog, bestk.mask, bestk.cres))
          bestk = x;
      }
    }
    return bestk;
  };
  std::unordered_map<Key, int, Hash> best;
  std::vector<std::vector<Key>> bucket(4 * (nt + nc * k) + 8);
  auto push = [&](const Key& key, int g, int f) {
    auto [it, fresh] = best.emplace(key, g);
    if (!fresh) {
      if (it->second <= g) return;
      it->second = g;
    }
    if (f >= static_cast<int>(bucket.size())) bucket.resize(f + 1);
    bucket[f].push_back(key);
  };
  std::vector<int> p(nc), q(nc);
  push(Key{0, 0, 0}, 0, heuristic(p, 0, 0));
  std::vector<int> victims;
  for (size_t f = 0; f < bucket.size(); ++f) {
    while (!bucket[f].empty()) {
      const Key key = bucket[f].back();
      bucket[f].pop_back();
      decode(key.prog, p);
      const int g = best[key];
      if (g + heuristic(p, key.mask, key.cres) != static_cast<int>(f)) continue;  // stale
      if (key.prog == pw[nc] - 1) {
        out.loads = g;
        out.states = static_cast<int64_t>(best.size());
        return out;
      }
      if (static_cast<int64_t>(best.size()) > max_states) {
        out.states = static_cast<int64_t>(best.size());
        return out;
      }
      for (int c = 0; c < nc; ++c) {
        if (p[c] >= k) continue;
        const int i = c / n, j = c % n, kk = p[c];
        const uint64_t a = uint64_t{1} << a_tile(i, kk), b = uint64_t{1} << b_tile(kk, j);
        // Output tile: resident, or opened / brought back (maybe evicting one).
        std::vector<std::pair<uint32_t, int>> cstates;  // (cres before the step, cost)
        if (key.cres >> c & 1) {
          cstates.emplace_back(key.cres, 0);
        } else {
          if (kk > 0 && !t.c_spills) continue;
          const int cost = kk > 0 ? 1 : 0;
          if (__builtin_popcount(key.cres) < t.open_c) {
            cstates.emplace_back(key.cres | 1u << c, cost);
          } else if (t.c_spills) {
            for (int v = 0; v < nc; ++v) {
              if (key.cres >> v & 1) cstates.emplace_back((key.cres & ~(1u << v)) | 1u << c, cost);
            }
          }
        }
        const uint64_t need = a | b;
        const int missing = __builtin_popcountll(need & ~key.mask);
        const int over = __builtin_popcountll(key.mask) + missing - t.cache;
        // Victims: `over` live residents other than the two tiles.
        victims.clear();
        for (uint64_t x = key.mask & ~need; x != 0; x &= x - 1)
          victims.push_back(__builtin_ctzll(x));
        std::vector<uint64_t> evict_sets;
        if (over <= 0) {
          evict_sets.push_back(0);
        } else if (over == 1) {
          for (int v : victims) evict_sets.push_back(uint64_t{1} << v);
        } else if (over == 2) {
          for (size_t x = 0; x < victims.size(); ++x) {
            for (size_t y = x + 1; y < victims.size(); ++y) {
              evict_sets.push_back(uint64_t{1} << victims[x] | uint64_t{1} << victims[y]);
            }
          }
        }
        if (evict_sets.empty()) continue;  // cache smaller than two tiles
        q = p;
        ++q[c];
        const uint64_t live_after = live_mask(q);
        for (auto [cres, ccost] : cstates) {
          uint32_t cr = cres;
          if (q[c] == k) cr &= ~(1u << c);
          for (uint64_t ev : evict_sets) {
            const uint64_t mask = ((key.mask & ~ev) | need) & live_after;
            const int g2 = g + missing + ccost;
            push(encode(q, mask, cr), g2, g2 + heuristic(q, mask, cr));
          }
        }
      }
    }
  }
  out.states = static_cast<int64_t>(best.size());
  return out;
}

}  // namespace npuplan::kernel::testing

#endif  // NPUPLAN_KERNEL_MATMUL_EXACT_TEST_UTIL_H_
