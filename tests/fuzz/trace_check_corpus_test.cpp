// The committed fuzz corpus (tests/fuzz/corpus/trace_check) through the fuzz target, in the normal
// build (g++, no libFuzzer): every file runs without a crash or a broken promise of parse_trace.
// Files named valid-* must load, invalid-* must be rejected; the others (reproducers the fuzzer
// found) only must not crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nimble/trace/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(NIMBLE_FUZZ_CORPUS_DIR)) {
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_file(const std::string& name) {
  std::ifstream in(fs::path(NIMBLE_FUZZ_CORPUS_DIR) / name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class TraceCheckCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(TraceCheckCorpus, RunsCleanly) {
  const std::string text = read_file(GetParam());
  EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), 0);
  const auto result = nimble::trace::parse_trace(text);
  if (GetParam().rfind("valid-", 0) == 0) {
    EXPECT_TRUE(result.trace.has_value()) << result.diagnostics.format(GetParam());
  } else if (GetParam().rfind("invalid-", 0) == 0) {
    EXPECT_FALSE(result.trace.has_value());
    EXPECT_TRUE(result.diagnostics.has_errors());
  }
}

// Test names from file names: letters, digits and '_' only.
std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, TraceCheckCorpus, ::testing::ValuesIn(corpus_files()), test_name);

TEST(TraceCheckCorpusSize, SmallEnoughToCommitAndBigEnoughToMatter) {
  std::uintmax_t bytes = 0;
  const auto files = corpus_files();
  for (const auto& name : files) bytes += fs::file_size(fs::path(NIMBLE_FUZZ_CORPUS_DIR) / name);
  EXPECT_GE(files.size(), 20u);
  EXPECT_LT(files.size(), 200u);
  EXPECT_LT(bytes, std::uintmax_t{1} << 20);
}

}  // namespace
