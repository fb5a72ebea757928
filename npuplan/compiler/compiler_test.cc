// The compile driver's final step: the plan is verified, and the work the
// caller asks to overlap with that verification (the CLI writes the plan)
// runs once, on the final plan, and its error is Compile's.
#include "npuplan/compiler/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <string>

#include "npuplan/gen/graph_generator.h"
#include "npuplan/plan/plan_json.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

Model Transformer(int64_t layers, double dynamic_prob = 0, int64_t if_every = 0) {
  GeneratorOptions o;
  o.layers = layers;
  o.dynamic_prob = dynamic_prob;
  o.if_every = if_every;
  absl::StatusOr<Model> m = GenerateTransformer(o);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

bool HasStep(const Statistics& stats, std::string_view step, bool part) {
  for (const Statistics::StepTime& t : stats.times()) {
    if (t.step == step && t.part == part) return true;
  }
  return false;
}

TEST(CompileTest, AlongsideWorkSeesTheFinalPlanOnce) {
  CompileConfig config;
  std::atomic<int> calls = 0;
  std::string written;
  config.alongside_name = "write plan";
  config.alongside_final_verification = [&](const Plan& p) {
    ++calls;
    written = WritePlanJson(p);
    return absl::OkStatus();
  };
  DecisionLog log(false);
  Statistics stats;
  absl::StatusOr<Plan> plan = Compile(Transformer(3), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(written, WritePlanJson(*plan));
  // Timed as a part of the final verification, as are its checks.
  EXPECT_TRUE(HasStep(stats, "verify (final plan)", false));
  EXPECT_TRUE(HasStep(stats, "write plan", true));
  EXPECT_TRUE(HasStep(stats, "verify: memory", true));

  // The same plan as a compile without it.
  DecisionLog log2(false);
  Statistics stats2;
  absl::StatusOr<Plan> alone = Compile(Transformer(3), CompileConfig{}, log2, stats2);
  ASSERT_THAT(alone.status(), IsOk());
  EXPECT_EQ(WritePlanJson(*alone), written);
  EXPECT_FALSE(HasStep(stats2, "write plan", true));
}

TEST(CompileTest, AnAlongsideErrorIsTheCompilesError) {
  CompileConfig config;
  config.alongside_final_verification = [](const Plan&) {
    return absl::DataLossError("-o /full/disk: no space left");
  };
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THAT(Compile(Transformer(2), config, log, stats).status(),
              StatusIs(absl::StatusCode::kDataLoss, "no space left"));
}

// Out of memory on the second thread reaches the caller as it would have on
// one thread (the CLI: "error: out of memory", exit 1), not as a crash.
TEST(CompileTest, AnAlongsideExceptionIsRethrownOnTheCallersThread) {
  CompileConfig config;
  config.alongside_final_verification = [](const Plan&) -> absl::Status { throw std::bad_alloc(); };
  DecisionLog log(false);
  Statistics stats;
  EXPECT_THROW(Compile(Transformer(2), config, log, stats).IgnoreError(), std::bad_alloc);
}

// An id budget compiles several times (issue 23's bisection over
// npuplan.maxStreams); only the compile that returns does the alongside work.
TEST(CompileTest, IdBudgetAttemptsDoNoAlongsideWork) {
  CompileConfig config;
  config.option_overrides = {{"ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "1"},
                             {"ge.autoMultistreamParallelMode", "LoadBalance:4"},
                             {"npuplan.maxEventIds", "15"}};
  std::atomic<int> calls = 0;
  std::string written;
  config.alongside_final_verification = [&](const Plan& p) {
    ++calls;
    written = WritePlanJson(p);
    return absl::OkStatus();
  };
  DecisionLog log(true);
  Statistics stats;
  absl::StatusOr<Plan> plan =
      Compile(Transformer(6, /*dynamic_prob=*/0.5, /*if_every=*/2), config, log, stats);
  ASSERT_THAT(plan.status(), IsOk());
  ASSERT_NE(log.ToJsonLines().find("IdBudgetStreams"), std::string::npos)
      << "the budget did not make Compile bisect: the test no longer covers the attempts";
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(written, WritePlanJson(*plan));
}

}  // namespace
}  // namespace npuplan
