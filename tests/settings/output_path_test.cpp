// Output paths per process: %p, %r, and the rank suffix a program of several ranks gets.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "settings/output_path.hpp"

namespace nimble::settings {
namespace {

ProcessIdentity who(std::map<std::string, std::string> env, long pid = 42) {
  return process_identity(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      pid);
}

TEST(OutputPath, PidAndRankArePlacedWhereThePatternSays) {
  const ProcessIdentity single = who({});
  EXPECT_EQ(expand_output_path("trace-%p.json", single), "trace-42.json");
  EXPECT_EQ(expand_output_path("plain.json", single), "plain.json");
  EXPECT_EQ(expand_output_path("%p/%p", who({}, 7)), "7/7");
  EXPECT_EQ(expand_output_path("100%", single), "100%");
  EXPECT_EQ(expand_output_path("t-%r.json", single), "t-0.json");  // no rank: 0
  const ProcessIdentity rank3 = who({{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(expand_output_path("t-%r.json", rank3), "t-3.json");
  EXPECT_EQ(expand_output_path("t-%p.json", rank3), "t-42.json");  // the pattern chose: no suffix
}

TEST(OutputPath, RanksOfOneProgramNeverShareAFile) {
  for (long rank = 0; rank < 2; ++rank) {
    const ProcessIdentity r = who({{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}});
    EXPECT_EQ(expand_output_path("out/trace.json", r), "out/trace.rank" + std::to_string(rank) + ".json");
    EXPECT_EQ(expand_output_path("trace", r), "trace.rank" + std::to_string(rank));
  }
  // One rank alone (torchrun --nproc_per_node 1) keeps the plain name.
  EXPECT_EQ(expand_output_path("trace.json", who({{"RANK", "0"}, {"WORLD_SIZE", "1"}})), "trace.json");
}

// A process with no rank whose file another live process of the program claimed first (workers
// of torch.multiprocessing.spawn): its own file beside it, named by its pid. A pattern that names
// the process, or a rank of several, needs no claim.
TEST(OutputPath, AProcessWhoseFileAnotherHoldsGetsItsPidBesideIt) {
  ProcessIdentity second = who({}, 77);
  EXPECT_FALSE(output_is_its_own("out/trace.json", second));
  second.output_held_elsewhere = true;
  EXPECT_EQ(expand_output_path("out/trace.json", second), "out/trace.pid77.json");
  EXPECT_EQ(expand_output_path("trace", second), "trace.pid77");
  EXPECT_EQ(expand_output_path("t-%p.json", second), "t-77.json");
  EXPECT_TRUE(output_is_its_own("t-%r.json", second));
  ProcessIdentity rank1 = who({{"RANK", "1"}, {"WORLD_SIZE", "2"}}, 77);
  EXPECT_TRUE(output_is_its_own("trace.json", rank1));
  rank1.output_held_elsewhere = true;
  EXPECT_EQ(expand_output_path("trace.json", rank1), "trace.rank1.json");  // the rank says it already
  EXPECT_EQ(pid_path("a.json", 5), "a.pid5.json");
}

TEST(OutputPath, LaunchersAreReadInOrderAndBadValuesIgnored) {
  EXPECT_EQ(who({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "8"}}).rank, 1);
  EXPECT_EQ(who({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "8"}}).world_size, 8);
  EXPECT_EQ(who({{"PMI_RANK", "5"}, {"PMI_SIZE", "6"}}).rank, 5);
  EXPECT_EQ(who({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}}).rank, 2);
  EXPECT_EQ(who({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "7"}}).rank, 0);  // torchrun's wins
  EXPECT_FALSE(who({{"RANK", "x"}}).rank);
  EXPECT_FALSE(who({{"RANK", "-1"}}).rank);
  EXPECT_FALSE(who({{"RANK", ""}}).rank);
  EXPECT_EQ(who({{"RANK", "1"}}).world_size, 1);  // no size: counts as alone
  EXPECT_EQ(rank_path("a.json", 3), "a.rank3.json");
}

}  // namespace
}  // namespace nimble::settings
