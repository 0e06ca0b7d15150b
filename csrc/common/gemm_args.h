// gemm_args.h — the one argument block every kernel launcher takes.
//
// The Python layer canonicalises every call to a row-major C (an F-contiguous C is handled as
// C^T = B^T A^T with the operands swapped), so a launcher sees:
//   C (M x N, row-major, leading dimension ldc)  <-  alpha * A (M x K) @ B (K x N) + beta * C
// A and B are each either row-major or column-major ("col_major" = F-contiguous = transposed):
//   A(i, k) = a_col_major ? A[k * lda + i] : A[i * lda + k]
//   B(k, j) = b_col_major ? B[j * ldb + k] : B[k * ldb + j]
// All extents and offsets are 64-bit: M*K, K*N or M*N may exceed 2^31 elements.
// c_col_major asks for a column-major C instead, C(i, j) = C[j * ldc + i]: auto sets it when it
// runs a problem as its transpose (plan.h, AutoRule::flip), and only for the kernels whose
// epilogue is the split-K reduction (common/split_k.cuh), which writes either layout.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

namespace fastgemm {

struct GemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;
  int64_t lda = 0;
  bool a_col_major = false;
  const void* B = nullptr;
  int64_t ldb = 0;
  bool b_col_major = false;
  void* C = nullptr;
  int64_t ldc = 0;
  bool c_col_major = false;
  float alpha = 1.0f, beta = 0.0f;
  cudaStream_t stream = nullptr;
};

// Every rung's host entry point has this signature (declared in registry.h, defined in its .cu).
using LaunchFn = void (*)(const GemmArgs&);

}  // namespace fastgemm
