#include "npuplan/report/kernel_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::report {
namespace {

using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Three UB buffers of 400 where only two fit (UB capacity 1024): `a` (0) is
// loaded first but used last, so it is spilled while `c` (2) is live.
constexpr char kSpillCase[] = R"json({
  "Nodes": [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 400, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
    {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 400, "Type": "UB"},
    {"Id": 3, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [1]},
    {"Id": 4, "Op": "ALLOC", "BufId": 2, "Size": 400, "Type": "UB"},
    {"Id": 5, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [2, 1]},
    {"Id": 6, "Op": "FREE", "BufId": 1, "Size": 400, "Type": "UB"},
    {"Id": 7, "Op": "MUL", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [2, 0]},
    {"Id": 8, "Op": "FREE", "BufId": 0, "Size": 400, "Type": "UB"},
    {"Id": 9, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 10, "Bufs": [2]},
    {"Id": 10, "Op": "FREE", "BufId": 2, "Size": 400, "Type": "UB"}
  ],
  "Edges": [[0, 1], [1, 7], [0, 8], [7, 8], [2, 3], [3, 5], [2, 6], [5, 6],
            [4, 5], [5, 7], [7, 9], [9, 10], [4, 10]]
})json";

// SPILL_OUT a = 11 before ALLOC c; SPILL_IN a = 12 after FREE b, back at 400.
constexpr char kSchedule[] = "0\n1\n2\n3\n11\n4\n5\n6\n12\n7\n8\n9\n10\n";
constexpr char kMemory[] = "0:0\n1:400\n2:0\n";
constexpr char kSpills[] = "0:400\n";

class KernelReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) /
        StrCat("kernel_report_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Write("spill.json", kSpillCase);
    Write("spill_schedule.txt", kSchedule);
    Write("spill_memory.txt", kMemory);
    Write("spill_spill.txt", kSpills);
  }
  void Write(const std::string& name, std::string_view text) {
    ASSERT_THAT(WriteFileAtomically((dir_ / name).string(), text), IsOk());
  }
  KernelReportInput Input(
      std::string report = R"({"case": "spill", "max_vstay": {"UB": 1200}, "spills": 1})") {
    return {std::move(report), (dir_ / "spill_report.json").string(),
            (dir_ / "spill.json").string()};
  }
  std::filesystem::path dir_;
};

TEST_F(KernelReportTest, RecognisesKernelReportsButNotPlans) {
  EXPECT_TRUE(LooksLikeKernelReport(R"({"case": "x", "max_vstay": {}})"));
  EXPECT_FALSE(
      LooksLikeKernelReport(R"({"format": "npuplan.plan/1", "case": "x", "max_vstay": {}})"));
  EXPECT_FALSE(LooksLikeKernelReport("not json"));
}

TEST_F(KernelReportTest, ComputesResidentBytesAndVstayWithSpills) {
  kernel::CacheConfig config;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(kernel::KernelGraph g,
                               kernel::ParseKernelGraph(kSpillCase, config, "spill"));
  kernel::KernelSolution sol;
  NPUPLAN_ASSERT_OK_AND_ASSIGN(sol.schedule, kernel::ParseScheduleText(kSchedule, "s"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(sol.spills, kernel::ParseSpillText(kSpills, "p"));
  const std::vector<CacheOccupancy> occ = ComputeCacheOccupancy(g, sol, config);
  ASSERT_EQ(occ.size(), config.levels.size());
  const CacheOccupancy& ub = occ[config.Find("UB")];
  EXPECT_EQ(ub.capacity, 1024);
  EXPECT_THAT(ub.resident,
              ElementsAre(400, 400, 800, 800, 400, 800, 800, 400, 800, 800, 400, 400, 0));
  EXPECT_THAT(ub.vstay,
              ElementsAre(400, 400, 800, 800, 800, 1200, 1200, 800, 800, 800, 400, 400, 0));
  ASSERT_EQ(ub.spills.size(), 2u);
  EXPECT_EQ(ub.spills[0].position, 4);
  EXPECT_TRUE(ub.spills[0].out);
  EXPECT_EQ(ub.spills[1].position, 8);
  EXPECT_FALSE(ub.spills[1].out);
  EXPECT_EQ(ub.spills[1].buf_id, 0);
}

TEST_F(KernelReportTest, DrawsUsedCachesWithCapacityAndSpillMarks) {
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, KernelReportHtml(Input()));
  EXPECT_THAT(html, HasSubstr("<svg id=\"cache-UB\""));
  EXPECT_THAT(html, Not(HasSubstr("<svg id=\"cache-L1\"")));  // no L1 buffer
  EXPECT_THAT(html, HasSubstr("Cache types no buffer uses: L1, L0A, L0B, L0C"));
  EXPECT_THAT(html, HasSubstr("<title>SPILL_OUT buffer 0 (size 400) at position 4</title>"));
  EXPECT_THAT(html, HasSubstr("<title>SPILL_IN buffer 0 (size 400) at position 8</title>"));
  EXPECT_THAT(html, HasSubstr("<title>capacity 1024</title>"));
  EXPECT_THAT(html, HasSubstr("capacity 1024, max resident 800, max V_stay 1200, spills 1"));
  EXPECT_THAT(html, HasSubstr("<td>max_vstay</td><td>UB 1200</td>"));
}

TEST_F(KernelReportTest, ShowsTheBoundsAndPlotsTheFrontierWithThem) {
  const std::string report = R"({"case": "spill", "max_vstay": {"UB": 1200}, "spills": 1,
    "extra_data_movement": 400, "makespan": 1000,
    "bounds": {"makespan": 990, "makespan_by": "pipe_heads_tails", "traffic_free_order": 400,
               "traffic_fixed_order": 400},
    "gap": {"makespan": "1.010", "traffic_free_order": "1.000", "traffic_fixed_order": "1.000"},
    "pareto": [{"candidate": "a", "extra_data_movement": 400, "makespan": 1000},
               {"candidate": "b", "extra_data_movement": 800, "makespan": 980}]})";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, KernelReportHtml(Input(report)));
  EXPECT_THAT(html, HasSubstr("<td>makespan</td><td>1000</td><td>990 (pipe_heads_tails)</td><td>1.010</td>"));
  EXPECT_THAT(html, HasSubstr("<td>extra data movement, any order</td><td>400</td><td>400</td><td>1.000</td>"));
  EXPECT_THAT(html, HasSubstr("<svg id=\"kernel-frontier\""));
  EXPECT_THAT(html, HasSubstr("<title>makespan lower bound 990</title>"));
  EXPECT_THAT(html, HasSubstr("<title>traffic lower bound 400</title>"));
  // The re-evaluated plan (movement 400, makespan 1000) is the filled point.
  EXPECT_THAT(html, HasSubstr("<title>a: movement 400, makespan 1000 (chosen)</title>"));
  EXPECT_THAT(html, HasSubstr("<title>b: movement 800, makespan 980</title>"));
}

TEST_F(KernelReportTest, ReadsTheFrontierFileBesideTheReport) {
  Write("spill_pareto.json", R"({"case": "spill", "points": [
    {"candidate": "x", "extra_data_movement": 400, "makespan": 1000}]})");
  const std::string report = R"({"case": "spill", "max_vstay": {"UB": 1200},
    "bounds": {"makespan": 990, "makespan_by": "pipe_work", "traffic_free_order": 400}})";
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string html, KernelReportHtml(Input(report)));
  EXPECT_THAT(html, HasSubstr("<title>x: movement 400, makespan 1000 (chosen)</title>"));
  // A report without bounds (an older plan) has neither section.
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string plain, KernelReportHtml(Input()));
  EXPECT_THAT(plain, Not(HasSubstr("kernel-frontier")));
  EXPECT_THAT(plain, Not(HasSubstr("Lower bounds")));
}

TEST_F(KernelReportTest, RejectsAnInvalidSolutionNamingTheRule) {
  Write("spill_memory.txt", "0:0\n1:0\n2:0\n");  // a and b overlap
  EXPECT_THAT(KernelReportHtml(Input()),
              StatusIs(absl::StatusCode::kInvalidArgument, "rule=overlap"));
}

TEST_F(KernelReportTest, NeedsTheCaseFileAndMatchingCaseName) {
  KernelReportInput in = Input();
  in.case_path.clear();
  EXPECT_THAT(KernelReportHtml(in), StatusIs(absl::StatusCode::kInvalidArgument, "needs --case"));
  EXPECT_THAT(KernelReportHtml(Input(R"({"case": "other", "max_vstay": {}})")),
              StatusIs(absl::StatusCode::kInvalidArgument, "report is for case 'other'"));
}

TEST_F(KernelReportTest, NamesAMissingSolutionFile) {
  std::filesystem::remove(dir_ / "spill_spill.txt");
  EXPECT_THAT(KernelReportHtml(Input()), StatusIs(absl::StatusCode::kNotFound, "spill_spill.txt"));
}

}  // namespace
}  // namespace npuplan::report
