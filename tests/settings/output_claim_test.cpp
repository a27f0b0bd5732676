// Output claims (settings/output_claim.hpp): the first live process to claim a file writes it;
// another gets told so; the kernel lets a claim go when its holder closes it or ends.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "settings/output_claim.hpp"

namespace nimble::settings {
namespace {

// A path no other test holds (the claims are the machine's; a fixed name reuses one lock file).
std::string unique_path(const std::string& name) {
  return (std::filesystem::path("/tmp") / ("nimble-claim-test-" + name + ".json")).string();
}

TEST(OutputClaim, OneHolderAtATimeAndTheNameIsFreeOnceItsHolderLetsGo) {
  const std::string key = unique_path("hold");
  const int first = hold_claim(key);
  ASSERT_GE(first, 0) << std::strerror(errno);
  EXPECT_EQ(hold_claim(key), -1);
  EXPECT_EQ(errno, EADDRINUSE);
  EXPECT_GE(hold_claim(unique_path("other")), 0);  // another file: another name
  ::close(first);
  const int again = hold_claim(key);
  EXPECT_GE(again, 0) << std::strerror(errno);
  ::close(again);
}

// The process that claimed a file keeps it (asking again says so); a second process is refused
// while the first lives, and gets it once the first has ended.
TEST(OutputClaim, AnotherProcessIsRefusedWhileTheHolderLives) {
  const std::string path = unique_path("process");
  ASSERT_TRUE(claim_output(path));
  EXPECT_TRUE(claim_output(path));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(hold_claim(path) == -1 && errno == EADDRINUSE ? 0 : 1);  // (the child's map is the parent's)
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a second process could claim a held file";

  const std::string later = unique_path("ended");
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) _exit(claim_output(later) ? 0 : 1);
  ASSERT_EQ(waitpid(holder, &status, 0), holder);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(claim_output(later)) << "the claim outlived the process that made it";
}

// A run's claims folder (the commands make one): the first claim of a file is the only one, whoever
// asks later, even once its maker has ended; another file is claimed apart.
TEST(OutputClaim, AClaimInTheRunsFolderOutlivesItsMaker) {
  char folder[] = "/tmp/nimble-claims-test-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const pid_t maker = fork();
  ASSERT_GE(maker, 0);
  if (maker == 0) _exit(claim_in(folder, "/out/trace.json") ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(maker, &status, 0), maker);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(claim_in(folder, "/out/trace.json"));
  EXPECT_TRUE(claim_in(folder, "/out/other.json"));
  EXPECT_FALSE(claim_in(folder, "/out/other.json"));
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace nimble::settings
