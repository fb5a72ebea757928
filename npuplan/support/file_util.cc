#include "npuplan/support/file_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "npuplan/support/status_macros.h"

namespace npuplan {

namespace internal {
void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "npuplan: CHECK failed (%s:%d): %s\n", file, line, cond);
  std::abort();
}
}  // namespace internal

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(path + ": cannot open file: " + std::strerror(errno));
  }
  // One read into a buffer of the file's size (a 200 MB graph must not be
  // copied through a growing stream buffer); streams without a size (pipes)
  // fall back to reading in chunks.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(path + ": is a directory, not a file");
  }
  std::string text;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size > 0) {
    in.seekg(0, std::ios::beg);
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    if (in.gcount() != size) return absl::InvalidArgumentError(path + ": read error");
    return text;
  }
  in.clear();
  in.seekg(0, std::ios::beg);
  in.clear();
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) text.append(buf, static_cast<size_t>(in.gcount()));
  if (in.bad()) return absl::InvalidArgumentError(path + ": read error");
  return text;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::InvalidArgumentError(path + ": cannot write file: " + std::strerror(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InvalidArgumentError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(path + ": cannot rename temporary file: " + err);
  }
  return absl::OkStatus();
}

}  // namespace npuplan
