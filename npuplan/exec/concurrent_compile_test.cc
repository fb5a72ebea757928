// SPEC R5, compile half: several graphs compiled at once from several threads
// give the same bytes (plan JSON and decision log) as serial compiles. Run
// under ThreadSanitizer in CI (NPUPLAN_SANITIZE=thread).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "npuplan/compiler/compiler.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

// The observable result of one compile: plan bytes and remarks, or the error.
struct Outcome {
  std::string plan;
  std::string remarks;
  std::string error;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

std::vector<GeneratorOptions> Graphs() {
  std::vector<GeneratorOptions> out;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    GeneratorOptions o;
    o.seed = seed;
    o.layers = 2 + static_cast<int64_t>(seed % 3);
    o.hidden = 256;
    o.seq = 64;
    o.control_edge_prob = 0.2;
    o.stream_label_prob = seed % 2 == 0 ? 0.3 : 0.0;
    o.if_every = seed == 3 ? 2 : 0;
    o.while_every = seed == 5 ? 2 : 0;
    o.dynamic_prob = seed == 4 ? 0.5 : 0.0;
    out.push_back(o);
  }
  return out;
}

Outcome CompileOne(const GeneratorOptions& g, bool single_stream) {
  Outcome out;
  absl::StatusOr<Model> model = GenerateTransformer(g);
  if (!model.ok()) {
    out.error = std::string(model.status().message());
    return out;
  }
  CompileConfig config;
  config.read_environment = false;
  if (single_stream) config.option_overrides["ge.enableSingleStream"] = "true";
  DecisionLog log(/*keep=*/true);
  Statistics stats;
  absl::StatusOr<Plan> plan = Compile(std::move(model).value(), config, log, stats);
  if (!plan.ok()) {
    out.error = std::string(plan.status().message());
    return out;
  }
  out.plan = WritePlanJson(*plan);
  out.remarks = log.ToJsonLines();
  return out;
}

TEST(ConcurrentCompileTest, ThreadsGiveSerialBytes) {
  const std::vector<GeneratorOptions> graphs = Graphs();
  const size_t jobs = graphs.size() * 2;  // each graph in multi- and single-stream mode
  std::vector<Outcome> serial(jobs);
  for (size_t j = 0; j < jobs; ++j) serial[j] = CompileOne(graphs[j / 2], j % 2 == 1);
  size_t compiled = 0;
  for (const Outcome& o : serial) compiled += o.error.empty() ? 1 : 0;
  EXPECT_GT(compiled, jobs / 2) << "most generated graphs should compile";

  constexpr int kThreads = 4;
  constexpr int kRounds = 2;
  std::vector<std::vector<Outcome>> got(kThreads, std::vector<Outcome>(jobs));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (int round = 0; round < kRounds; ++round) {
        for (size_t k = 0; k < jobs; ++k) {
          const size_t j = (k + static_cast<size_t>(t) * 3) % jobs;  // each thread in another order
          got[t][j] = CompileOne(graphs[j / 2], j % 2 == 1);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (size_t j = 0; j < jobs; ++j) {
      EXPECT_EQ(got[t][j].error, serial[j].error) << "thread " << t << " job " << j;
      EXPECT_TRUE(got[t][j].plan == serial[j].plan) << "thread " << t << " job " << j << ": plan bytes differ";
      EXPECT_TRUE(got[t][j].remarks == serial[j].remarks) << "thread " << t << " job " << j << ": remarks differ";
    }
  }
}

}  // namespace
}  // namespace npuplan
