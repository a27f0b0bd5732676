// Recording settings from the environment: values, defaults, and clear errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "config.hpp"

namespace nimble::hooks {
namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Config, IdleByDefault) {
  const Config c = parse({});
  EXPECT_FALSE(c.record);
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.range, CaptureRange::ProfilerApi);
  EXPECT_EQ(c.iteration, 1);
}

TEST(Config, RecordWithEveryOption) {
  const Config c = parse({{"NIMBLE_MODE", "record"},
                          {"NIMBLE_OUTPUT", "out-%p.json"},
                          {"NIMBLE_CAPTURE_RANGE", "nvtx:train_step"},
                          {"NIMBLE_ITERATION", "4"},
                          {"NIMBLE_CUPTI", "0"}});
  EXPECT_TRUE(c.record);
  EXPECT_EQ(c.output, "out-%p.json");
  EXPECT_EQ(c.range, CaptureRange::Nvtx);
  EXPECT_EQ(c.nvtx_name, "train_step");
  EXPECT_EQ(c.iteration, 4);
  EXPECT_FALSE(c.cupti);
  EXPECT_EQ(parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_CAPTURE_RANGE", "auto"}}).range, CaptureRange::Auto);
}

TEST(Config, BadValuesTurnRecordingOffWithAReason) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_CAPTURE_RANGE", "nvtx:"}});
  EXPECT_FALSE(c.record);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("cudaProfilerApi, auto, nvtx:NAME"), std::string::npos);

  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_ITERATION", "0"}});
  EXPECT_FALSE(c.record);
  EXPECT_NE(c.errors.at(0).find("positive integer"), std::string::npos);

  c = parse({{"NIMBLE_MODE", "replay"}});
  EXPECT_FALSE(c.record);
  EXPECT_NE(c.errors.at(0).find("NIMBLE_MODE=replay"), std::string::npos);

  EXPECT_TRUE(parse({{"NIMBLE_MODE", "off"}}).errors.empty());

  // A function nimble run cannot skip (a typo, or a call with no key) is named, with those it can.
  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN_SKIP_CALLS", "cublasLtMatmul,cudnnBackendExcute"}});
  EXPECT_FALSE(c.record);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("names cudnnBackendExcute, which nimble run cannot skip (it can skip calls of: "),
            std::string::npos)
      << c.errors[0];
  EXPECT_NE(c.errors[0].find("cudnnBackendExecute"), std::string::npos) << c.errors[0];
  EXPECT_TRUE(parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN_SKIP_CALLS", "none"}}).errors.empty());
  EXPECT_TRUE(parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN_SKIP_CALLS", "cudnnBackendExecute, cublasLtMatmul"}})
                  .errors.empty());
}

TEST(Config, BenchIsOffByDefault) {
  const Config c = parse({{"NIMBLE_MODE", "record"}});
  EXPECT_EQ(c.bench_iterations, 0);
  EXPECT_TRUE(c.bench_output.empty());
}

TEST(Config, BenchCountParses) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "50"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.record);
  EXPECT_EQ(c.bench_iterations, 50);

  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "100000"}});  // the largest allowed
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.record);
  EXPECT_EQ(c.bench_iterations, 100000);
}

TEST(Config, BenchZeroMeansOff) {
  const Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "0"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.record);  // recording without the bench
  EXPECT_EQ(c.bench_iterations, 0);
}

TEST(Config, BenchBadCountsAreErrorsAndTurnRecordingOff) {
  for (const char* bad : {"abc", "-5", "5x", " 5", "1.5"}) {
    const Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", bad}});
    EXPECT_FALSE(c.record) << bad;
    ASSERT_EQ(c.errors.size(), 1u) << bad;
    EXPECT_NE(c.errors[0].find(std::string("NIMBLE_BENCH=") + bad), std::string::npos) << c.errors[0];
    EXPECT_NE(c.errors[0].find("positive integer"), std::string::npos) << c.errors[0];
    EXPECT_EQ(c.bench_iterations, 0) << bad;
  }
}

TEST(Config, BenchTooManyReplaysIsAnError) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "100001"}});
  EXPECT_FALSE(c.record);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("NIMBLE_BENCH=100001"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[0].find("at most 100000"), std::string::npos) << c.errors[0];

  // Past what an int holds: refused too, never wrapped around to a small count.
  for (const char* huge : {"9999999999", "4294967346", "99999999999999999999"}) {
    c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", huge}});
    EXPECT_FALSE(c.record) << huge;
    ASSERT_EQ(c.errors.size(), 1u) << huge;
    EXPECT_NE(c.errors[0].find(std::string("NIMBLE_BENCH=") + huge), std::string::npos) << c.errors[0];
  }
}

TEST(Config, BenchOutputOverridesThePathBesideTheTrace) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "5"}, {"NIMBLE_BENCH_OUTPUT", "/results/run1.json"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.bench_output, "/results/run1.json");
  EXPECT_EQ(bench_output_path(c, "/traces/t.json"), "/results/run1.json");
}

TEST(Config, BenchOutputDefaultsToBesideTheTrace) {
  const Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "5"}});
  EXPECT_EQ(bench_output_path(c, "/traces/t.json"), "/traces/t.bench.json");
  EXPECT_EQ(bench_output_path(c, "a/t.json"), "a/t.bench.json");
  EXPECT_EQ(bench_output_path(c, "trace"), "trace.bench.json");
  // An empty NIMBLE_BENCH_OUTPUT is the same as none.
  const Config empty = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH_OUTPUT", ""}});
  EXPECT_EQ(bench_output_path(empty, "/traces/t.json"), "/traces/t.bench.json");
}



TEST(Config, RunModeAndItsOptions) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.run);
  EXPECT_EQ(c.run_piece, 16);
  EXPECT_EQ(c.run_max_streams, 1);
  EXPECT_EQ(c.run_variants, 4);
  EXPECT_EQ(run_output_path(c, "/tmp/t.json"), "/tmp/t.run.json");
  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}, {"NIMBLE_RUN_PIECE", "0"}, {"NIMBLE_RUN_MAX_STREAMS", "4"},
             {"NIMBLE_RUN_VARIANTS", "1"}, {"NIMBLE_RUN_OUTPUT", "/tmp/s.json"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.run_piece, 0);
  EXPECT_EQ(c.run_max_streams, 4);
  EXPECT_EQ(c.run_variants, 1);
  EXPECT_EQ(run_output_path(c, "/tmp/t.json"), "/tmp/s.json");
  EXPECT_FALSE(parse({{"NIMBLE_MODE", "record"}}).run);
  for (const auto& [name, bad] : std::vector<std::pair<const char*, const char*>>{
           {"NIMBLE_RUN", "yes"}, {"NIMBLE_RUN_PIECE", "-3"}, {"NIMBLE_RUN_MAX_STREAMS", "0"},
           {"NIMBLE_RUN_VARIANTS", "0"}, {"NIMBLE_RUN_VARIANTS", "65"}}) {
    c = parse({{"NIMBLE_MODE", "record"}, {name, bad}, {"NIMBLE_RUN", "1"}});  // the first of a name counts
    EXPECT_FALSE(c.record) << name;
    ASSERT_EQ(c.errors.size(), 1u) << name;
    EXPECT_NE(c.errors[0].find(std::string(name) + "=" + bad), std::string::npos) << c.errors[0];
  }
  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}, {"NIMBLE_BENCH", "5"}});
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("exclusive"), std::string::npos);
}

TEST(Config, RunRecordingsTrialAndStaleness) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}});
  EXPECT_EQ(c.run_recordings, 4);
  EXPECT_EQ(c.run_trial, 4);
  EXPECT_DOUBLE_EQ(c.run_min_speedup, 1.05);
  EXPECT_EQ(c.run_stale, 1024);
  c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}, {"NIMBLE_RUN_RECORDINGS", "16"}, {"NIMBLE_RUN_TRIAL", "0"},
             {"NIMBLE_RUN_MIN_SPEEDUP", "1.2"}, {"NIMBLE_RUN_STALE", "64"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.run_recordings, 16);
  EXPECT_EQ(c.run_trial, 0);
  EXPECT_DOUBLE_EQ(c.run_min_speedup, 1.2);
  EXPECT_EQ(c.run_stale, 64);
  for (const auto& [name, bad] : std::vector<std::pair<const char*, const char*>>{
           {"NIMBLE_RUN_RECORDINGS", "0"}, {"NIMBLE_RUN_RECORDINGS", "17"}, {"NIMBLE_RUN_TRIAL", "-1"},
           {"NIMBLE_RUN_MIN_SPEEDUP", "fast"}, {"NIMBLE_RUN_MIN_SPEEDUP", "1.0x"}, {"NIMBLE_RUN_STALE", "0"}}) {
    c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_RUN", "1"}, {name, bad}});
    EXPECT_FALSE(c.record) << name;
    ASSERT_EQ(c.errors.size(), 1u) << name << "=" << bad;
    EXPECT_NE(c.errors[0].find(std::string(name) + "=" + bad), std::string::npos) << c.errors[0];
  }
}

TEST(Config, BenchMaxStreamsCapsTheScheduleOrIsAnError) {
  Config c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH", "5"}, {"NIMBLE_BENCH_MAX_STREAMS", "8"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.bench_max_streams, 8);
  EXPECT_EQ(parse({{"NIMBLE_MODE", "record"}}).bench_max_streams, 8);
  EXPECT_EQ(parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH_MAX_STREAMS", "0"}}).bench_max_streams, 0);
  for (const char* bad : {"-1", "eight", "1025"}) {
    c = parse({{"NIMBLE_MODE", "record"}, {"NIMBLE_BENCH_MAX_STREAMS", bad}});
    EXPECT_FALSE(c.record) << bad;
    ASSERT_EQ(c.errors.size(), 1u) << bad;
    EXPECT_NE(c.errors[0].find(std::string("NIMBLE_BENCH_MAX_STREAMS=") + bad), std::string::npos) << c.errors[0];
  }
}

// Every setting of the list through parse_config (settings.def): unset, Config holds the list's
// default; a value its kind accepts reaches its member; one its kind refuses is one error naming
// the variable and the value, leaves the default, and turns recording off.
template <typename T>
void check_setting(const settings::Setting& setting, T Config::*member, const std::string& good, T good_value,
                   std::vector<std::string> bad) {
  SCOPED_TRACE(setting.variable);
  const Config c = parse({{"NIMBLE_MODE", "record"}, {setting.variable, good}});
  EXPECT_TRUE(c.errors.empty()) << good << ": " << (c.errors.empty() ? "" : c.errors[0]);
  EXPECT_EQ(c.*member, good_value) << good;
  for (const std::string& value : bad) {
    const Config refused = parse({{"NIMBLE_MODE", "record"}, {setting.variable, value}});
    EXPECT_FALSE(refused.record) << value;
    ASSERT_EQ(refused.errors.size(), 1u) << value;
    EXPECT_EQ(refused.errors[0].rfind(std::string(setting.variable) + "=" + value + " is not ", 0), 0u) << refused.errors[0];
    EXPECT_EQ(refused.*member, parse({}).*member) << value;
  }
}

TEST(Config, EverySettingOfTheListDefaultsParsesAndRefuses) {
  const Config idle = parse({});
#define NIMBLE_SETTING(member, variable, kind, value, help) EXPECT_EQ(idle.member, settings::defaults::member) << #variable;
#define NIMBLE_BY_HAND(...)
#include "settings/settings.def"

  // Per kind: a value it accepts that is not the default, and values it refuses.
#define NIMBLE_SWITCH(member, variable, value, help) \
  check_setting<bool>(settings::member, &Config::member, value ? "0" : "yes", !value, {});
#define NIMBLE_FLAG(member, variable, value, help) \
  check_setting<bool>(settings::member, &Config::member, value ? "0" : "1", !value, {"2", "yes", "-1"});
#define NIMBLE_COUNT(member, variable, value, max, zero, unit, help)                                            \
  check_setting<int>(settings::member, &Config::member, std::to_string(max ? max : 2147483647), max ? max : 2147483647, \
                     {"x", "-1", "1.5", "2147483648", max ? std::to_string(max + 1) : "4294967297",             \
                      zero ? "00" : "0"});
#define NIMBLE_RATIO(member, variable, value, low, high, help) \
  check_setting<double>(settings::member, &Config::member, "2.5", 2.5, {"fast", "1.0x", std::to_string(high + 1)});
// (NIMBLE_RUN_SKIP_CALLS is text checked after parsing: names of functions nimble run can skip.)
#define NIMBLE_TEXT(member, variable, value, help)                                                         \
  if (std::string_view(#variable) == "NIMBLE_RUN_SKIP_CALLS") {                                           \
    check_setting<std::string>(settings::member, &Config::member, "none", "none", {});                    \
  } else {                                                                                                 \
    check_setting<std::string>(settings::member, &Config::member, "some/path-%p.json", "some/path-%p.json", {}); \
  }
#define NIMBLE_CHOICE(member, variable, value, names, help)                                                     \
  check_setting<std::string>(settings::member, &Config::member, settings::choices(settings::member).back(),     \
                             settings::choices(settings::member).back(), {"bogus", "Auto"});
#define NIMBLE_BY_HAND(...)
#include "settings/settings.def"
}

}  // namespace
}  // namespace nimble::hooks
