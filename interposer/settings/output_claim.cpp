#include "settings/output_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "settings/settings.hpp"

namespace nimble::settings {
namespace {

// FNV-1a (replayer/byte_hash.hpp's, which this CUDA-free library links nothing to reach).
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The file in `folder` that stands for `key`: named by its hash, whatever the key's length.
std::string claim_file(const std::string& folder, const std::string& key, const char* suffix) {
  char name[48];
  std::snprintf(name, sizeof name, "/%016llx.%s", static_cast<unsigned long long>(fnv1a(key)), suffix);
  return folder + name;
}

}  // namespace

int hold_claim(const std::string& key) {
  // /tmp, not $TMPDIR: every process of the program must meet the same lock whatever it was given.
  const std::string folder = "/tmp/nimble-claims-" + std::to_string(::getuid());
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  const int fd = ::open(claim_file(folder, key, "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno == EWOULDBLOCK ? EADDRINUSE : errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

bool claim_in(const std::string& folder, const std::string& key) {
  const int fd = ::open(claim_file(folder, key, "claim").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno != EEXIST;
  ::close(fd);
  return true;
}

bool claim_output(const std::string& path) {
  // Never destroyed: summaries are written by exit handlers, after static destructors may have run;
  // and the locks are held as long as the process lives anyway.
  static auto* mu = new std::mutex;
  static auto* claims = new std::map<std::string, bool>;
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  const std::string key = error ? path : absolute.lexically_normal().string();
  std::lock_guard<std::mutex> lock(*mu);
  if (auto it = claims->find(key); it != claims->end()) return it->second;
  const char* folder = std::getenv(output_claims.variable);
  const bool mine = (folder && *folder) ? claim_in(folder, key) : (hold_claim(key) >= 0 || errno != EADDRINUSE);
  claims->emplace(key, mine);
  return mine;
}

}  // namespace nimble::settings
