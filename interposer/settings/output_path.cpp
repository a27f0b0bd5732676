#include "settings/output_path.hpp"

#include <cerrno>
#include <cstdlib>

namespace nimble::settings {
namespace {

std::optional<long> number(const char* text) {
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) return std::nullopt;
  return value;
}

}  // namespace

ProcessIdentity process_identity(const std::function<const char*(const char*)>& getenv, long pid) {
  static const char* const kLaunchers[][2] = {{"RANK", "WORLD_SIZE"},
                                              {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                              {"PMI_RANK", "PMI_SIZE"},
                                              {"SLURM_PROCID", "SLURM_NTASKS"}};
  ProcessIdentity who;
  who.pid = pid;
  for (const auto& [rank, size] : kLaunchers) {
    if (auto r = number(getenv(rank))) {
      who.rank = *r;
      who.world_size = number(getenv(size)).value_or(1);
      break;
    }
  }
  return who;
}

namespace {

// TRACE.json -> TRACE<tag>.json (else the tag appended).
std::string tagged_path(const std::string& path, const std::string& tag) {
  const std::string suffix = ".json";
  if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return path.substr(0, path.size() - suffix.size()) + tag + suffix;
  }
  return path + tag;
}

bool names_the_process(const std::string& pattern) {
  for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '%' && (pattern[i + 1] == 'p' || pattern[i + 1] == 'r')) return true;
  }
  return false;
}

bool one_rank_of_several(const ProcessIdentity& who) { return who.rank && who.world_size > 1; }

}  // namespace

std::string rank_path(const std::string& path, long rank) { return tagged_path(path, ".rank" + std::to_string(rank)); }

std::string pid_path(const std::string& path, long pid) { return tagged_path(path, ".pid" + std::to_string(pid)); }

bool output_is_its_own(const std::string& pattern, const ProcessIdentity& who) {
  return names_the_process(pattern) || one_rank_of_several(who);
}

std::string expand_output_path(const std::string& pattern, const ProcessIdentity& who) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && (next == 'p' || next == 'r')) {
      out += std::to_string(next == 'p' ? who.pid : who.rank.value_or(0));
      ++i;
    } else {
      out += pattern[i];
    }
  }
  if (names_the_process(pattern)) return out;
  if (one_rank_of_several(who)) return rank_path(out, *who.rank);
  if (who.output_held_elsewhere) return pid_path(out, who.pid);
  return out;
}

}  // namespace nimble::settings
