// The cuBLASLt descriptor traffic PyTorch makes around every matmul (a matmul descriptor with two
// attributes, three matrix layouts, a preference with one, all destroyed after the call), against
// the real libcublasLt, whose descriptor calls need no GPU. scripts/host_cost.sh counts what
// nimble adds to each call under callgrind (descriptor_steps, the second half of the steps).
#include <cublasLt.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

void matmul_descriptors(int i) {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulPreference_t preference;
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const std::uint64_t workspace = 1 << 22;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transpose, sizeof transpose);
  cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, 768, 64 << (i % 3), 768);  // batches of 64, 128, 256 tokens
  cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, 768, 768, 768);
  cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, 768, 64 << (i % 3), 768);
  cublasLtMatmulPreferenceCreate(&preference);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof workspace);
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(desc);
}

}  // namespace

constexpr int kCallsPerStep = 13;

extern "C" __attribute__((noinline)) void descriptor_steps(int steps) {
  for (int i = 0; i < steps; ++i) matmul_descriptors(i);
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20000;
  for (int i = 0; i < steps / 2; ++i) matmul_descriptors(i);  // not counted: nimble run settles
  descriptor_steps(steps - steps / 2);
  std::printf("descriptor_calls=%d\n", (steps - steps / 2) * kCallsPerStep);
  return 0;
}
