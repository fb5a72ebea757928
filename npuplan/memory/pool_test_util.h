// Test helper: a random multi-stream plan with random tensor sizes, its
// tensor lifetimes and its pool buffers (stream_sweep_test, pool_planner_test).
#ifndef NPUPLAN_MEMORY_POOL_TEST_UTIL_H_
#define NPUPLAN_MEMORY_POOL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "npuplan/events/events_test_util.h"
#include "npuplan/verify/tensor_lifetimes.h"

namespace npuplan::memory::testing {

struct PoolCase {
  Plan plan;
  TensorLifetimes lt;
  std::vector<int> pool;
};

// Tensor sizes are 1..max_size elements, drawn from `size_seed`.
inline PoolCase RandomPoolCase(uint32_t seed, int nodes, int streams, uint32_t size_seed,
                               uint32_t max_size) {
  PoolCase c;
  c.plan = events::testing::RandomPlan(seed, nodes, streams);
  std::mt19937 rng(size_seed);
  for (size_t i = 0; i < c.plan.model.num_nodes(); ++i) {
    for (TensorDesc& t : c.plan.model.node(NodeId(static_cast<int32_t>(i))).outputs) {
      t.shape = {static_cast<int64_t>(1 + rng() % max_size)};
    }
  }
  auto lt = ComputeTensorLifetimes(c.plan.model, 512);
  EXPECT_TRUE(lt.ok()) << lt.status();
  if (lt.ok()) c.lt = std::move(lt).value();
  for (size_t b = 0; b < c.lt.buffers.size(); ++b) {
    if (c.lt.buffers[b].planned_in_pool()) c.pool.push_back(static_cast<int>(b));
  }
  return c;
}

}  // namespace npuplan::memory::testing

#endif  // NPUPLAN_MEMORY_POOL_TEST_UTIL_H_
