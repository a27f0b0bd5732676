#include "test_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace nimble::test {

RunResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv) {
  const std::string log = temp_dir() + "/output.txt";
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    // Drop any NIMBLE_* or LD_PRELOAD of the test runner itself.
    if (std::strncmp(*e, "NIMBLE_", 7) == 0 || std::strncmp(*e, "LD_PRELOAD=", 11) == 0) continue;
    env_strings.emplace_back(*e);
  }
  for (const auto& e : env) env_strings.push_back(e);
#ifdef NIMBLE_ASAN_RUNTIME
  // Sanitized build: the sanitized libnimble.so needs the ASan runtime loaded before it, also in
  // programs that are not sanitized (sh, python3: named without a path). In those, LeakSanitizer
  // would report the program's own memory at exit, not nimble's, so their leak check is off;
  // nimble's leaks are checked in the sanitized programs (probe_app, nimble).
  bool preloaded = false;
  for (auto& e : env_strings) {
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      e.insert(11, NIMBLE_ASAN_RUNTIME ":");
      preloaded = true;
    }
  }
  if (preloaded && argv[0].find('/') == std::string::npos) {
    auto options = std::find_if(env_strings.begin(), env_strings.end(),
                                [](const std::string& e) { return e.rfind("ASAN_OPTIONS=", 0) == 0; });
    if (options == env_strings.end()) env_strings.push_back("ASAN_OPTIONS=detect_leaks=0");
    else *options += ":detect_leaks=0";
  }
#endif
  std::vector<char*> envp, args;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  RunResult result;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    result.output = "could not start " + argv[0];
    return result;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  result.output = ss.str();
  return result;
}

std::string preload_path() { return NIMBLE_TEST_PRELOAD; }
std::string fake_driver_path() { return NIMBLE_TEST_FAKE_DRIVER; }
std::string probe_path() { return NIMBLE_TEST_PROBE; }

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "nimble-test-XXXXXX").string();
  char* dir = mkdtemp(pattern.data());
  return dir ? std::string(dir) : std::string("/tmp");
}

std::vector<std::string> record_env(const std::string& output, const std::string& range) {
  std::vector<std::string> env = {"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path(),
                                  "NIMBLE_MODE=record", "NIMBLE_OUTPUT=" + output};
  if (!range.empty()) env.push_back("NIMBLE_CAPTURE_RANGE=" + range);
  return env;
}

}  // namespace nimble::test
