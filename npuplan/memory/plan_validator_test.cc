#include "npuplan/memory/plan_validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// Random problems with offsets from a first fit, some then moved: the
// validator's verdict on time overlaps must be the pairwise check's, and a
// rejection must name a pair that really overlaps.
TEST(PlanValidatorTest, AgreesWithPairwiseCheckOnRandomAssignments) {
  std::mt19937 rng(11);
  int rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 150);
    IntervalProblem p;
    IntervalAssignment s;
    for (int i = 0; i < n; ++i) {
      const int64_t lower = static_cast<int64_t>(rng() % 40);
      const int64_t size = rng() % 8 == 0 ? 0 : 4 * (1 + static_cast<int64_t>(rng() % 4));
      p.buffers.push_back(
          {absl::StrCat("b", i), lower, lower + 1 + static_cast<int64_t>(rng() % 12), size});
    }
    auto overlap = [&](int a, int b) {
      const IntervalBuffer &x = p.buffers[a], &y = p.buffers[b];
      return x.size > 0 && y.size > 0 && LifetimesOverlap(x, y) &&
             s.offsets[a] < s.offsets[b] + y.size && s.offsets[b] < s.offsets[a] + x.size;
    };
    for (int i = 0; i < n; ++i) {  // first fit against the buffers placed so far
      s.offsets.push_back(0);
      for (bool moved = true; moved;) {
        moved = false;
        for (int j = 0; j < i; ++j) {
          if (overlap(i, j)) {
            s.offsets[i] = s.offsets[j] + p.buffers[j].size;
            moved = true;
          }
        }
      }
    }
    if (trial % 2 == 1) s.offsets[rng() % n] = 4 * static_cast<int64_t>(rng() % 10);
    if (trial % 3 == 2) {  // sparse offsets (gcd 1): ranks by sorting
      for (int i = 0; i < n; ++i) {
        p.buffers[i].size *= 1000;
        s.offsets[i] *= 1000;
      }
      s.offsets[rng() % n] += 1;
    }
    std::vector<std::pair<int, int>> bad;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (overlap(a, b)) bad.push_back({a, b});
      }
    }
    const ValidationResult r = ValidateIntervalAssignment(p, s);
    ASSERT_EQ(r.ok(), bad.empty()) << "trial " << trial << ": " << r.status;
    if (bad.empty()) continue;
    ++rejected;
    EXPECT_EQ(r.violation, Violation::kOverlap);
    const std::string message(r.status.message());
    bool named = false;
    for (const auto& [a, b] : bad) {
      named = named || (message.find(absl::StrCat("'b", a, "' ")) != std::string::npos &&
                        message.find(absl::StrCat("'b", b, "' ")) != std::string::npos);
    }
    EXPECT_TRUE(named) << "trial " << trial << ": " << message;
  }
  EXPECT_GT(rejected, 50);  // the moved buffers do collide often
}

}  // namespace
}  // namespace npuplan::memory
