// Keys of cuDNN backend descriptors, followed from the program's own calls: equal contents give
// equal keys wherever the descriptor lives; any attribute changes the key; descriptors the library
// filled in, or that nimble never saw created, are told apart or refused.
#include "library_keys.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace nimble::hooks {
namespace {

// Fake descriptor handles: only their addresses matter to the tracking.
cudnnBackendDescriptor_t handle_at(std::vector<char>& storage, std::size_t i) {
  return reinterpret_cast<cudnnBackendDescriptor_t>(storage.data() + i);
}

std::optional<std::uint64_t> pack_key(cudnnBackendDescriptor_t d, void* x, void* y) {
  after_cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &d);
  void* pointers[] = {x, y};
  std::int64_t uids[] = {1, 2};
  after_cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, pointers);
  after_cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 2, uids);
  after_cudnnBackendFinalize(d);
  const auto key = descriptor_key(d);
  after_cudnnBackendDestroyDescriptor(d);
  return key;
}

TEST(LibraryKeys, VariantPacksWithTheSameContentsHaveTheSameKeyWhereverTheyLive) {
  std::vector<char> storage(64);
  void* x = reinterpret_cast<void*>(0x7f0000001000);
  void* y = reinterpret_cast<void*>(0x7f0000002000);
  const auto a = pack_key(handle_at(storage, 0), x, y);
  const auto b = pack_key(handle_at(storage, 8), x, y);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  const auto other = pack_key(handle_at(storage, 0), y, x);
  ASSERT_TRUE(other);
  EXPECT_NE(*a, *other);
  EXPECT_FALSE(descriptor_key(handle_at(storage, 0))) << "destroyed: no longer known";
}

TEST(LibraryKeys, UnfinalizedAndUnknownDescriptorsDiffer) {
  std::vector<char> storage(64);
  cudnnBackendDescriptor_t d = handle_at(storage, 16);
  EXPECT_FALSE(descriptor_key(d)) << "never seen created";
  after_cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &d);
  const auto fresh = descriptor_key(d);
  after_cudnnBackendFinalize(d);
  EXPECT_NE(fresh, descriptor_key(d)) << "finalizing is part of the contents";
  after_cudnnBackendDestroyDescriptor(d);
}

TEST(LibraryKeys, DescriptorsTheLibraryFilledInAreKnownByIdentityOnly) {
  std::vector<char> storage(64);
  cudnnBackendDescriptor_t first = handle_at(storage, 0), second = handle_at(storage, 8);
  for (cudnnBackendDescriptor_t* d : {&first, &second}) {
    after_cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, d);
  }
  EXPECT_EQ(descriptor_key(first), descriptor_key(second)) << "both empty so far";
  cudnnBackendDescriptor_t filled[] = {first, second};
  std::int64_t count = 2;
  after_cudnnBackendGetAttribute(nullptr, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, &count, filled);
  ASSERT_TRUE(descriptor_key(first) && descriptor_key(second));
  EXPECT_NE(*descriptor_key(first), *descriptor_key(second)) << "heuristics gave each its own contents";

  // A plan naming one of them: its key follows the engine config's identity.
  cudnnBackendDescriptor_t plan = handle_at(storage, 32);
  auto plan_key = [&](cudnnBackendDescriptor_t config) {
    after_cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    after_cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config);
    const auto key = descriptor_key(plan);
    after_cudnnBackendDestroyDescriptor(plan);
    return key;
  };
  EXPECT_NE(plan_key(first), plan_key(second));
  after_cudnnBackendDestroyDescriptor(first);
  after_cudnnBackendDestroyDescriptor(second);
}

TEST(LibraryKeys, AnAttributeOfAnUnknownTypeLeavesOnlyTheIdentity) {
  std::vector<char> storage(64);
  cudnnBackendDescriptor_t a = handle_at(storage, 0), b = handle_at(storage, 8);
  const int value = 1;
  for (cudnnBackendDescriptor_t* d : {&a, &b}) {
    after_cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, d);
    after_cudnnBackendSetAttribute(*d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, static_cast<cudnnBackendAttributeType_t>(999), 1,
                                   &value);
  }
  ASSERT_TRUE(descriptor_key(a) && descriptor_key(b));
  EXPECT_NE(*descriptor_key(a), *descriptor_key(b));
  after_cudnnBackendDestroyDescriptor(a);
  after_cudnnBackendDestroyDescriptor(b);
}

TEST(LibraryKeys, HashOfBytesSeesEveryByteAndTheLength) {
  const unsigned char a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  unsigned char b[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(hash_bytes(0, a, 9), hash_bytes(0, b, 9));
  b[8] = 10;
  EXPECT_NE(hash_bytes(0, a, 9), hash_bytes(0, b, 9));
  EXPECT_NE(hash_bytes(0, a, 8), hash_bytes(0, a, 9));
}

}  // namespace
}  // namespace nimble::hooks
