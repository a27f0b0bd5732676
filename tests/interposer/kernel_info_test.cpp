// Kernel names and argument bytes, without a driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "kernel_info.hpp"

namespace nimble::hooks {
namespace {

TEST(Demangle, CxxNamesAreDemangledOthersKept) {
  EXPECT_EQ(demangle("_Z5scalePKfPfi"), "scale(float const*, float*, int)");
  EXPECT_EQ(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"),
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle(nullptr), "");
}

KernelInfo layout(std::vector<deps::ParamLayout> params) {
  KernelInfo k;
  k.params_known = true;
  k.params = std::move(params);
  for (const auto& p : k.params) k.arg_bytes = std::max<std::size_t>(k.arg_bytes, p.offset + p.size);
  return k;
}

TEST(GatherArguments, KernelParamsArePlacedAtTheirOffsets) {
  const KernelInfo k = layout({{0, 8}, {8, 4}, {16, 8}});
  std::uint64_t a = 0x1122334455667788ULL, c = 0xdeadbeefULL;
  int b = 7;
  void* params[] = {&a, &b, &c};
  const auto bytes = gather_arguments(k, params, nullptr);
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 24u);
  EXPECT_EQ(to_hex(bytes->data(), bytes->size()),
            "8877665544332211" "07000000" "00000000" "efbeadde00000000");
}

TEST(GatherArguments, ExtraBufferIsTakenAsIs) {
  const KernelInfo k = layout({{0, 8}, {8, 4}});
  struct { std::uint64_t p; int n; int pad; } buffer{0xabcdef, 3, 0};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  const auto bytes = gather_arguments(k, nullptr, extra);
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 16u);
  std::uint64_t p = 0;
  std::memcpy(&p, bytes->data(), 8);
  EXPECT_EQ(p, 0xabcdefu);
}

// NCCL's kernels declare one 4 KB argument (ncclDevKernelArgsStorage<4096>) and launch with an
// `extra` buffer of the bytes they use (512 seen on an H200). The bytes reach the layout's end,
// the tail zero, so no reader of the layout runs past them.
TEST(GatherArguments, AnExtraBufferShorterThanTheLayoutIsPaddedToItsEnd) {
  const KernelInfo k = layout({{0, 4096}});
  std::vector<std::uint8_t> used(512, 0xab);
  size_t size = used.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, used.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  std::size_t passed = 0;
  const auto bytes = gather_arguments(k, nullptr, extra, &passed);
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 4096u);
  EXPECT_EQ(passed, 512u);  // recorded as args.passed_bytes
  EXPECT_TRUE(std::equal(used.begin(), used.end(), bytes->begin()));
  EXPECT_TRUE(std::all_of(bytes->begin() + 512, bytes->end(), [](std::uint8_t b) { return b == 0; }));
  // Without a layout the buffer is all there is.
  EXPECT_EQ(gather_arguments(KernelInfo{}, nullptr, extra)->size(), 512u);
}

TEST(GatherArguments, UnknownLayoutIsReportedNotGuessed) {
  KernelInfo k;  // the driver could not report a layout
  void* params[] = {nullptr};
  EXPECT_FALSE(gather_arguments(k, params, nullptr));
  // No parameters at all is a known, empty layout.
  EXPECT_TRUE(gather_arguments(layout({}), nullptr, nullptr)->empty());
}

TEST(GatherArguments, AnExtraBufferOfUnknownSizeIsUnknownAndAnUnterminatedListStops) {
  std::uint64_t buffer[2] = {1, 2};
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_END};
  // Neither the list nor a layout gives its size: unknown (the task then touches everything).
  EXPECT_FALSE(gather_arguments(KernelInfo{}, nullptr, no_size));
  // With a known layout its end is the size.
  const auto sized = gather_arguments(layout({{0, 8}, {8, 8}}), nullptr, no_size);
  ASSERT_TRUE(sized);
  EXPECT_EQ(sized->size(), 16u);
  // A list with no CU_LAUNCH_PARAM_END within 32 pairs is not read past them.
  void* endless[70];
  for (void*& e : endless) e = reinterpret_cast<void*>(0x77);
  EXPECT_FALSE(gather_arguments(KernelInfo{}, nullptr, endless));
}

TEST(Hex, Formatting) {
  const std::uint8_t bytes[] = {0x00, 0x0f, 0xa0, 0xff};
  EXPECT_EQ(to_hex(bytes, 4), "000fa0ff");
  EXPECT_EQ(hex_address(0x7f00), "0x7f00");
}

}  // namespace
}  // namespace nimble::hooks
