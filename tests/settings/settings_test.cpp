// The list of NIMBLE_* settings: what each kind accepts and refuses, that every default is a value
// its own check accepts, and that the docs list every setting with its default.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "deps/engine.hpp"
#include "settings/settings.hpp"

namespace nimble::settings {
namespace {

// parse() into a fresh value of `T` starting at `start`: {error, value}.
template <typename T>
std::pair<std::string, T> read(const Setting& setting, std::string_view text, T start) {
  std::string error = parse(setting, text, start);
  return {error, start};
}

TEST(Settings, SwitchIsOffOnlyForZero) {
  EXPECT_EQ(read(cupti, "0", true), (std::pair<std::string, bool>{"", false}));
  EXPECT_EQ(read(cupti, "yes", false), (std::pair<std::string, bool>{"", true}));
  EXPECT_EQ(read(debug, "1", false), (std::pair<std::string, bool>{"", true}));
  EXPECT_EQ(read(debug, "", true), (std::pair<std::string, bool>{"", true}));  // empty: unset
}

TEST(Settings, FlagIsZeroOrOne) {
  EXPECT_EQ(read(run_skip_library, "0", true), (std::pair<std::string, bool>{"", false}));
  EXPECT_EQ(read(run, "1", false), (std::pair<std::string, bool>{"", true}));
  EXPECT_EQ(read(run, "yes", false), (std::pair<std::string, bool>{"NIMBLE_RUN=yes is not 0 or 1", false}));
}

TEST(Settings, CountTakesPositiveIntegersUpToItsMaximumAndZeroWhereItMeansSomething) {
  EXPECT_EQ(read(run_trial, "1000", 4).second, 1000);
  EXPECT_EQ(read(run_trial, "0", 4), (std::pair<std::string, int>{"", 0}));
  EXPECT_EQ(read(run_trial, "1001", 4),
            (std::pair<std::string, int>{
                "NIMBLE_RUN_TRIAL=1001 is not a number of iterations per block (a positive integer, at most 1000, or 0 for no trial)",
                4}));
  EXPECT_EQ(read(run_variants, "0", 4).first,
            "NIMBLE_RUN_VARIANTS=0 is not a number of execs per graph (a positive integer, at most 64)");
  EXPECT_EQ(read(run_compare, "x", 0).first,
            "NIMBLE_RUN_COMPARE=x is not a number of iterations per block (a positive integer, or 0)");
  EXPECT_EQ(read(iteration, "0", 1).first, "NIMBLE_ITERATION=0 is not a positive integer");
  EXPECT_EQ(read(run_stale, "999999999", 1024).second, 999999999);
  // A count is an int: up to its largest value, and past it the cap is named.
  EXPECT_EQ(read(run_stale, "1000000000", 1024).second, 1000000000);
  EXPECT_EQ(read(run_stale, "2147483647", 1024).second, 2147483647);
  EXPECT_EQ(read(run_stale, "2147483648", 1024),
            (std::pair<std::string, int>{"NIMBLE_RUN_STALE=2147483648 is not a number of calls (a positive integer, at most 2147483647)", 1024}));
  EXPECT_NE(read(run_stale, "99999999999999999999999", 1024).first.find("at most 2147483647"), std::string::npos);
  for (const char* bad : {"-1", "1.5", " 5", "5x", "00", "2147483648", "4294967297"}) {
    const auto [error, value] = read(run_piece, bad, 16);
    EXPECT_EQ(error.rfind(std::string("NIMBLE_RUN_PIECE=") + bad + " is not a number of ops", 0), 0u) << error;
    EXPECT_EQ(value, 16) << bad;  // a refused value leaves the default
  }
}

TEST(Settings, RatioIsANumberInItsRange) {
  EXPECT_DOUBLE_EQ(read(run_min_speedup, "1.2", 1.05).second, 1.2);
  EXPECT_DOUBLE_EQ(read(run_min_speedup, "100", 1.05).second, 100.0);
  for (const char* bad : {"fast", "1.0x", "-0.5", "100.5", "nan"}) {
    const auto [error, value] = read(run_min_speedup, bad, 1.05);
    EXPECT_EQ(error, std::string("NIMBLE_RUN_MIN_SPEEDUP=") + bad + " is not a ratio (a number from 0 to 100, e.g. 1.0)");
    EXPECT_DOUBLE_EQ(value, 1.05);
  }
}

TEST(Settings, ChoiceIsOneOfItsNamesOrAPrefixedName) {
  EXPECT_EQ(read(range_text, "nvtx:train_step", std::string()).second, "nvtx:train_step");
  EXPECT_EQ(read(range_text, "auto", std::string()).second, "auto");
  for (const char* bad : {"nvtx:", "nvtx", "Auto", "NAME"}) {
    EXPECT_EQ(read(range_text, bad, std::string("x")),
              (std::pair<std::string, std::string>{
                  std::string("NIMBLE_CAPTURE_RANGE=") + bad + " is not one of cudaProfilerApi, auto, nvtx:NAME", "x"}));
  }
  // Another name for a choice is accepted but never shown.
  EXPECT_EQ(read(dependencies, "keep", std::string()).second, "keep");
  EXPECT_EQ(choices(dependencies), (std::vector<std::string>{"stream-order", "memory"}));
  EXPECT_EQ(accepted(dependencies), "one of stream-order, memory");
}

TEST(Settings, TextIsAnything) {
  EXPECT_EQ(read(output, "out-%p.json", std::string()).second, "out-%p.json");
  EXPECT_EQ(read(output, "", std::string("kept")).second, "kept");
}

// Each default, read back through its own check, is the typed default: the list cannot hold a
// default its own variable would refuse.
TEST(Settings, EveryDefaultIsAValueItsCheckAccepts) {
// (k, not kind: a parameter named like a field would replace the field's name too.)
#define NIMBLE_SETTING(member, variable, k, value, help)                                                     \
  {                                                                                                          \
    using Value = std::conditional_t<Kind::k == Kind::Text || Kind::k == Kind::Choice || Kind::k == Kind::ByHand, \
                                     std::string, ValueOf<Kind::k>::type>;                                   \
    SCOPED_TRACE(#variable);                                                                                 \
    EXPECT_EQ(member.kind, Kind::k);                                                                         \
    if constexpr (Kind::k != Kind::ByHand) {                                                                 \
      Value read_back{};                                                                                     \
      EXPECT_EQ(parse(member, member.default_text, read_back), "");                                          \
      if (*member.default_text) {                                                                            \
        EXPECT_EQ(read_back, Value(defaults::member));                                                       \
      }                                                                                                      \
    }                                                                                                        \
  }
#include "settings/settings.def"
}

TEST(Settings, FindAndAssignment) {
  ASSERT_NE(find("NIMBLE_RUN_PIECE"), nullptr);
  EXPECT_STREQ(find("NIMBLE_RUN_PIECE")->unit, "ops");
  EXPECT_EQ(find("NIMBLE_NOTHING"), nullptr);
  EXPECT_EQ(assignment(run_recordings), "NIMBLE_RUN_RECORDINGS=4");
  EXPECT_EQ(assignment(run, "1"), "NIMBLE_RUN=1");
  std::set<std::string_view> names;
  for (const Setting& s : all) EXPECT_TRUE(names.insert(s.variable).second) << s.variable << " twice";
}

TEST(Settings, DependencyChoicesAreTheEnginesPolicies) {
  for (const char* name : {"stream-order", "keep", "memory"}) {
    EXPECT_TRUE(is_choice(dependencies, name)) << name;
    EXPECT_TRUE(deps::parse_stream_order_policy(name)) << name;
  }
  EXPECT_TRUE(deps::parse_stream_order_policy(defaults::dependencies));
}

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(NIMBLE_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// docs/recording.md's table has a row for every setting that states its default (and the largest
// value a count takes), and no row for a NIMBLE_ variable the list lacks.
TEST(Settings, RecordingDocListsEverySettingWithItsDefault) {
  const std::string doc = read_doc("recording.md");
  ASSERT_FALSE(doc.empty());
  std::map<std::string, std::string> rows;  // variable -> its table row
  std::istringstream lines(doc);
  const std::regex row_start("^\\| `(NIMBLE_[A-Z0-9_]+)` \\|");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row_start)) {
      EXPECT_NE(find(m[1].str()), nullptr) << m[1] << " is documented but not in settings.def";
      rows[m[1].str()] = line;
    }
  }
  for (const Setting& s : all) {
    SCOPED_TRACE(s.variable);
    ASSERT_TRUE(rows.count(s.variable)) << "no row in docs/recording.md's settings table";
    const std::string& row = rows[s.variable];
    const std::string d = s.default_text;
    if (!d.empty()) {
      EXPECT_TRUE(row.find("default " + d) != std::string::npos || row.find("default `" + d + "`") != std::string::npos ||
                  row.find("`" + d + "` (default") != std::string::npos)
          << "the default " << d << " is not stated in: " << row;
    }
    if (s.kind == Kind::Count && s.max) {
      EXPECT_NE(row.find(std::to_string(s.max)), std::string::npos) << "the largest value is not stated in: " << row;
    }
  }
}

// Where the prose names a setting's value next to it ("`NIMBLE_RUN_TRIAL` (4)", "4 execs
// (`NIMBLE_RUN_VARIANTS`)"), the value is the default.
TEST(Settings, DocsNameDefaultsTheListHas) {
  const std::regex after("`(NIMBLE_[A-Z0-9_]+)`,? \\(?([0-9][0-9.]*[0-9]|[0-9])");
  const std::regex before("([0-9][0-9.]*[0-9]|[0-9]) [a-z ]{0,20}\\(`(NIMBLE_[A-Z0-9_]+)`\\)");
  int seen = 0;
  for (const char* name : {"recording.md", "replay.md"}) {
    const std::string doc = read_doc(name);
    for (const auto& [pattern, variable, value] : {std::tuple{&after, 1, 2}, std::tuple{&before, 2, 1}}) {
      for (std::sregex_iterator m(doc.begin(), doc.end(), *pattern), end; m != end; ++m, ++seen) {
        const Setting* s = find((*m)[variable].str());
        ASSERT_NE(s, nullptr) << m->str();
        EXPECT_EQ((*m)[value].str(), s->default_text) << name << ": " << m->str();
      }
    }
  }
  EXPECT_GE(seen, 4);  // the pattern still finds what it was written for
}

}  // namespace
}  // namespace nimble::settings
