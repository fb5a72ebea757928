// File helpers shared by every command.
//
// Reading: only regular files, and never more than a byte limit. npuplan parses
// every format as a whole document (no reader is incremental), so a FIFO, a
// device (/dev/zero) or a socket is refused before it is opened for reading;
// a regular file larger than the limit is refused before it is read.
//
// Writing: all or nothing. An OutputTransaction collects a command's outputs
// (the main `-o` file and every side output: remarks, traces, the five files
// of `kernel plan`): each is written to a temporary file in its target's
// directory and renamed over the target only when every output is complete;
// a failed or abandoned transaction removes its temporaries and leaves the
// targets untouched. `-` is standard output. A symbolic link is followed, so
// the link's target is replaced (in the target's directory) and the link
// stays. An existing target that is not a regular file (a directory, a FIFO,
// a device) is refused before any work.
#ifndef NPUPLAN_SUPPORT_FILE_UTIL_H_
#define NPUPLAN_SUPPORT_FILE_UTIL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace npuplan {

// The default byte limit of one input file (`--max-file-bytes`): 2 GiB - 1,
// protobuf's limit for one message, and far above any graph the node and edge
// limits admit in practice.
inline constexpr int64_t kDefaultMaxFileBytes = (int64_t{1} << 31) - 1;

// The byte limit ReadFile applies when given no options, for the whole
// process: the CLI sets it from `--max-file-bytes`, so that every reader
// (graphs, plans, engine tables, ONNX models, kernel cases, CSV) obeys it.
void SetDefaultMaxFileBytes(int64_t bytes);
int64_t DefaultMaxFileBytes();

// The library's calls read with their caller's limit (api::ReadLimits::
// max_file_bytes) without changing the process's: for the lifetime of this
// object, DefaultMaxFileBytes() on the calling thread is `bytes` (<= 0: no
// change). Scopes nest.
class ScopedMaxFileBytes {
 public:
  explicit ScopedMaxFileBytes(int64_t bytes);
  ScopedMaxFileBytes(const ScopedMaxFileBytes&) = delete;
  ScopedMaxFileBytes& operator=(const ScopedMaxFileBytes&) = delete;
  ~ScopedMaxFileBytes();

 private:
  int64_t previous_;
};

struct ReadFileOptions {
  int64_t max_bytes = DefaultMaxFileBytes();
};

// Reads a whole regular file. NotFound naming the path when it does not exist;
// InvalidArgument naming the path for a directory, a FIFO, a device or a
// socket, a file beyond `max_bytes`, or a read error.
absl::StatusOr<std::string> ReadFile(const std::string& path, const ReadFileOptions& options = {});

// The target a path names: "-" for standard output, else the path with every
// symbolic link along the last component followed (relative link targets are
// resolved against the link's directory). InvalidArgument for a link loop or
// an existing target that is not a regular file.
absl::StatusOr<std::string> ResolveOutputPath(const std::string& path);

class OutputTransaction {
 public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  // Removes every temporary file unless Commit() succeeded.
  ~OutputTransaction();

  // Declares an output before the work starts, so that an unwritable path
  // fails first: resolves it (ResolveOutputPath) and creates its temporary
  // file. `what` names the output in messages ("-o", "--remarks"). Declaring
  // the same target twice, or standard output twice, is an error.
  absl::Status Add(const std::string& path, std::string_view what);
  // Sets the content of a declared output (the same `path` string as Add).
  absl::Status Write(const std::string& path, std::string_view content);
  // Appends the next piece of an output's content; its first error is final.
  using ChunkWriter = std::function<absl::Status(std::string_view)>;
  // Write() for content produced in pieces (a large plan is never whole in
  // memory): `produce` is called once and gives each piece to the writer it
  // receives; its error (or the writer's) fails the output. Standard output
  // still receives the whole content at Commit.
  absl::Status WriteChunks(const std::string& path,
                           const std::function<absl::Status(const ChunkWriter&)>& produce);
  // Writes standard output, then renames every temporary over its target. An
  // output declared but never written is an error (nothing is renamed). If a
  // rename fails, the targets already replaced are restored where possible.
  absl::Status Commit();

  // True when one output is standard output ("-"): a command then prints its
  // informational lines to stderr.
  bool writes_stdout() const { return stdout_index_ >= 0; }

 private:
  struct Entry {
    std::string path;    // as given
    std::string what;    // "-o", "--remarks", …
    std::string target;  // resolved ("-" for stdout)
    std::string temp;    // temporary file in the target's directory ("" for stdout)
    int fd = -1;
    bool written = false;
    std::string stdout_content;
  };
  Entry* Find(const std::string& path);
  void Abort();

  std::vector<Entry> entries_;
  std::map<std::string, size_t> by_path_;    // Entry::path → index
  std::map<std::string, size_t> by_target_;  // Entry::target → index
  int stdout_index_ = -1;
  bool committed_ = false;
};

// A transaction of one file.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content);
// A transaction of several files (path, content): all are written or none.
absl::Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_FILE_UTIL_H_
