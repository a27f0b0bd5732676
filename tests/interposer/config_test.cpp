// Recording settings from the environment: values, defaults, and clear errors.
#include <gtest/gtest.h>

#include <map>
#include <string>

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
}

TEST(Config, OutputPathExpandsThePid) {
  EXPECT_EQ(expand_output_path("trace-%p.json", 42), "trace-42.json");
  EXPECT_EQ(expand_output_path("plain.json", 42), "plain.json");
  EXPECT_EQ(expand_output_path("%p/%p", 7), "7/7");
  EXPECT_EQ(expand_output_path("100%", 7), "100%");
}

}  // namespace
}  // namespace nimble::hooks
