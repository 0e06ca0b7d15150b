// epilogue.cuh — the output store the tensor-core epilogues share (HGEMM mma.sync rungs, Hopper
// rungs that store from registers).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace fastgemm {

// p[0..1] = alpha-scaled accumulators (v0, v1) + beta * p[0..1], in fp32, rounded once; C is read
// only when beta != 0. `pair`: both columns are inside the row and 4-byte aligned, one 2-element
// store; otherwise element stores of the first min(cols_left, 2) columns.
template <typename T>
__device__ __forceinline__ void store_pair(T* p, float v0, float v1, float beta, bool pair,
                                           int64_t cols_left) {
  if (pair) {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    T2* p2 = reinterpret_cast<T2*>(p);
    if (beta != 0.0f) {
      const T2 c = *p2;
      v0 = fmaf(beta, float(c.x), v0), v1 = fmaf(beta, float(c.y), v1);
    }
    T2 out;
    out.x = T(v0), out.y = T(v1);
    *p2 = out;
  } else {
    if (cols_left > 0) p[0] = T(beta != 0.0f ? fmaf(beta, float(p[0]), v0) : v0);
    if (cols_left > 1) p[1] = T(beta != 0.0f ? fmaf(beta, float(p[1]), v1) : v1);
  }
}

}  // namespace fastgemm
