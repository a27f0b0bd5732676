#include <gtest/gtest.h>

#include "export_test_support.hpp"
#include "nimble/export/dot.hpp"
#include "nimble/export/names.hpp"

namespace nimble::exporter {
namespace {

using export_test::make_task;

TEST(ShortenKernelName, DropsReturnTypeParametersNamespacesAndLongTemplates) {
  EXPECT_EQ(shorten_kernel_name(
                "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
                "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
                "const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous "
                "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
                "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
                "const::{lambda(float)#1}, std::array<char*, 2ul>)"),
            "vectorized_elementwise_kernel<...>");
  EXPECT_EQ(shorten_kernel_name("void at::native::(anonymous namespace)::max_pool_forward_nchw<float>(int, "
                                "float const*, long, long, long, int, int, int, int, int, int, int, int, "
                                "int, int, float*, long*)"),
            "max_pool_forward_nchw<float>");
  EXPECT_EQ(shorten_kernel_name("void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, "
                                "cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, "
                                "float const*, float const*, float const*, float)"),
            "bn_fw_inf_1C11_kernel_NCHW<...>");  // 49 characters with the arguments: too long for 48
  EXPECT_EQ(shorten_kernel_name("void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float)", 64),
            "bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>");
  EXPECT_EQ(shorten_kernel_name("scale_kernel(float*, float, int)"), "scale_kernel");
  EXPECT_EQ(shorten_kernel_name("vector_add(float const*, float const*, float*, int)"), "vector_add");
  EXPECT_EQ(shorten_kernel_name("vector_add"), "vector_add");
  EXPECT_EQ(shorten_kernel_name("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::"
                                "MmaPipelined<int>, 1> >(cutlass::gemm::kernel::Gemm<int>::Params)"),
            "Kernel<...>");
}

TEST(ShortenKernelName, CapsLengthKeepingBothEnds) {
  const std::string cudnn =
      "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x64x32_stage5_warpsize2x2x1_g1_"
      "tensor16x8x8_execute_kernel__5x_cudnn";
  const std::string short_name = shorten_kernel_name(cudnn, 40);
  EXPECT_EQ(short_name.size(), 40u);
  EXPECT_EQ(short_name.rfind("sm90_xmma_fprop", 0), 0u) << short_name;
  EXPECT_NE(short_name.find("..."), std::string::npos);
  EXPECT_EQ(short_name.substr(short_name.size() - 5), "cudnn");
  EXPECT_LE(shorten_kernel_name(cudnn, 8).size(), 8u);
  // A trimmed template list stays whole at the end.
  const std::string cat =
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
      "namespace)::OpaqueType<4u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, int)";
  EXPECT_EQ(shorten_kernel_name(cat, 64), "CatArrayBatchedCopy_aligned16_contig<...>");
  EXPECT_EQ(shorten_kernel_name(cat, 30).size(), 30u);
  EXPECT_TRUE(shorten_kernel_name(cat, 30).ends_with("<...>")) << shorten_kernel_name(cat, 30);
  EXPECT_TRUE(shorten_kernel_name(cat, 30).starts_with("CatArrayBatch")) << shorten_kernel_name(cat, 30);
}

TEST(ShortenKernelName, NeverSplitsUtf8AndHandlesOddInput) {
  const std::string name = "kernel_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9_end";
  for (std::size_t max = 6; max < name.size(); ++max) {
    const std::string s = shorten_kernel_name(name, max);
    EXPECT_LE(s.size(), max);
    // No dangling lead byte or orphan continuation byte.
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == 0xC3) {
        ASSERT_LT(i + 1, s.size()) << max;
        EXPECT_EQ(static_cast<unsigned char>(s[i + 1]) & 0xC0, 0x80) << max;
      }
      if ((c & 0xC0) == 0x80) {
        EXPECT_EQ(static_cast<unsigned char>(s[i - 1]), 0xC3) << max;
      }
    }
  }
  EXPECT_EQ(shorten_kernel_name(""), "");
  EXPECT_EQ(shorten_kernel_name("a\nb\tc"), "a b c");  // control characters are spaces
  EXPECT_EQ(shorten_kernel_name("void a\nb(int)"), "b");  // ... also before the return type is dropped
  EXPECT_FALSE(shorten_kernel_name("operator>>(int)").empty());
  EXPECT_FALSE(shorten_kernel_name(")))(((<<<>>>").empty());
  EXPECT_FALSE(shorten_kernel_name("foo<").empty());
}

TEST(DisplayName, FallsBackToKindDetailAndId) {
  trace::Task copy = make_task(7, {}, 1.0, 0, "memcpy");
  copy.extra["copy"] = {{"direction", "HtoD"}};
  EXPECT_EQ(display_name(copy), "memcpy HtoD #7");
  EXPECT_EQ(display_name(copy, 48, false), "memcpy HtoD");
  trace::Task sync = make_task(12, {}, std::nullopt, std::nullopt, "sync");
  sync.extra["sync"] = "stream";
  EXPECT_EQ(display_name(sync), "sync stream #12");
  trace::Task unnamed = make_task(-3, {});
  unnamed.extra["name"] = nullptr;
  EXPECT_EQ(display_name(unnamed), "kernel #-3");
  trace::Task mangled = make_task(1, {});
  mangled.extra["name"] = nullptr;
  mangled.extra["mangled"] = "_Z10vector_addPKfS0_Pfi";
  EXPECT_EQ(full_task_name(mangled), "vector_add(float const*, float const*, float*, int)");
  EXPECT_EQ(display_name(mangled), "vector_add");
  trace::Task named = make_task(2, {});
  named.extra["name"] = "void foo<int>(int)";
  EXPECT_EQ(display_name(named), "foo<int>");
}

TEST(FormatUs, RoundsToNanosecondsShortestForm) {
  EXPECT_EQ(format_us(168.4), "168.4");
  EXPECT_EQ(format_us(12), "12");
  EXPECT_EQ(format_us(0.0004), "0");
  EXPECT_EQ(format_us(0.0015), "0.002");
  EXPECT_EQ(format_us(72.3 + 7.4), "79.7");
  EXPECT_EQ(to_ns(1.0), 1000);
  EXPECT_EQ(to_ns(-5), 0);
}

TEST(DotQuote, EscapesEverythingDotTreatsSpecially) {
  EXPECT_EQ(dot_quote("plain"), "\"plain\"");
  EXPECT_EQ(dot_quote("a \"b\""), "\"a \\\"b\\\"\"");
  EXPECT_EQ(dot_quote("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(dot_quote("line1\nline2\r"), "\"line1\\nline2\"");
  EXPECT_EQ(dot_quote("tab\there"), "\"tab here\"");
  EXPECT_EQ(dot_quote("<T> {x|y}"), "\"<T> {x|y}\"");  // plain in quoted strings (not record shapes)
  EXPECT_EQ(dot_quote("ends with \\"), "\"ends with \\\\\"");
}

TEST(KindColor, KnownKindsFixedOthersStable) {
  EXPECT_EQ(kind_color("kernel"), "lightskyblue");
  EXPECT_EQ(kind_color("memcpy"), "navajowhite");
  EXPECT_EQ(kind_color("memset"), "pink");
  EXPECT_EQ(kind_color("weird-kind"), kind_color("weird-kind"));
  EXPECT_FALSE(kind_color("another").empty());
}

}  // namespace
}  // namespace nimble::exporter
