// Keys of library calls `nimble run` can skip (library_memo.hpp): one hash of everything a call
// reads that decides what it launches: its arguments, the contents of the descriptors it is
// given, and the library state it uses (the handle's stream). A key is nullopt when some input
// cannot be known (a descriptor nimble did not see created, an attribute type it does not know):
// such a call is never skipped.
//
// cuDNN backend descriptors are opaque, so their contents are followed from the program's own
// calls: created, attributes set (hashed as they are set; a descriptor-valued attribute hashes
// the key of that descriptor), finalized, destroyed. A descriptor the library fills in
// (cudnnBackendGetAttribute with descriptors to fill, e.g. heuristics results) has contents
// nimble cannot see: its key is then its identity, which a new descriptor never reuses.
// cuBLASLt descriptors are semi-opaque structs of documented size (cublasLt.h): their bytes are read.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <optional>

namespace nimble::hooks {

// Followed after each successful call the program makes itself (not ones a library makes).
void after_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* descriptor);
void after_cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t count, const void* elements);
void after_cudnnBackendGetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t requested, int64_t* count, void* elements);
void after_cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor);
void after_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor);

std::optional<std::uint64_t> key_cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                                     cudnnBackendDescriptor_t variant_pack);
std::optional<std::uint64_t> key_cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                                const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                                                cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                                                cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                                                const cublasLtMatmulAlgo_t* algo, void* workspace,
                                                size_t workspace_bytes, cudaStream_t stream);

// A backend descriptor's part of a key: the hash of its contents, its identity when the library
// filled it in, nullopt when nimble did not see it created.
std::optional<std::uint64_t> descriptor_key(cudnnBackendDescriptor_t descriptor);

// Hash of `bytes` bytes at `data` (the cuBLASLt opaque structs).
std::uint64_t hash_bytes(std::uint64_t h, const void* data, std::size_t bytes);

}  // namespace nimble::hooks
