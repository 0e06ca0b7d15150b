// sgemm/vec_tile.cuh — the block-tiled kernel body of rungs v06 (vectorized) and v07 (conflict-free):
// they differ by one flag, so they share one template (see each rung's .cu for its header comment).
//
// 128x128 block tile, BK = 8, 256 threads in a 16x16 grid, each thread an 8x8 sub-tile of C held
// as two 4-row halves x two 4-column halves. Tiles are copied with float4 loads (TileLoader), A
// transposed into As[k][m] so that a thread's A fragment is two float4 reads, like its B fragment.
//   CONFLICT_FREE = false: a thread's 8 rows/columns are contiguous (tr*8 .. tr*8+7): lanes tx and
//     tx+4 read B fragments 128 bytes apart, the same banks: 2-way conflicts on every B read; the
//     transposed A stores of lanes (2x, 2x+1) land in one bank: 2-way conflicts there too.
//   CONFLICT_FREE = true: rows/columns split into halves 64 apart (tr*4 and 64 + tr*4): 16 lanes
//     read 16 consecutive float4s (no conflict), and a 4-float row pad on the tiles staggers the
//     transposed stores across banks.
#pragma once
#include "sgemm/common.cuh"

namespace fastgemm::sgemm::vec_tile {

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 8, THREAD_M = 8, THREAD_N = 8;
constexpr int THREADS = (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N);

template <bool CONFLICT_FREE, bool A_COL_MAJOR, bool B_COL_MAJOR>
__device__ __forceinline__ void body(KmnView A, KmnView B, float* C, int64_t ldc, float alpha,
                                     float beta) {
  constexpr int PAD = CONFLICT_FREE ? 4 : 0;
  constexpr int LDS_A = BLOCK_M + PAD, LDS_B = BLOCK_N + PAD;
  using LoadA = TileLoader<BLOCK_K, BLOCK_M, THREADS, A_COL_MAJOR>;
  using LoadB = TileLoader<BLOCK_K, BLOCK_N, THREADS, !B_COL_MAJOR>;
  __shared__ __align__(16) float As[BLOCK_K * LDS_A];
  __shared__ __align__(16) float Bs[BLOCK_K * LDS_B];

  const int tr = threadIdx.x / (BLOCK_N / THREAD_N), tc = threadIdx.x % (BLOCK_N / THREAD_N);
  // First row (column) of each 4-wide half of this thread's 8x8 sub-tile.
  auto half = [](int h, int t) {
    return CONFLICT_FREE ? h * (BLOCK_M / 2) + t * 4 : t * 8 + h * 4;
  };
  const int64_t m0 = blockIdx.y * int64_t(BLOCK_M), n0 = blockIdx.x * int64_t(BLOCK_N);

  float acc[THREAD_M][THREAD_N] = {};
  const LoadA load_a(A, m0);
  const LoadB load_b(B, n0);
  float4 a_regs[LoadA::CHUNKS], b_regs[LoadB::CHUNKS];
  for (int64_t k0 = 0; k0 < A.K; k0 += BLOCK_K) {
    load_a.load(A, k0, m0, a_regs);
    load_b.load(B, k0, n0, b_regs);
    LoadA::template store<LDS_A>(As, a_regs);
    LoadB::template store<LDS_B>(Bs, b_regs);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCK_K; ++k) {
      float a[THREAD_M], b[THREAD_N];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<float4*>(&a[4 * h]) =
            *reinterpret_cast<const float4*>(&As[k * LDS_A + half(h, tr)]);
        *reinterpret_cast<float4*>(&b[4 * h]) =
            *reinterpret_cast<const float4*>(&Bs[k * LDS_B + half(h, tc)]);
      }
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 v = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2],
                                   acc[i][4 * h + 3]);
      store_c4(C, ldc, A.MN, B.MN, m0 + half(i / 4, tr) + i % 4, n0 + half(h, tc), v, alpha, beta);
    }
}

template <typename KernelFor>
void launch(const GemmArgs& a, const char* name, KernelFor kernel_for) {
  launch_kmn<BLOCK_M, BLOCK_N, THREADS>(a, name, kernel_for);
}

}  // namespace fastgemm::sgemm::vec_tile
