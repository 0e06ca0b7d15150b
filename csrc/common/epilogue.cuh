// epilogue.cuh — the output stores the epilogues share: pairs (HGEMM mma.sync rungs, Hopper rungs
// that store from registers) and groups of four (SGEMM rungs, split-K reductions).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace fastgemm {

// p[0..1] = alpha-scaled accumulators (v0, v1) + beta * p[0..1], in fp32, rounded once; C is read
// only when beta != 0. `pair`: both columns are inside the row and aligned to two elements, one
// 2-element store; otherwise element stores of the first min(cols_left, 2) columns.
template <typename T>
__device__ __forceinline__ void store_pair(T* p, float v0, float v1, float beta, bool pair,
                                           int64_t cols_left) {
  if (pair) {
    using T2 = std::conditional_t<
        std::is_same_v<T, float>, float2,
        std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>>;
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

// p[0..3] = alpha * v + beta * p[0..3] in fp32 (C read only when beta != 0), for the first
// min(cols_left, 4) of 4 consecutive columns: one 16-byte (fp32: p 16-byte aligned) or two 4-byte
// (fp16/bf16: p 4-byte aligned) stores when all 4 are inside, element stores at the right edge.
// !VEC (p aligned to its element only): element stores throughout.
template <typename T, bool VEC = true>
__device__ __forceinline__ void store_quad(T* p, float4 v, float alpha, float beta,
                                          int64_t cols_left) {
  v.x *= alpha, v.y *= alpha, v.z *= alpha, v.w *= alpha;
  if constexpr (std::is_same_v<T, float>) {
    if (VEC && cols_left >= 4) {
      float4* p4 = reinterpret_cast<float4*>(p);
      if (beta != 0.0f) {
        const float4 c = *p4;
        v.x = fmaf(beta, c.x, v.x), v.y = fmaf(beta, c.y, v.y);
        v.z = fmaf(beta, c.z, v.z), v.w = fmaf(beta, c.w, v.w);
      }
      *p4 = v;
      return;
    }
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (i < cols_left) p[i] = beta != 0.0f ? fmaf(beta, p[i], e[i]) : e[i];
    }
  } else {
    store_pair(p, v.x, v.y, beta, VEC && cols_left >= 2, cols_left);
    if (cols_left > 2) store_pair(p + 2, v.z, v.w, beta, VEC && cols_left >= 4, cols_left - 2);
  }
}

}  // namespace fastgemm
