#include "library_keys.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "library_calls.hpp"
#include "pointer_map.hpp"
#include "signature.hpp"

namespace nimble::hooks {
namespace {

struct Descriptor {
  std::uint64_t content = 0;
  bool known = true;          // content follows from the attributes set on it
  std::uint64_t serial = 0;   // unique per descriptor nimble saw created
};

// Never destroyed: calls may arrive during exit. PyTorch creates and destroys a cuBLASLt matmul's
// descriptors around every call (about 800 followed calls a step in a BERT encoder).
struct Descriptors {
  std::mutex mu;
  PointerMap<Descriptor> live;
  std::uint64_t next_serial = 1;
};
Descriptors& descriptors() {
  static auto* d = new Descriptors();
  return *d;
}

// Bytes per element of a backend attribute type; 0: not one nimble knows.
std::size_t element_size(cudnnBackendAttributeType_t type) {
  switch (static_cast<int>(type)) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
      return 8;
    case CUDNN_TYPE_BOOLEAN: case CUDNN_TYPE_CHAR:
      return 1;
    case CUDNN_TYPE_FRACTION:
      return sizeof(cudnnFraction_t);
    case CUDNN_TYPE_DATA_TYPE: case CUDNN_TYPE_FLOAT: case CUDNN_TYPE_CONVOLUTION_MODE: case CUDNN_TYPE_HEUR_MODE:
    case CUDNN_TYPE_KNOB_TYPE: case 10 /* NAN_PROPOGATION, deprecated */: case CUDNN_TYPE_NUMERICAL_NOTE:
    case CUDNN_TYPE_LAYOUT_TYPE: case CUDNN_TYPE_ATTRIB_NAME: case CUDNN_TYPE_POINTWISE_MODE:
    case CUDNN_TYPE_GENSTATS_MODE: case CUDNN_TYPE_BN_FINALIZE_STATS_MODE: case CUDNN_TYPE_REDUCTION_OPERATOR_TYPE:
    case CUDNN_TYPE_BEHAVIOR_NOTE: case CUDNN_TYPE_TENSOR_REORDERING_MODE: case CUDNN_TYPE_RESAMPLE_MODE:
    case CUDNN_TYPE_PADDING_MODE: case CUDNN_TYPE_INT32: case CUDNN_TYPE_SIGNAL_MODE: case CUDNN_TYPE_NORM_MODE:
    case CUDNN_TYPE_NORM_FWD_PHASE: case CUDNN_TYPE_RNG_DISTRIBUTION:
      return 4;
    default:
      return 0;
  }
}

// Under the lock: a descriptor's key, nullopt when nimble did not see it created.
std::optional<std::uint64_t> key_of(Descriptors& ds, const void* descriptor) {
  const Descriptor* d = ds.live.find(descriptor);
  if (!d) return std::nullopt;
  return d->known ? mix(d->content, 1) : mix(d->serial, 2);
}

template <class Fn>
Fn function(Library library, const char* name) {
  return reinterpret_cast<Fn>(library_function(library, name));
}

// Bytes of one scalar of a cuBLASLt scale type; 0 when nimble does not know the type.
std::size_t scale_bytes(cudaDataType type) {
  switch (type) {
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_64F: case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
  }
}

}  // namespace

std::uint64_t hash_bytes(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = mix(h, word);
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p + i, bytes - i);
  return mix(mix(h, tail), bytes);
}

std::optional<std::uint64_t> descriptor_key(const void* descriptor) {
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  return key_of(ds, descriptor);
}

namespace {

// A descriptor the program created (or initialised in its own memory), with what it was made of.
void follow_created(const void* descriptor, std::uint64_t made_of) {
  if (!descriptor) return;
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  ds.live.assign(descriptor, {made_of, true, ds.next_serial++});
}

void follow_set(const void* descriptor, std::uint64_t attribute, const void* buffer, std::size_t size) {
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  Descriptor* d = ds.live.find(descriptor);
  if (!d) return;
  if (size > 0 && !buffer) {
    d->known = false;
    return;
  }
  d->content = hash_bytes(signature_of("attribute", d->content, attribute), buffer, size);
}

void follow_destroyed(const void* descriptor) {
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  ds.live.erase(descriptor);
}

}  // namespace

void after_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* descriptor) {
  if (descriptor) follow_created(*descriptor, signature_of("cudnnBackendDescriptor", type));
}

void after_cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t count, const void* elements) {
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  Descriptor* found = ds.live.find(descriptor);
  if (!found) return;
  Descriptor& d = *found;
  const std::size_t size = element_size(type);
  if (size == 0 || count < 0 || (count > 0 && !elements)) {
    d.known = false;
    return;
  }
  d.content = signature_of("attribute", d.content, name, type, count);
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    const auto* refs = static_cast<const cudnnBackendDescriptor_t*>(elements);
    for (int64_t i = 0; i < count; ++i) {
      const auto ref = key_of(ds, refs[i]);
      if (!ref) d.known = false;
      d.content = mix(d.content, ref.value_or(0));
    }
    return;
  }
  d.content = hash_bytes(d.content, elements, size * static_cast<std::size_t>(count));
}

void after_cudnnBackendGetAttribute(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                    cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                                    void* elements) {
  if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || !elements) return;
  // The library wrote into these descriptors: their contents are its own from now on.
  const int64_t filled = count ? std::min(*count, requested) : requested;
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  const auto* refs = static_cast<const cudnnBackendDescriptor_t*>(elements);
  for (int64_t i = 0; i < filled; ++i) {
    if (Descriptor* d = ds.live.find(refs[i])) d->known = false;
  }
}

void after_cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  if (Descriptor* d = ds.live.find(descriptor)) d->content = signature_of("finalized", d->content);
}

void after_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) { follow_destroyed(descriptor); }

void after_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  if (desc) follow_created(*desc, signature_of("cublasLtMatmulDesc", compute, scale));
}
void after_cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t, cublasComputeType_t compute,
                                           cudaDataType_t scale) {
  follow_created(desc, signature_of("cublasLtMatmulDesc", compute, scale));
}
void after_cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                          const void* buffer, size_t size) {
  follow_set(desc, attribute, buffer, size);
}
void after_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { follow_destroyed(desc); }

void after_cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                      int64_t ld) {
  if (layout) follow_created(*layout, signature_of("cublasLtMatrixLayout", type, rows, cols, ld));
}
void after_cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t, cudaDataType type, uint64_t rows,
                                             uint64_t cols, int64_t ld) {
  follow_created(layout, signature_of("cublasLtMatrixLayout", type, rows, cols, ld));
}
void after_cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                                            const void* buffer, size_t size) {
  follow_set(layout, attribute, buffer, size);
}
void after_cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) { follow_destroyed(layout); }

void after_cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
  if (preference) follow_created(*preference, signature_of("cublasLtMatmulPreference"));
}
void after_cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t preference, size_t) {
  follow_created(preference, signature_of("cublasLtMatmulPreference"));
}
void after_cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t preference,
                                                cublasLtMatmulPreferenceAttributes_t attribute, const void* buffer,
                                                size_t size) {
  follow_set(preference, attribute, buffer, size);
}
void after_cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) { follow_destroyed(preference); }

std::optional<std::uint64_t> key_cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                                     cudnnBackendDescriptor_t variant_pack) {
  using GetStream = cudnnStatus_t (*)(cudnnHandle_t, cudaStream_t*);
  static const auto get_stream = function<GetStream>(Library::cudnn, "cudnnGetStream");
  cudaStream_t stream = nullptr;
  if (!get_stream || get_stream(handle, &stream) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  Descriptors& ds = descriptors();
  std::lock_guard<std::mutex> lock(ds.mu);
  const auto plan_key = key_of(ds, plan), pack_key = key_of(ds, variant_pack);
  if (!plan_key || !pack_key) return std::nullopt;
  return signature_of("cudnnBackendExecute", reinterpret_cast<std::uintptr_t>(handle),
                      reinterpret_cast<std::uintptr_t>(stream), *plan_key, *pack_key);
}

std::optional<std::uint64_t> key_cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                                                const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                                                cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                                                cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                                                const cublasLtMatmulAlgo_t* algo, void* workspace,
                                                size_t workspace_bytes, cudaStream_t stream) {
  using GetAttribute = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*);
  static const auto get = function<GetAttribute>(Library::cublasLt, "cublasLtMatmulDescGetAttribute");
  if (!get || !desc || !a_desc || !b_desc || !c_desc || !d_desc) return std::nullopt;
  std::int32_t pointer_mode = 0;
  cudaDataType scale_type = CUDA_R_32F;
  std::size_t written = 0;
  if (get(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pointer_mode, sizeof pointer_mode, &written) != CUBLAS_STATUS_SUCCESS ||
      get(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale_type, sizeof scale_type, &written) != CUBLAS_STATUS_SUCCESS) {
    return std::nullopt;
  }
  std::uint64_t h = 0;
  {
    Descriptors& ds = descriptors();
    std::lock_guard<std::mutex> lock(ds.mu);
    for (const void* descriptor : {static_cast<const void*>(desc), static_cast<const void*>(a_desc),
                                   static_cast<const void*>(b_desc), static_cast<const void*>(c_desc),
                                   static_cast<const void*>(d_desc)}) {
      const auto k = key_of(ds, descriptor);
      if (!k) return std::nullopt;
      h = mix(h, *k);
    }
  }
  h = signature_of("cublasLtMatmul", h, reinterpret_cast<std::uintptr_t>(handle), pointer_mode,
                                 reinterpret_cast<std::uintptr_t>(a), reinterpret_cast<std::uintptr_t>(b),
                                 reinterpret_cast<std::uintptr_t>(c), reinterpret_cast<std::uintptr_t>(d),
                                 reinterpret_cast<std::uintptr_t>(workspace), workspace_bytes,
                                 reinterpret_cast<std::uintptr_t>(stream));
  h = algo ? hash_bytes(h, algo, sizeof(cublasLtMatmulAlgo_t)) : mix(h, 0);
  // Host scalars are read now; device ones (any other pointer mode) when the kernel runs.
  if (pointer_mode == CUBLASLT_POINTER_MODE_HOST) {
    const std::size_t bytes = scale_bytes(scale_type);
    if (bytes == 0 || !alpha) return std::nullopt;
    h = hash_bytes(h, alpha, bytes);
    h = beta ? hash_bytes(h, beta, bytes) : mix(h, 0);
  } else {
    h = signature_of("device scalars", h, reinterpret_cast<std::uintptr_t>(alpha), reinterpret_cast<std::uintptr_t>(beta));
  }
  return h;
}

}  // namespace nimble::hooks
