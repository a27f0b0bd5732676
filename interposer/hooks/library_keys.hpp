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
// cuBLASLt's descriptors are followed the same way (created or initialised, attributes set,
// destroyed): their structs are of documented size, but creating one leaves bytes of it
// uninitialised, so reading them gave a new key for every call.
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

// Whether nimble run may skip or observe a replayable library call now, and so needs its key:
// only inside an iteration it replays (RunSession::library_site answers nothing elsewhere), not
// in a measured plain block. Elsewhere the call costs what it costs idle: no key, no lock.
constexpr bool library_call_may_be_taken(bool running, bool replaying_iteration, bool plain_phase) {
  return running && replaying_iteration && !plain_phase;
}

// Followed after each successful call the program makes itself (not ones a library makes).
void after_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* descriptor);
void after_cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t count, const void* elements);
void after_cudnnBackendGetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t requested, int64_t* count, void* elements);
void after_cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor);
void after_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor);

void after_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale);
void after_cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                           cudaDataType_t scale);
void after_cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                          const void* buffer, size_t size);
void after_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc);
void after_cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                      int64_t ld);
void after_cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type, uint64_t rows,
                                             uint64_t cols, int64_t ld);
void after_cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                                            const void* buffer, size_t size);
void after_cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout);
void after_cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference);
void after_cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t preference, size_t size);
void after_cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t preference,
                                                cublasLtMatmulPreferenceAttributes_t attribute, const void* buffer,
                                                size_t size);
void after_cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference);

std::optional<std::uint64_t> key_cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                                     cudnnBackendDescriptor_t variant_pack);
std::optional<std::uint64_t> key_cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                                const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                                                cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                                                cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                                                const cublasLtMatmulAlgo_t* algo, void* workspace,
                                                size_t workspace_bytes, cudaStream_t stream);

// A descriptor's part of a key (a cuDNN backend descriptor, a cuBLASLt matmul, layout or
// preference descriptor): the hash of its contents, its identity when the library filled it in,
// nullopt when nimble did not see it created.
std::optional<std::uint64_t> descriptor_key(const void* descriptor);

// Hash of `bytes` bytes at `data` (the cuBLASLt opaque structs).
std::uint64_t hash_bytes(std::uint64_t h, const void* data, std::size_t bytes);

}  // namespace nimble::hooks
