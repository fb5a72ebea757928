#include "npuplan/support/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {

namespace internal {
void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "npuplan: CHECK failed (%s:%d): %s\n", file, line, cond);
  std::abort();
}
}  // namespace internal

namespace {

// What a file that is not a regular file is, for messages.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string Errno() { return std::strerror(errno); }

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::Status NotRegular(const std::string& path, mode_t mode, std::string_view action) {
  return absl::InvalidArgumentError(
      StrCat(path, ": is ", FileKind(mode), ", not a regular file", action));
}

mode_t NewFileMode() {
  static const mode_t mode = [] {
    mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

absl::Status WriteAll(int fd, std::string_view content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InvalidArgumentError(StrCat(path, ": write failed: ", Errno()));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::atomic<int64_t>& DefaultLimit() {
  static std::atomic<int64_t> limit{kDefaultMaxFileBytes};
  return limit;
}

// ScopedMaxFileBytes's limit on this thread (0: none).
thread_local int64_t scoped_limit = 0;

}  // namespace

void SetDefaultMaxFileBytes(int64_t bytes) { DefaultLimit().store(bytes); }
int64_t DefaultMaxFileBytes() { return scoped_limit > 0 ? scoped_limit : DefaultLimit().load(); }

ScopedMaxFileBytes::ScopedMaxFileBytes(int64_t bytes) : previous_(scoped_limit) {
  if (bytes > 0) scoped_limit = bytes;
}
ScopedMaxFileBytes::~ScopedMaxFileBytes() { scoped_limit = previous_; }

absl::StatusOr<std::string> ReadFile(const std::string& path, const ReadFileOptions& options) {
  // stat before open: opening a FIFO nobody writes blocks, and opening a
  // device may have effects of its own.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat(path, ": cannot open file: ", Errno()));
  }
  constexpr std::string_view kWhole =
      " (npuplan reads whole files: save the input to a regular file first)";
  if (S_ISDIR(st.st_mode)) return NotRegular(path, st.st_mode, "");
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode, kWhole);
  const int64_t limit = options.max_bytes;
  auto too_big = [&](std::string_view size) {
    return absl::InvalidArgumentError(StrCat(path, ": the file has ", size,
                                             " bytes, more than the limit of ", limit,
                                             " (--max-file-bytes)"));
  };
  if (st.st_size > limit) return too_big(StrCat(st.st_size));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return absl::NotFoundError(StrCat(path, ": cannot open file: ", Errno()));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since the stat
    return NotRegular(path, st.st_mode, kWhole);
  }
  // One read into a buffer of the file's size and one byte more (the read
  // that finds the end must not need a buffer twice the file's, zero-filled);
  // files whose size says nothing (/proc) grow in chunks, never beyond the limit.
  std::string text;
  try {
    text.resize(static_cast<size_t>(std::max<int64_t>(st.st_size + 1, 1 << 16)));
    size_t got = 0;
    while (true) {
      if (got == text.size()) {
        if (static_cast<int64_t>(got) > limit) return too_big(StrCat("more than ", limit));
        text.resize(std::min<size_t>(text.size() * 2, static_cast<size_t>(limit) + 1));
      }
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return absl::InvalidArgumentError(StrCat(path, ": read error: ", Errno()));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    if (static_cast<int64_t>(got) > limit) return too_big(StrCat("more than ", limit));
    text.resize(got);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(StrCat(path, ": not enough memory to read its ", st.st_size,
                                               " bytes (--max-file-bytes lowers the limit)"));
  }
  return text;
}

absl::StatusOr<std::string> ResolveOutputPath(const std::string& path) {
  if (path == "-") return path;
  if (path.empty()) return absl::InvalidArgumentError("an output path is empty");
  if (path.back() == '/')
    return absl::InvalidArgumentError(StrCat(path, ": names a directory, not a file"));
  auto refuse = [&](const std::string& name, mode_t mode) {
    return NotRegular(name, mode,
                      S_ISDIR(mode) ? ": refusing to replace it"
                                    : ": refusing to replace it (-o - writes to standard output)");
  };
  std::string cur = path;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(cur.c_str(), &st) != 0) {
      const int err = errno;
      // A link whose target is no path (/dev/stdout → /proc/self/fd/1 →
      // "pipe:[…]") still names an open file: what stat sees decides.
      if (hops > 0 && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        return refuse(StrCat(path, " (a link to ", cur.substr(cur.rfind('/') + 1), ")"),
                      st.st_mode);
      }
      if (err == ENOENT)
        return cur;  // a new file; its directory is checked when the temporary is made
      return absl::InvalidArgumentError(StrCat(path, ": cannot write file: ", std::strerror(err)));
    }
    if (S_ISREG(st.st_mode)) return cur;
    if (!S_ISLNK(st.st_mode))
      return refuse(cur == path ? path : StrCat(path, " (a link to ", cur, ")"), st.st_mode);
    if (hops == 40)
      return absl::InvalidArgumentError(StrCat(path, ": too many levels of symbolic links"));
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096), '\0');
    ssize_t n = ::readlink(cur.c_str(), link.data(), link.size());
    if (n < 0)
      return absl::InvalidArgumentError(StrCat(path, ": cannot read the symbolic link: ", Errno()));
    link.resize(static_cast<size_t>(n));
    if (link.empty()) return absl::InvalidArgumentError(StrCat(path, ": an empty symbolic link"));
    cur = link[0] == '/' ? link : DirName(cur) + "/" + link;
    if (cur.back() == '/')
      return absl::InvalidArgumentError(StrCat(path, ": links to a directory, not a file"));
  }
}

OutputTransaction::~OutputTransaction() {
  if (!committed_) Abort();
}

void OutputTransaction::Abort() {
  for (Entry& e : entries_) {
    if (e.fd >= 0) ::close(e.fd);
    e.fd = -1;
    if (!e.temp.empty()) ::unlink(e.temp.c_str());
    e.temp.clear();
  }
}

OutputTransaction::Entry* OutputTransaction::Find(const std::string& path) {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : &entries_[it->second];
}

absl::Status OutputTransaction::Add(const std::string& path, std::string_view what) {
  if (committed_) return absl::FailedPreconditionError("OutputTransaction::Add after Commit");
  NPUPLAN_ASSIGN_OR_RETURN(std::string target, ResolveOutputPath(path));
  Entry e;
  e.path = path;
  e.what = std::string(what);
  if (target == "-") {
    if (stdout_index_ >= 0) {
      return absl::InvalidArgumentError(StrCat(
          what, " -: standard output is already the target of ", entries_[stdout_index_].what));
    }
    e.target = target;
    stdout_index_ = static_cast<int>(entries_.size());
    by_path_.emplace(e.path, entries_.size());
    entries_.push_back(std::move(e));
    return absl::OkStatus();
  }
  // The same file under two spellings (a/x, ./a/x, a link) is one target.
  const std::string dir = DirName(target);
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot write ", what, " file: ", dir, ": ", Errno()));
  }
  e.target = StrCat(real, real[std::strlen(real) - 1] == '/' ? "" : "/", BaseName(target));
  std::free(real);
  if (auto it = by_target_.find(e.target); it != by_target_.end()) {
    const Entry& other = entries_[it->second];
    return absl::InvalidArgumentError(
        StrCat(what, " ", path, " and ", other.what, " ", other.path, " name the same file"));
  }
  std::string temp = StrCat(DirName(e.target), "/.", BaseName(e.target), ".tmp.XXXXXX");
  e.fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (e.fd < 0)
    return absl::InvalidArgumentError(StrCat(path, ": cannot write ", what, " file: ", Errno()));
  e.temp = std::move(temp);
  struct stat st;
  ::fchmod(e.fd, ::stat(e.target.c_str(), &st) == 0 ? (st.st_mode & 07777) : NewFileMode());
  // Closed until Write: a command may declare thousands of outputs (a bundle's
  // plans), more than the process may hold open.
  ::close(e.fd);
  e.fd = -1;
  by_target_.emplace(e.target, entries_.size());
  by_path_.emplace(e.path, entries_.size());
  entries_.push_back(std::move(e));
  return absl::OkStatus();
}

absl::Status OutputTransaction::Write(const std::string& path, std::string_view content) {
  return WriteChunks(path, [content](const ChunkWriter& write) { return write(content); });
}

absl::Status OutputTransaction::WriteChunks(
    const std::string& path, const std::function<absl::Status(const ChunkWriter&)>& produce) {
  Entry* e = Find(path);
  if (e == nullptr || committed_) {
    return absl::FailedPreconditionError(
        StrCat("OutputTransaction::Write: ", path, " was not declared"));
  }
  e->written = false;
  if (e->target == "-") {
    e->stdout_content.clear();
    NPUPLAN_RETURN_IF_ERROR(produce([e](std::string_view chunk) {
      e->stdout_content.append(chunk);
      return absl::OkStatus();
    }));
  } else {
    e->fd = ::open(e->temp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (e->fd < 0) return absl::InvalidArgumentError(StrCat(path, ": write failed: ", Errno()));
    const int fd = e->fd;
    absl::Status written =
        produce([fd, &path](std::string_view chunk) { return WriteAll(fd, chunk, path); });
    const int rc = ::close(e->fd);  // a full disk may only show here
    e->fd = -1;
    NPUPLAN_RETURN_IF_ERROR(written);
    if (rc != 0) return absl::InvalidArgumentError(StrCat(path, ": write failed: ", Errno()));
  }
  e->written = true;
  return absl::OkStatus();
}

absl::Status OutputTransaction::Commit() {
  if (committed_) return absl::OkStatus();
  absl::Status status;
  for (Entry& e : entries_) {
    if (!e.written) {
      status = absl::InternalError(
          StrCat("output ", e.what, " ", e.path, " was declared but never written"));
      break;
    }
    if (e.fd >= 0) {
      int rc = ::close(e.fd);
      e.fd = -1;
      if (rc != 0) {
        status = absl::InvalidArgumentError(StrCat(e.path, ": write failed: ", Errno()));
        break;
      }
    }
  }
  if (status.ok() && stdout_index_ >= 0) {
    const std::string& text = entries_[stdout_index_].stdout_content;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
        std::fflush(stdout) != 0) {
      status = absl::InvalidArgumentError(StrCat("cannot write standard output: ", Errno()));
    }
  }
  if (!status.ok()) {
    Abort();
    return status;
  }
  // Replace the targets. A replaced target keeps a hard link (".old") until
  // all renames succeeded, so a failed rename can put it back.
  struct Done {
    const Entry* entry;
    std::string backup;  // "" = the target did not exist (or could not be linked)
  };
  std::vector<Done> done;
  for (Entry& e : entries_) {
    if (e.temp.empty()) continue;
    std::string backup = e.temp + ".old";
    if (::link(e.target.c_str(), backup.c_str()) != 0) backup.clear();
    if (::rename(e.temp.c_str(), e.target.c_str()) != 0) {
      status = absl::InvalidArgumentError(StrCat(e.path, ": cannot replace the file: ", Errno()));
      if (!backup.empty()) ::unlink(backup.c_str());
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        if (it->backup.empty()) {
          ::unlink(it->entry->target.c_str());
        } else {
          ::rename(it->backup.c_str(), it->entry->target.c_str());
        }
      }
      Abort();  // removes this temporary and the ones not renamed yet
      return status;
    }
    e.temp.clear();
    done.push_back({&e, std::move(backup)});
  }
  for (const Done& d : done) {
    if (!d.backup.empty()) ::unlink(d.backup.c_str());
  }
  committed_ = true;
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  OutputTransaction out;
  NPUPLAN_RETURN_IF_ERROR(out.Add(path, "output"));
  NPUPLAN_RETURN_IF_ERROR(out.Write(path, content));
  return out.Commit();
}

absl::Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files) {
  OutputTransaction out;
  for (const auto& [path, content] : files) NPUPLAN_RETURN_IF_ERROR(out.Add(path, "output"));
  for (const auto& [path, content] : files) NPUPLAN_RETURN_IF_ERROR(out.Write(path, content));
  return out.Commit();
}

}  // namespace npuplan
