#include "npuplan/support/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "npuplan/support/str_util.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan {
namespace {
using ::npuplan::testing::IsOk;
using ::npuplan::testing::StatusIs;
namespace fs = std::filesystem;

// Each test gets fresh empty folders from TestDir(), removed again when it
// ends so that repeated runs leave nothing in the temporary directory.
class ScratchDirTest : public ::testing::Test {
 protected:
  std::string TestDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    fs::path dir = fs::path(::testing::TempDir()) /
                   StrCat("npuplan_file_util_", info->name(), "_", ::getpid(), "_", dirs_.size());
    fs::remove_all(dir);
    fs::create_directories(dir);
    dirs_.push_back(dir);
    return dir.string();
  }

  void TearDown() override {
    for (const fs::path& dir : dirs_) {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
      EXPECT_FALSE(fs::exists(dir)) << dir;
    }
  }

 private:
  std::vector<fs::path> dirs_;
};

using FileUtilTest = ScratchDirTest;
using OutputTransactionTest = ScratchDirTest;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every entry of `dir`, to see that no temporary is left behind.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(FileUtilTest, WritesAndReadsBack) {
  std::string path = ::testing::TempDir() + "/npuplan_file_util_test.txt";
  ASSERT_THAT(WriteFileAtomically(path, "hello"), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string text, ReadFile(path));
  EXPECT_EQ(text, "hello");
  std::remove(path.c_str());
}

// The buffer is the file's size: finding the end must not double it (a
// zero-filled second copy of a 141 MB plan was resident until it was freed).
TEST_F(FileUtilTest, ReadsAFileIntoABufferOfItsSize) {
  const std::string path = ::testing::TempDir() + "/npuplan_file_util_size_test.txt";
  const std::string content(1 << 20, 'x');
  ASSERT_THAT(WriteFileAtomically(path, content), IsOk());
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string text, ReadFile(path));
  EXPECT_EQ(text, content);
  EXPECT_LT(text.capacity(), content.size() + 4096);
  std::remove(path.c_str());
}

TEST_F(FileUtilTest, MissingFileNamesPath) {
  EXPECT_THAT(ReadFile("/nonexistent/x.json"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/x.json"));
}

TEST_F(FileUtilTest, UnwritableDirectoryLeavesNothing) {
  EXPECT_FALSE(WriteFileAtomically("/nonexistent/dir/out.json", "x").ok());
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/dir/out.json"));
}
// Inputs that never end or never arrive are refused before they are read:
// opening a FIFO nobody writes used to block, /dev/zero used to be read until
// memory ran out.
TEST_F(FileUtilTest, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string fifo = TestDir() + "/in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ReadFile(fifo), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "is a FIFO (named pipe), not a regular file"));
}

TEST_F(FileUtilTest, RefusesACharacterDevice) {
  EXPECT_THAT(ReadFile("/dev/zero"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "/dev/zero: is a character device, not a regular file"));
}

TEST_F(FileUtilTest, RefusesADirectory) {
  EXPECT_THAT(ReadFile(TestDir()), StatusIs(absl::StatusCode::kInvalidArgument, "is a directory"));
}

TEST_F(FileUtilTest, RefusesAFileBeyondTheByteLimit) {
  const std::string path = TestDir() + "/big.json";
  ASSERT_THAT(WriteFileAtomically(path, std::string(1000, ' ')), IsOk());
  EXPECT_THAT(
      ReadFile(path, {.max_bytes = 999}),
      StatusIs(absl::StatusCode::kInvalidArgument, "has 1000 bytes, more than the limit of 999"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string text, ReadFile(path, {.max_bytes = 1000}));
  EXPECT_EQ(text.size(), 1000u);
}

// /proc files say size 0 and are read in chunks: still bounded.
TEST_F(FileUtilTest, BoundsAFileWhoseSizeIsUnknown) {
  EXPECT_THAT(ReadFile("/proc/self/maps", {.max_bytes = 10}),
              StatusIs(absl::StatusCode::kInvalidArgument, "more than the limit of 10"));
  NPUPLAN_ASSERT_OK_AND_ASSIGN(std::string maps, ReadFile("/proc/self/maps"));
  EXPECT_FALSE(maps.empty());
}

TEST_F(FileUtilTest, TheProcessWideLimitAppliesToEveryRead) {
  const std::string path = TestDir() + "/x.json";
  ASSERT_THAT(WriteFileAtomically(path, "12345"), IsOk());
  SetDefaultMaxFileBytes(4);
  absl::StatusOr<std::string> limited = ReadFile(path);
  SetDefaultMaxFileBytes(kDefaultMaxFileBytes);
  EXPECT_THAT(limited, StatusIs(absl::StatusCode::kInvalidArgument, "(--max-file-bytes)"));
}

// The library's calls (api::ReadLimits::max_file_bytes) set a limit for
// their own thread and duration, never the process's.
TEST_F(FileUtilTest, AScopedLimitHoldsOnItsThreadUntilItEnds) {
  const int64_t process = DefaultMaxFileBytes();
  {
    ScopedMaxFileBytes outer(100);
    EXPECT_EQ(DefaultMaxFileBytes(), 100);
    {
      ScopedMaxFileBytes unset(0);  // <= 0: no change
      EXPECT_EQ(DefaultMaxFileBytes(), 100);
      ScopedMaxFileBytes inner(7);
      EXPECT_EQ(DefaultMaxFileBytes(), 7);
    }
    EXPECT_EQ(DefaultMaxFileBytes(), 100);
    int64_t other = 0;
    std::thread([&other] { other = DefaultMaxFileBytes(); }).join();
    EXPECT_EQ(other, process);
  }
  EXPECT_EQ(DefaultMaxFileBytes(), process);
}

TEST_F(OutputTransactionTest, WritesNothingUntilCommitAndEverythingThen) {
  const std::string dir = TestDir();
  OutputTransaction out;
  ASSERT_THAT(out.Add(dir + "/a.json", "-o"), IsOk());
  ASSERT_THAT(out.Add(dir + "/b.jsonl", "--remarks"), IsOk());
  ASSERT_THAT(out.Write(dir + "/a.json", "A"), IsOk());
  ASSERT_THAT(out.Write(dir + "/b.jsonl", "B"), IsOk());
  EXPECT_FALSE(fs::exists(dir + "/a.json"));
  EXPECT_FALSE(fs::exists(dir + "/b.jsonl"));
  ASSERT_THAT(out.Commit(), IsOk());
  EXPECT_EQ(Slurp(dir + "/a.json"), "A");
  EXPECT_EQ(Slurp(dir + "/b.jsonl"), "B");
  EXPECT_EQ(Entries(dir), (std::vector<std::string>{"a.json", "b.jsonl"}));
}

TEST_F(OutputTransactionTest, WritesAnOutputInChunks) {
  const std::string dir = TestDir();
  OutputTransaction out;
  ASSERT_THAT(out.Add(dir + "/a.json", "-o"), IsOk());
  ASSERT_THAT(out.WriteChunks(dir + "/a.json",
                              [](const OutputTransaction::ChunkWriter& write) {
                                for (const char* c : {"ab", "", "cd"}) {
                                  if (absl::Status s = write(c); !s.ok()) return s;
                                }
                                return absl::OkStatus();
                              }),
              IsOk());
  EXPECT_FALSE(fs::exists(dir + "/a.json"));
  ASSERT_THAT(out.Commit(), IsOk());
  EXPECT_EQ(Slurp(dir + "/a.json"), "abcd");
  EXPECT_EQ(Entries(dir), (std::vector<std::string>{"a.json"}));
}

// A producer that fails after writing part of the content: the output is not
// written, Commit refuses it, and the old file stays as it was.
TEST_F(OutputTransactionTest, AFailedChunkedWriteLeavesTheTargetAsItWas) {
  const std::string dir = TestDir();
  ASSERT_THAT(WriteFileAtomically(dir + "/a.json", "old"), IsOk());
  OutputTransaction out;
  ASSERT_THAT(out.Add(dir + "/a.json", "-o"), IsOk());
  EXPECT_THAT(out.WriteChunks(dir + "/a.json",
                              [](const OutputTransaction::ChunkWriter& write) {
                                if (absl::Status s = write("half"); !s.ok()) return s;
                                return absl::DataLossError("producer failed");
                              }),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(out.Commit(), StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(Slurp(dir + "/a.json"), "old");
  EXPECT_EQ(Entries(dir), (std::vector<std::string>{"a.json"}));
}

TEST_F(OutputTransactionTest, AnAbandonedTransactionLeavesTheTargetsAsTheyWere) {
  const std::string dir = TestDir();
  ASSERT_THAT(WriteFileAtomically(dir + "/old.json", "old"), IsOk());
  {
    OutputTransaction out;
    ASSERT_THAT(out.Add(dir + "/old.json", "-o"), IsOk());
    ASSERT_THAT(out.Add(dir + "/new.json", "--trace"), IsOk());
    ASSERT_THAT(out.Write(dir + "/old.json", "new"), IsOk());
  }  // the command failed before Commit
  EXPECT_EQ(Slurp(dir + "/old.json"), "old");
  EXPECT_EQ(Entries(dir), (std::vector<std::string>{"old.json"}));
}

// An unwritable second output fails when it is declared, before any work,
// and the first output's temporary goes with the transaction.
TEST_F(OutputTransactionTest, AnUnwritableOutputFailsAtAddAndLeavesNothing) {
  const std::string dir = TestDir();
  {
    OutputTransaction out;
    ASSERT_THAT(out.Add(dir + "/plan.json", "-o"), IsOk());
    EXPECT_THAT(out.Add(dir + "/missing/remarks.jsonl", "--remarks"),
                StatusIs(absl::StatusCode::kInvalidArgument, "cannot write --remarks file"));
  }
  EXPECT_TRUE(Entries(dir).empty());
}

// Several files of one call (kernel solution files, the API's WriteFiles):
// one that cannot be written leaves the others unwritten and unchanged.
TEST_F(OutputTransactionTest, WriteFilesAtomicallyWritesAllOrNone) {
  const std::string dir = TestDir();
  ASSERT_THAT(WriteFileAtomically(dir + "/a.txt", "old"), IsOk());
  fs::create_directories(dir + "/c.txt");
  EXPECT_THAT(
      WriteFilesAtomically({{dir + "/a.txt", "A"}, {dir + "/b.txt", "B"}, {dir + "/c.txt", "C"}}),
      StatusIs(absl::StatusCode::kInvalidArgument, "c.txt: is a directory"));
  EXPECT_EQ(Slurp(dir + "/a.txt"), "old");
  EXPECT_EQ(Entries(dir), (std::vector<std::string>{"a.txt", "c.txt"}));
  fs::remove(dir + "/c.txt");
  ASSERT_THAT(
      WriteFilesAtomically({{dir + "/a.txt", "A"}, {dir + "/b.txt", "B"}, {dir + "/c.txt", "C"}}),
      IsOk());
  EXPECT_EQ(Slurp(dir + "/a.txt") + Slurp(dir + "/b.txt") + Slurp(dir + "/c.txt"), "ABC");
}

TEST_F(OutputTransactionTest, CommitRefusesAnOutputThatWasNeverWritten) {
  const std::string dir = TestDir();
  OutputTransaction out;
  ASSERT_THAT(out.Add(dir + "/a", "-o"), IsOk());
  ASSERT_THAT(out.Add(dir + "/b", "--remarks"), IsOk());
  ASSERT_THAT(out.Write(dir + "/a", "A"), IsOk());
  EXPECT_THAT(out.Commit(), StatusIs(absl::StatusCode::kInternal, "declared but never written"));
  EXPECT_TRUE(Entries(dir).empty());
}

TEST_F(OutputTransactionTest, RefusesTargetsThatAreNotRegularFiles) {
  const std::string dir = TestDir();
  ASSERT_EQ(::mkfifo((dir + "/f").c_str(), 0600), 0);
  fs::create_directory(dir + "/d");
  OutputTransaction out;
  EXPECT_THAT(out.Add(dir + "/f", "-o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "is a FIFO (named pipe)"));
  EXPECT_THAT(out.Add(dir + "/d", "-o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "is a directory"));
  EXPECT_THAT(out.Add("/dev/null", "-o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "is a character device"));
  EXPECT_THAT(out.Add(dir + "/", "-o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "names a directory"));
  EXPECT_TRUE(fs::is_fifo(dir + "/f"));
}

// -o through a link replaces the link's target, in the target's folder; the
// link stays a link.
TEST_F(OutputTransactionTest, WritesThroughASymbolicLinkToItsTarget) {
  const std::string dir = TestDir();
  fs::create_directory(dir + "/real");
  ASSERT_THAT(WriteFileAtomically(dir + "/real/plan.json", "old"), IsOk());
  fs::create_symlink("real/plan.json", dir + "/link.json");
  ASSERT_THAT(WriteFileAtomically(dir + "/link.json", "new"), IsOk());
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(Slurp(dir + "/real/plan.json"), "new");
  EXPECT_EQ(Entries(dir + "/real"), (std::vector<std::string>{"plan.json"}));
  // A dangling link creates its target; a link to a device is refused.
  fs::create_symlink("real/fresh.json", dir + "/dangling.json");
  ASSERT_THAT(WriteFileAtomically(dir + "/dangling.json", "fresh"), IsOk());
  EXPECT_EQ(Slurp(dir + "/real/fresh.json"), "fresh");
  fs::create_symlink("/dev/null", dir + "/null.json");
  EXPECT_THAT(WriteFileAtomically(dir + "/null.json", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, "a link to /dev/null"));
  fs::create_symlink("loop.json", dir + "/loop.json");
  EXPECT_THAT(WriteFileAtomically(dir + "/loop.json", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, "too many levels of symbolic links"));
}

TEST_F(OutputTransactionTest, RefusesTheSameFileUnderTwoNames) {
  const std::string dir = TestDir();
  fs::create_symlink("a.json", dir + "/alias.json");
  OutputTransaction out;
  ASSERT_THAT(out.Add(dir + "/a.json", "-o"), IsOk());
  EXPECT_THAT(out.Add(dir + "/./a.json", "--remarks"),
              StatusIs(absl::StatusCode::kInvalidArgument, "the same file"));
  EXPECT_THAT(out.Add(dir + "/alias.json", "--trace"),
              StatusIs(absl::StatusCode::kInvalidArgument, "the same file"));
  ASSERT_THAT(out.Add("-", "--trace"), IsOk());
  EXPECT_THAT(out.Add("-", "--report"),
              StatusIs(absl::StatusCode::kInvalidArgument, "standard output is already"));
  EXPECT_TRUE(out.writes_stdout());
}

TEST_F(OutputTransactionTest, AReplacedFileKeepsItsPermissions) {
  const std::string dir = TestDir();
  ASSERT_THAT(WriteFileAtomically(dir + "/a", "old"), IsOk());
  ASSERT_EQ(::chmod((dir + "/a").c_str(), 0640), 0);
  ASSERT_THAT(WriteFileAtomically(dir + "/a", "new"), IsOk());
  struct stat st;
  ASSERT_EQ(::stat((dir + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

}  // namespace
}  // namespace npuplan
