// CriticalPathStreams' list schedulers: earliest-start placement in a fixed
// order (Schedule), bottom-level orders (PriorityOrder) and dynamic-level
// scheduling of order and streams together (DynamicLevelSchedule). The
// per-graph choice among them is in critical_path_streams.cc.
#include <algorithm>
#include <limits>
#include <map>
#include <queue>

#include "npuplan/stream/critical_path_streams.h"

namespace npuplan::stream {
namespace {

// While scheduling, serial-label streams get indices from kSerialBase up; at
// the end they are numbered after the streams the schedule opened.
constexpr int32_t kSerialBase = 1 << 20;
void NumberSerialStreamsLast(std::vector<int32_t>& stream, int32_t used) {
  for (int32_t& s : stream) {
    if (s >= kSerialBase) s = used + (s - kSerialBase);
  }
}

// Longest cost path from each node to a sink (its own cost included), plus
// `edge` per edge on it.
std::vector<int64_t> BottomLevels(const StreamDag& d, int64_t edge) {
  const size_t n = d.size();
  std::vector<int64_t> bottom(n, 0);
  for (size_t v = n; v-- > 0;) {
    int64_t b = 0;
    for (uint32_t e = d.succ_offsets[v]; e < d.succ_offsets[v + 1]; ++e) b = std::max(b, bottom[d.succ[e]] + edge);
    bottom[v] = b + d.cost[v];
  }
  return bottom;
}

}  // namespace

std::vector<int32_t> CriticalPathStreams::Schedule(const StreamDag& d, int64_t limit, int64_t lat,
                                                   const std::vector<uint8_t>* pinned, bool chain) {
  const size_t n = d.size();
  limit = std::max<int64_t>(limit, 1);
  const std::vector<int64_t> bottom = BottomLevels(d, 0);
  // Chain variant: the nodes of one longest path (zero slack) keep stream 0,
  // the rest never go there while another stream can take them.
  std::vector<uint8_t> on_chain;
  if (chain && limit > 1) {
    std::vector<int64_t> top(n, 0);
    int64_t cp = 0;
    for (size_t v = 0; v < n; ++v) {
      for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
        top[v] = std::max(top[v], top[d.pred[e]] + d.cost[d.pred[e]]);
      }
      cp = std::max(cp, top[v] + bottom[v]);
    }
    on_chain.assign(n, 0);
    for (size_t v = 0; v < n; ++v) on_chain[v] = top[v] + bottom[v] == cp;
  }
  constexpr int64_t kNeg = std::numeric_limits<int64_t>::min() / 4;
  std::vector<int32_t> stream(n, -1);
  std::vector<int64_t> finish(n, 0);
  std::vector<int64_t> free_at;          // schedule streams
  std::vector<int64_t> on_stream;        // scratch: max producer finish per stream
  if (pinned != nullptr || !on_chain.empty()) free_at.push_back(0);  // index 0: the main stream / the chain
  std::map<std::string, int32_t> serial;  // label → serial slot (index >= kSerialBase)
  std::vector<int64_t> serial_free;
  for (size_t v = 0; v < n; ++v) {
    // Producers: per-stream max finish, best two over distinct streams, no-stream max.
    on_stream.assign(free_at.size(), kNeg);
    int64_t none = 0, b1 = kNeg, b2 = kNeg;
    int32_t b1s = -1, crit_s = -1;
    int64_t crit_b = -1;
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
      int32_t p = d.pred[e];
      if (d.constant[p]) continue;  // ready before the model starts: no event
      int32_t t = stream[p];
      if (t < 0 || t >= kSerialBase) {
        if (t < 0) {
          none = std::max(none, finish[p]);
        } else {
          // Serial streams behave like other streams for latency.
          if (finish[p] + lat > none) none = std::max(none, finish[p] + lat);
        }
        continue;
      }
      on_stream[t] = std::max(on_stream[t], finish[p]);
      if (bottom[p] > crit_b || (bottom[p] == crit_b && t < crit_s)) crit_b = bottom[p], crit_s = t;
    }
    for (size_t t = 0; t < on_stream.size(); ++t) {
      int64_t f = on_stream[t];
      if (f == kNeg) continue;
      if (f > b1) {
        b2 = b1;
        b1 = f, b1s = static_cast<int32_t>(t);
      } else if (f > b2) {
        b2 = f;
      }
    }
    auto ready_on = [&](int32_t s) {
      int64_t r = none;
      if (s >= 0 && s < static_cast<int32_t>(on_stream.size()) && on_stream[s] != kNeg) r = std::max(r, on_stream[s]);
      int64_t other = (s == b1s) ? b2 : b1;
      if (other != kNeg) r = std::max(r, other + lat);
      return r;
    };
    if (pinned != nullptr && (*pinned)[v]) {
      const int64_t start = std::max(free_at[0], ready_on(0));
      stream[v] = 0;
      finish[v] = start + d.cost[v];
      free_at[0] = finish[v];
      continue;
    }
    if (!d.writable[v]) {
      stream[v] = -1;
      int64_t r = none;
      if (b1 != kNeg) r = std::max(r, b1);
      finish[v] = r + d.cost[v];
      continue;
    }
    if (!d.serial[v].empty()) {
      auto [it, fresh] = serial.emplace(d.serial[v], static_cast<int32_t>(serial.size()));
      if (fresh) serial_free.push_back(0);
      int32_t k = it->second;
      int64_t start = std::max(serial_free[k], ready_on(-1));
      stream[v] = kSerialBase + k;
      finish[v] = start + d.cost[v];
      serial_free[k] = finish[v];
      continue;
    }
    int32_t best = -1;
    int64_t best_start = std::numeric_limits<int64_t>::max();
    if (!on_chain.empty() && on_chain[v]) {
      best = 0, best_start = std::max(free_at[0], ready_on(0));
    } else {
      for (int32_t s = on_chain.empty() ? 0 : 1; s < static_cast<int32_t>(free_at.size()); ++s) {
        int64_t start = std::max(free_at[s], ready_on(s));
        if (start < best_start || (start == best_start && s == crit_s && best != crit_s)) best = s, best_start = start;
      }
    }
    if (static_cast<int64_t>(free_at.size()) < limit && (on_chain.empty() || !on_chain[v])) {
      int64_t start = ready_on(-1);
      if (start < best_start || best < 0) {
        best = static_cast<int32_t>(free_at.size());
        best_start = start;
        free_at.push_back(0);
        on_stream.push_back(kNeg);
      }
    }
    stream[v] = best;
    finish[v] = best_start + d.cost[v];
    free_at[best] = finish[v];
  }
  NumberSerialStreamsLast(stream, static_cast<int32_t>(free_at.size()));
  return stream;
}

std::vector<int32_t> CriticalPathStreams::PriorityOrder(const StreamDag& d, int64_t edge) {
  const size_t n = d.size();
  const std::vector<int64_t> bottom = BottomLevels(d, edge);
  // Kahn's algorithm with the ready node of the highest bottom level first
  // (ties: the earlier position in the current order). Constants go first:
  // once a stream has waited for any later node of theirs, the events from
  // them are implied and the events stage drops them, as the estimate assumes.
  std::vector<uint32_t> waiting(n);
  for (size_t v = 0; v < n; ++v) waiting[v] = d.pred_offsets[v + 1] - d.pred_offsets[v];
  auto lower = [&](int32_t a, int32_t b) {
    if (d.constant[a] != d.constant[b]) return d.constant[a] < d.constant[b];
    return bottom[a] != bottom[b] ? bottom[a] < bottom[b] : a > b;
  };
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(lower)> ready(lower);
  for (size_t v = 0; v < n; ++v) {
    if (waiting[v] == 0) ready.push(static_cast<int32_t>(v));
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (uint32_t e = d.succ_offsets[v]; e < d.succ_offsets[v + 1]; ++e) {
      if (--waiting[d.succ[e]] == 0) ready.push(d.succ[e]);
    }
  }
  return order;
}

std::vector<int32_t> CriticalPathStreams::DynamicLevelSchedule(const StreamDag& d, int64_t limit, int64_t lat,
                                                               const std::vector<uint8_t>* pinned,
                                                               std::vector<int32_t>& order) {
  const size_t n = d.size();
  limit = std::max<int64_t>(limit, 1);
  const std::vector<int64_t> bottom = BottomLevels(d, 0);
  std::vector<int32_t> stream(n, -1);
  std::vector<int64_t> finish(n, 0);
  std::vector<int64_t> free_at(1, 0);  // stream 0 (the main stream when pinned) from the start
  std::map<std::string, int32_t> serial;
  std::vector<int64_t> serial_free;
  order.clear();
  order.reserve(n);
  std::vector<uint32_t> waiting(n);
  for (size_t v = 0; v < n; ++v) waiting[v] = d.pred_offsets[v + 1] - d.pred_offsets[v];
  // Ready nodes: the kWindow of highest bottom level are considered at each
  // step (`ready`), the rest wait in a heap, highest first.
  constexpr size_t kWindow = 64;
  auto higher = [&](int32_t a, int32_t b) { return bottom[a] != bottom[b] ? bottom[a] > bottom[b] : a < b; };
  auto lower = [&](int32_t a, int32_t b) { return higher(b, a); };
  std::vector<int32_t> ready;
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(lower)> overflow(lower);
  auto make_ready = [&](int32_t v) {
    if (ready.size() < kWindow) {
      ready.push_back(v);
      return;
    }
    size_t lowest = 0;
    for (size_t i = 1; i < ready.size(); ++i) {
      if (higher(ready[lowest], ready[i])) lowest = i;
    }
    if (higher(v, ready[lowest])) std::swap(v, ready[lowest]);
    overflow.push(v);
  };
  auto done = [&](int32_t v) {
    order.push_back(v);
    for (uint32_t e = d.succ_offsets[v]; e < d.succ_offsets[v + 1]; ++e) {
      if (--waiting[d.succ[e]] == 0) make_ready(d.succ[e]);
    }
  };
  for (size_t v = 0; v < n; ++v) {
    if (waiting[v] == 0 && !(d.constant[v] && d.serial[v].empty())) make_ready(static_cast<int32_t>(v));
  }
  // Constants first, in their order (see PriorityOrder); they cost nothing.
  for (size_t v = 0; v < n; ++v) {
    if (!d.constant[v] || !d.serial[v].empty() || waiting[v] != 0) continue;
    stream[v] = (pinned != nullptr && (*pinned)[v]) || d.writable[v] ? 0 : -1;
    done(static_cast<int32_t>(v));
  }
  // Ready time of v on stream s (s < 0: no stream; readiness only).
  auto ready_on = [&](int32_t v, int32_t s) {
    int64_t r = 0;
    for (uint32_t e = d.pred_offsets[v]; e < d.pred_offsets[v + 1]; ++e) {
      const int32_t p = d.pred[e];
      if (d.constant[p]) continue;
      const int32_t t = stream[p];
      r = std::max(r, finish[p] + (t >= 0 && s >= 0 && t != s ? lat : 0));
    }
    return r;
  };
  while (!ready.empty()) {
    // Dynamic level: bottom level minus the earliest start, best (node, stream).
    int64_t best_dl = std::numeric_limits<int64_t>::min(), best_start = 0;
    size_t best_i = 0;
    int32_t best_s = -1;
    for (size_t i = 0; i < ready.size(); ++i) {
      const int32_t v = ready[i];
      auto consider = [&](int32_t s, int64_t start) {
        const int64_t dl = bottom[v] - start;
        if (dl > best_dl || (dl == best_dl && v != ready[best_i] && higher(v, ready[best_i]))) {
          best_dl = dl, best_start = start, best_i = i, best_s = s;
        }
      };
      if (pinned != nullptr && (*pinned)[v]) {
        consider(0, std::max(free_at[0], ready_on(v, 0)));
      } else if (!d.writable[v]) {
        consider(-1, ready_on(v, -1));
      } else if (!d.serial[v].empty()) {
        auto it = serial.find(d.serial[v]);
        const int32_t k = it == serial.end() ? static_cast<int32_t>(serial.size()) : it->second;
        const int64_t free_k = it == serial.end() ? 0 : serial_free[k];
        consider(kSerialBase + k, std::max(free_k, ready_on(v, kSerialBase + k)));
      } else {
        for (int32_t s = 0; s < static_cast<int32_t>(free_at.size()); ++s) {
          consider(s, std::max(free_at[s], ready_on(v, s)));
        }
        if (static_cast<int64_t>(free_at.size()) < limit) {
          consider(static_cast<int32_t>(free_at.size()), ready_on(v, static_cast<int32_t>(free_at.size())));
        }
      }
    }
    const int32_t v = ready[best_i];
    ready[best_i] = ready.back();
    ready.pop_back();
    if (!overflow.empty()) {
      ready.push_back(overflow.top());
      overflow.pop();
    }
    stream[v] = best_s;
    finish[v] = best_start + d.cost[v];
    if (best_s >= kSerialBase) {
      const int32_t k = best_s - kSerialBase;
      if (k == static_cast<int32_t>(serial.size())) serial.emplace(d.serial[v], k), serial_free.push_back(0);
      serial_free[k] = finish[v];
    } else if (best_s >= 0) {
      if (best_s == static_cast<int32_t>(free_at.size())) free_at.push_back(0);
      free_at[best_s] = finish[v];
    }
    done(v);
  }
  NumberSerialStreamsLast(stream, static_cast<int32_t>(free_at.size()));
  return stream;
}

}  // namespace npuplan::stream
