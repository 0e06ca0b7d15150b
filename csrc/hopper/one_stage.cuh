// hopper/one_stage.cuh — the whole body of a one-stage rung, composed of the parts: a OneShot
// tile (scheduler.cuh), one_stage_mainloop (mainloop.cuh) over Cfg::THREADS / 128 warpgroups,
// and store_acc (epilogue.cuh) of each warpgroup's 64-row slices.
#pragma once
#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/scheduler.cuh"

namespace fastgemm::hopper {

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void one_stage_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                               T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                               float alpha, float beta) {
  constexpr int WARPGROUPS = Cfg::THREADS / 128, SLICES = Cfg::BM / 64 / WARPGROUPS;
  int m0, n0;
  OneShot<Cfg::BM, Cfg::BN>::tile(m0, n0);
  float acc[SLICES][Cfg::BN / 2];
  one_stage_mainloop<T, Cfg::BM, Cfg::BN, WARPGROUPS, A_KMAJOR, B_KMAJOR>(tma_a, tma_b, K, m0, n0,
                                                                        acc);
  const int wg = threadIdx.x / 128;
#pragma unroll
  for (int h = 0; h < SLICES; ++h) {
    store_acc<Cfg::BN>(acc[h], C, ldc, M, N, m0 + 64 * (wg * SLICES + h), n0, alpha, beta);
  }
}

}  // namespace fastgemm::hopper
