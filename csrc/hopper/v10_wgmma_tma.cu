// hgemm_v10_wgmma_tma — the first Hopper rung: wgmma with operands in shared memory, loaded by TMA.
//
// What changed since the mma.sync ladder (v01-v09): the copy engine and the tensor cores do the
// work the threads did. One thread issues TMA box copies (cp.async.bulk.tensor) of a 128x64 tile
// of A and a 64x128 tile of B straight from global into shared memory, with the hardware's
// 128-byte swizzle; they complete on an mbarrier (transaction bytes) that the warpgroup waits on.
// The warpgroup (128 threads) then issues wgmma.mma_async m64n128k16 — each one a 64x128x16
// product on operands read from shared memory through descriptors, no ldmatrix, no fragments in
// registers — 8 per k-tile (two 64-row halves x four 16-deep steps).
// Why faster: no per-thread address arithmetic or copy instructions; wgmma is the only path to
// Hopper's full tensor-core rate (mma.sync tops out near 2/3 of it); tails are free (TMA fills
// out-of-bounds elements with zeros).
// What limits it: nothing overlaps — the warpgroup waits for each tile's copy, then the copy
// waits for the math (one stage), and one warpgroup per 128x128 tile leaves the SM mostly idle
// (a few warps, little latency hiding).
// Shapes: any M, N, K >= 1; 16-byte aligned operands (TMA needs 16-byte aligned addresses and
// row pitches); both layouts of A and B (MN-major operands use wgmma's transposed mode). sm_90a.
#include "hopper/common.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 128, THREADS = 128;
constexpr int A_BYTES = tile_bytes<BLOCK_M>(), B_BYTES = tile_bytes<BLOCK_N>();
constexpr int SMEM = A_BYTES + B_BYTES + 1024;

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(THREADS)
    hgemm_v10_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tma_a,
                               const __grid_constant__ CUtensorMap tma_b,
                               const __grid_constant__ CUtensorMap /*tma_c*/, T* C, int64_t M,
                               int64_t N, int64_t K, int64_t ldc, float alpha, float beta) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* As = aligned_smem(smem_raw);
  unsigned char* Bs = As + A_BYTES;
  __shared__ uint64_t full;  // the tile's TMA copies have landed

  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_barrier_init();
  }
  __syncthreads();

  float acc[2][BLOCK_N / 2];  // two 64-row halves of the 128x128 tile
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) acc[h][i] = 0.0f;

  const uint32_t a_s = ptx::smem_addr(As), b_s = ptx::smem_addr(Bs);
  const int tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  for (int t = 0; t < tiles; ++t) {
    if (threadIdx.x == 0) {
      ptx::mbarrier_arrive_expect_tx(&full, A_BYTES + B_BYTES);
      load_tile<BLOCK_M, A_KMAJOR>(As, &tma_a, &full, t * BLOCK_K, m0);
      load_tile<BLOCK_N, B_KMAJOR>(Bs, &tma_b, &full, t * BLOCK_K, n0);
    }
    ptx::mbarrier_wait(&full, t & 1);

    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // Row half h of A is BOX_BYTES further: 64 rows of 128 bytes (K-major) or the h-th box.
        ptx::wgmma_m64k16<BLOCK_N, T>(acc[h], slice_desc<A_KMAJOR>(a_s, h * BOX_BYTES, kk),
                                      slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR);
      }
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_registers(acc[0]);
    ptx::fence_registers(acc[1]);
    __syncthreads();  // every warp is done with the tiles before the next copy overwrites them
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    store_acc<BLOCK_N>(acc[h], C, ldc, M, N, m0 + 64 * h, n0, alpha, beta);
  }
}

template <typename T>
void hgemm_v10_wgmma_tma_launch(const GemmArgs& a) {
  constexpr const char* name = "hgemm_v10_wgmma_tma";
  hopper::launch<BLOCK_M, BLOCK_N, T>(a, name, tile_grid(a, BLOCK_M, BLOCK_N, name), THREADS, SMEM,
                                      [](auto ak, auto bk) {
                                        return hgemm_v10_wgmma_tma_kernel<T, decltype(ak)::value,
                                                                          decltype(bk)::value>;
                                      });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v10_wgmma_tma, SMEM)
