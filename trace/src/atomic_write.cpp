// write_trace / write_file_atomically: temporary file beside the target, fsync, rename.
// A reader never sees a half-written trace, and a failure leaves an existing file as it was.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "nimble/trace/io.hpp"

namespace nimble::trace {
namespace {

std::string errno_text() { return std::strerror(errno); }

// umask() can only be read by changing it, which races with other threads; Linux reports it here.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 022;
}

// Replace what a symlink points to, not the link itself.
std::string resolve_target(const std::string& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) != nullptr) return resolved;
  }
  return path;
}

std::optional<std::string> write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno_text();
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  return std::nullopt;
}

std::optional<std::string> write_stdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return "cannot write to standard output: " + errno_text();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> write_file_atomically(const std::string& path, std::string_view text) {
  if (path == "-") return write_stdout(text);
  if (path.empty()) return std::string("cannot write: empty output path");

  const std::string target = resolve_target(path);
  const std::size_t slash = target.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string temporary = (slash == std::string::npos ? "" : target.substr(0, slash + 1)) + "." + name + ".tmp-XXXXXX";

  const int fd = mkstemp(temporary.data());
  if (fd < 0) {
    return "cannot write '" + path + "': cannot create a temporary file in '" + directory + "': " + errno_text();
  }
  const auto fail = [&](const std::string& what) -> std::optional<std::string> {
    const std::string message = "cannot write '" + path + "': " + what;
    ::close(fd);
    ::unlink(temporary.c_str());
    return message;
  };

  // mkstemp creates 0600; give the file the mode the replaced file had, or a new file's usual one.
  struct stat existing {};
  const mode_t mode = stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777)
                                                          : (0666 & ~current_umask());
  if (fchmod(fd, mode) != 0) return fail("cannot set permissions: " + errno_text());
  if (auto error = write_all(fd, text)) return fail(*error);
  if (fsync(fd) != 0) return fail("cannot flush to disk: " + errno_text());
  if (::close(fd) != 0) {
    const std::string message = "cannot write '" + path + "': " + errno_text();
    ::unlink(temporary.c_str());
    return message;
  }
  if (std::rename(temporary.c_str(), target.c_str()) != 0) {
    const std::string message = "cannot write '" + path + "': cannot replace it: " + errno_text();
    ::unlink(temporary.c_str());
    return message;
  }
  return std::nullopt;
}

std::optional<std::string> write_trace(const Trace& trace, const std::string& path) {
  std::string text;
  try {
    text = dump_trace(trace);
  } catch (const std::exception& error) {
    return "cannot write '" + path + "': " + error.what();
  }
  return write_file_atomically(path, text);
}

}  // namespace nimble::trace
