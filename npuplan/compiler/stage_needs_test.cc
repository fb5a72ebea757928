// The verifier's table of stage prerequisites (plan_claims.h StageNeeds) is
// what the passes require: for each stage, the union of required() over the
// registered passes that create it (a pass that needs its own stage, like
// the events optimisers or stream-budget, refines it and adds nothing).
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "npuplan/compiler/compiler.h"
#include "npuplan/compiler/pass_registry.h"
#include "npuplan/plan/plan_claims.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

TEST(StageNeedsTest, MatchesWhatThePassesRequire) {
  std::map<uint32_t, IrProperties> needs;  // stage bit → union of required()
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (e.stream_sub_pass) continue;  // runs inside logical-stream-assignment's stage
    const std::unique_ptr<Pass> pass = e.make(nullptr);
    ASSERT_NE(pass, nullptr) << e.name;
    for (uint32_t bit = 1; bit != 0 && bit <= pass->provided(); bit <<= 1) {
      // A pass that requires the stage it provides refines it (the events
      // optimisers, stream-budget): what the stage needs is set by the
      // passes that create it.
      if ((pass->provided() & bit) && !(pass->required() & bit)) needs[bit] |= pass->required();
    }
  }
  ASSERT_FALSE(needs.empty());
  for (uint32_t bit = 1; bit <= static_cast<uint32_t>(IrProperty::kSyncNodes); bit <<= 1) {
    const IrProperty stage = static_cast<IrProperty>(bit);
    EXPECT_EQ(PropertyNames(StageNeeds(stage)), PropertyNames(needs[bit])) << PropertyNames(bit);
  }
}

}  // namespace
}  // namespace npuplan
