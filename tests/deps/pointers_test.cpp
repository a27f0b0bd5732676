// Pointer resolution in kernel argument bytes.
#include <cstring>

#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr std::uint64_t kA = 0x7f0000100000;  // alloc 0, 0x100 bytes
constexpr std::uint64_t kB = 0x7f0000200000;  // alloc 1, 0x40 bytes

class Pointers : public ::testing::Test {
 protected:
  void SetUp() override {
    engine.allocated(kA, 0x100, AllocKind::Device, kLegacyStream);
    engine.allocated(kB, 0x40, AllocKind::Async, kLegacyStream);
  }
  template <typename T>
  void put(std::size_t offset, T value) {
    if (args.size() < offset + sizeof value) args.resize(offset + sizeof value, 0);
    std::memcpy(args.data() + offset, &value, sizeof value);
  }
  std::vector<MemAccess> resolve(const std::vector<ParamLayout>& params) {
    trace::ArgsRecord recorded;  // the hits as the trace writes them
    auto accesses = engine.resolve_pointers(args.data(), args.size(), params, &recorded.pointers);
    pointers = trace::to_json(recorded).value("pointers", trace::json::array());
    return accesses;
  }
  Engine engine;
  std::vector<std::uint8_t> args;
  trace::json pointers;
};

TEST_F(Pointers, PlainPointerResolvesToTheWholeAllocation) {
  put<std::uint64_t>(0, kA);
  auto acc = resolve({{0, 8}});
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].addr, kA);
  EXPECT_EQ(acc[0].size, 0x100u);
  EXPECT_EQ(acc[0].mode, Access::ReadWrite);
  EXPECT_FALSE(acc[0].everything);
  EXPECT_EQ(pointers, (trace::json::parse(R"([{"offset":0,"alloc":0,"alloc_offset":0}])")));
}

TEST_F(Pointers, PointerInsideAStructParameter) {
  // param 0: int at 0; param 1: 24-byte struct at 8 {int64 n; float* p; double x}.
  put<std::int32_t>(0, 7);
  put<std::int64_t>(8, 1234);
  put<std::uint64_t>(16, kB + 0x10);  // offset 8 inside the struct
  put<double>(24, 3.5);
  auto acc = resolve({{0, 4}, {8, 24}});
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].addr, kB);
  EXPECT_EQ(acc[0].size, 0x40u);
  EXPECT_EQ(pointers, (trace::json::parse(R"([{"offset":16,"alloc":1,"alloc_offset":16}])")));
}

TEST_F(Pointers, NonPointerValuesDoNotResolve) {
  put<std::uint64_t>(0, 0);
  put<std::uint64_t>(8, 42);
  put<double>(16, 1e300);
  put<std::uint64_t>(24, ~std::uint64_t{0});
  put<std::uint64_t>(32, kA - 1);  // just before the allocation
  auto acc = resolve({{0, 8}, {8, 8}, {16, 8}, {24, 8}, {32, 8}});
  EXPECT_TRUE(acc.empty());
  EXPECT_TRUE(pointers.empty());
}

TEST_F(Pointers, PointerJustPastTheEndDoesNotResolve) {
  put<std::uint64_t>(0, kA + 0x100);  // in the gap between the two allocations
  put<std::uint64_t>(8, kB + 0x40);   // past the highest allocation
  auto acc = resolve({{0, 8}, {8, 8}});
  EXPECT_TRUE(acc.empty());
  EXPECT_TRUE(pointers.empty());
}

TEST_F(Pointers, InteriorAndLastBytePointersResolve) {
  put<std::uint64_t>(0, kA + 0x80);
  put<std::uint64_t>(8, kB + 0x3f);
  auto acc = resolve({{0, 8}, {8, 8}});
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].addr, kA);
  EXPECT_EQ(acc[1].addr, kB);
  EXPECT_EQ(pointers[0].at("alloc_offset"), 0x80);
  EXPECT_EQ(pointers[1].at("alloc_offset"), 0x3f);
}

TEST_F(Pointers, OnlyAlignedWordsInsideParametersAreRead) {
  put<std::uint64_t>(0, 0);
  put<std::uint64_t>(4, kA);   // unaligned in the buffer: not a pointer slot
  put<std::uint64_t>(16, kB);  // outside every parameter
  auto acc = resolve({{0, 12}, {12, 4}});
  EXPECT_TRUE(acc.empty());
}

TEST_F(Pointers, SameAllocationTwiceGivesOneAccessAndTwoRecords) {
  put<std::uint64_t>(0, kA);
  put<std::uint64_t>(8, kA + 0x10);
  auto acc = resolve({{0, 8}, {8, 8}});
  EXPECT_EQ(acc.size(), 1u);
  EXPECT_EQ(pointers.size(), 2u);
}

TEST_F(Pointers, FreedAllocationDoesNotResolveAndReallocationGetsANewId) {
  engine.freed(kA, kLegacyStream);
  put<std::uint64_t>(0, kA);
  EXPECT_TRUE(resolve({{0, 8}}).empty());
  engine.allocated(kA, 0x20, AllocKind::Device, kLegacyStream);  // alloc 2
  auto acc = resolve({{0, 8}});
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].size, 0x20u);
  EXPECT_EQ(pointers[0].at("alloc"), 2);
}

TEST_F(Pointers, OverlappingAllocationReplacesAStaleOne) {
  // A free we never saw: the new allocation wins lookups.
  engine.allocated(kA + 0x80, 0x100, AllocKind::Device, kLegacyStream);  // alloc 2
  put<std::uint64_t>(0, kA + 0x10);
  put<std::uint64_t>(8, kA + 0x90);
  auto acc = resolve({{0, 8}, {8, 8}});
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(pointers.size(), 1u);
  EXPECT_EQ(pointers[0].at("alloc"), 2);
}

TEST_F(Pointers, AParameterLongerThanTheBytesIsReadOnlyAsFarAsTheyGo) {
  put<std::uint64_t>(0, kA);
  put<std::uint64_t>(8, kB);
  // The layout says 4 KB; only the first 8 bytes are there: the word at 8 is not read.
  auto acc = engine.resolve_pointers(args.data(), 8, {{0, 4096}}, nullptr);
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].addr, kA);
}

TEST_F(Pointers, NullArgumentsResolveNothing) {
  EXPECT_TRUE(engine.resolve_pointers(nullptr, 0, {{0, 8}}, nullptr).empty());
}

TEST_F(Pointers, ResolvedAccessesDriveDependencies) {
  engine.stream_created(0x10, 0x1, 0, 0);
  engine.stream_created(0x20, 0x1, 0, 0);
  engine.begin_window();
  put<std::uint64_t>(0, kA + 0x8);
  auto producer = launch(engine, 0x10, resolve({{0, 8}}));
  put<std::uint64_t>(0, kA + 0xf8);
  auto consumer = launch(engine, 0x20, resolve({{0, 8}}));
  auto t = engine.build_trace();
  EXPECT_EQ(deps_of(t, consumer), Ids{producer});
  EXPECT_EQ(reason(t, consumer, producer), "memory RAW alloc 0 +0x0..+0x100");
}

}  // namespace
}  // namespace nimble::deps::testing
