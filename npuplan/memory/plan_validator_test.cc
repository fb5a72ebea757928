#include "npuplan/memory/plan_validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "npuplan/testing/status_matchers.h"

namespace npuplan::memory {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;

// a [0,2) 4 bytes, b [1,3) 4 bytes, c [2,4) 4 bytes: a-b and b-c overlap.
IntervalProblem ThreeBuffers() {
  IntervalProblem p;
  p.buffers = {{"a", 0, 2, 4}, {"b", 1, 3, 4}, {"c", 2, 4, 4}};
  return p;
}

TEST(PlanValidatorTest, AcceptsValidAssignment) {
  const ValidationResult r = ValidateIntervalAssignment(ThreeBuffers(), {{0, 4, 0}});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.violation, Violation::kNone);
  EXPECT_THAT(r.status, IsOk());
}

TEST(PlanValidatorTest, AcceptsEmptyProblem) {
  EXPECT_TRUE(ValidateIntervalAssignment(IntervalProblem{}, {}).ok());
}

TEST(PlanValidatorTest, RejectsWrongOffsetCount) {
  const ValidationResult r = ValidateIntervalAssignment(ThreeBuffers(), {{0, 4}});
  EXPECT_EQ(r.violation, Violation::kWrongOffsetCount);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "2 offsets for 3 buffers"));
}

TEST(PlanValidatorTest, RejectsUnplacedBuffer) {
  const ValidationResult r = ValidateIntervalAssignment(ThreeBuffers(), {{0, -1, 0}});
  EXPECT_EQ(r.violation, Violation::kNegativeOffset);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "'b'"));
}

TEST(PlanValidatorTest, RejectsOffsetOverflow) {
  const ValidationResult r = ValidateIntervalAssignment(
      ThreeBuffers(), {{0, std::numeric_limits<int64_t>::max() - 1, 0}});
  EXPECT_EQ(r.violation, Violation::kOffsetOverflow);
}

TEST(PlanValidatorTest, RejectsMisalignedOffset) {
  IntervalProblem p = ThreeBuffers();
  p.buffers[1].alignment = 8;
  EXPECT_TRUE(ValidateIntervalAssignment(p, {{0, 8, 0}}).ok());
  const ValidationResult r = ValidateIntervalAssignment(p, {{0, 4, 0}});
  EXPECT_EQ(r.violation, Violation::kMisaligned);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "alignment 8"));
}

TEST(PlanValidatorTest, RejectsOverlapInTimeAndAddress) {
  const ValidationResult r = ValidateIntervalAssignment(ThreeBuffers(), {{0, 2, 8}});
  EXPECT_EQ(r.violation, Violation::kOverlap);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "'a' live [0,2) at [0,4)"));
  EXPECT_STREQ(ViolationName(r.violation), "overlap");
}

TEST(PlanValidatorTest, AcceptsSharedAddressForHalfOpenTouchingLifetimes) {
  // a [0,2) and c [2,4) touch at 2 but do not overlap.
  EXPECT_TRUE(ValidateIntervalAssignment(ThreeBuffers(), {{0, 4, 0}}).ok());
}

TEST(PlanValidatorTest, AcceptsZeroSizeBufferAnywhere) {
  IntervalProblem p = ThreeBuffers();
  p.buffers.push_back({"z", 0, 4, 0});
  EXPECT_TRUE(ValidateIntervalAssignment(p, {{0, 4, 0, 2}}).ok());
}

TEST(PlanValidatorTest, RejectsOverlapOfExtraConflict) {
  IntervalProblem p = ThreeBuffers();
  p.extra_conflicts = {{2, 0}};  // a and c are disjoint in time but may not share
  const ValidationResult r = ValidateIntervalAssignment(p, {{0, 4, 0}});
  EXPECT_EQ(r.violation, Violation::kOverlap);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "extra conflict"));
  EXPECT_TRUE(ValidateIntervalAssignment(p, {{0, 4, 8}}).ok());
}

TEST(PlanValidatorTest, RejectsOverlapForbiddenByPredicate) {
  IntervalProblem p = ThreeBuffers();
  p.forbid_sharing = [](int a, int b) { return a == 0 && b == 2; };
  const ValidationResult r = ValidateIntervalAssignment(p, {{0, 4, 0}});
  EXPECT_EQ(r.violation, Violation::kOverlap);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "forbid_sharing"));
}

TEST(PlanValidatorTest, RejectsPeakAboveCapacity) {
  IntervalProblem p = ThreeBuffers();
  p.capacity = 8;
  EXPECT_TRUE(ValidateIntervalAssignment(p, {{0, 4, 0}}).ok());
  const ValidationResult r = ValidateIntervalAssignment(p, {{0, 4, 8}});
  EXPECT_EQ(r.violation, Violation::kOverCapacity);
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kInternal, "capacity 8"));
}

}  // namespace
}  // namespace npuplan::memory
