// hgemm_v11_wide_tile — larger tiles: 128x256 per block, two consumer warpgroups.
//
// What changed since v10: the block tile doubles to 128x256 and the block holds two warpgroups,
// each issuing m64n256k16 wgmmas (the widest) on its own 64-row half of A against the whole B
// tile: 4 wgmmas per warpgroup per k-tile, 128 fp32 accumulators per thread.
// Why faster: every byte brought into shared memory feeds twice the math (85 instead of 64
// FLOP/byte from L2), each wgmma is twice as long (fewer issue/commit overheads), and two
// warpgroups keep two tensor-core streams going per block.
// What limits it: still one stage — both warpgroups wait for each tile's TMA copies and the next
// copy waits for both to finish — and now nothing else hides that: 256 threads x ~154 registers
// leave room for one block per SM (v10's 128-thread blocks fit three, which overlap each other's
// copies), so on its own this rung is slower than v10. It is the tile shape the pipelined rungs
// build on.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/common.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 256, THREADS = 256;
constexpr int A_BYTES = tile_bytes<BLOCK_M>(), B_BYTES = tile_bytes<BLOCK_N>();
constexpr int SMEM = A_BYTES + B_BYTES + 1024;

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(THREADS)
    hgemm_v11_wide_tile_kernel(const __grid_constant__ CUtensorMap tma_a,
                               const __grid_constant__ CUtensorMap tma_b,
                               const __grid_constant__ CUtensorMap /*tma_c*/, T* C, int64_t M,
                               int64_t N, int64_t K, int64_t ldc, float alpha, float beta) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* As = aligned_smem(smem_raw);
  unsigned char* Bs = As + A_BYTES;
  __shared__ uint64_t full;

  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int wg = threadIdx.x / 128;  // this warpgroup's 64-row half
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_barrier_init();
  }
  __syncthreads();

  float acc[BLOCK_N / 2];
#pragma unroll
  for (int i = 0; i < BLOCK_N / 2; ++i) acc[i] = 0.0f;

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
      ptx::wgmma_m64k16<BLOCK_N, T>(acc, slice_desc<A_KMAJOR>(a_s, wg * BOX_BYTES, kk),
                                    slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_registers(acc);
    __syncthreads();
  }
  store_acc<BLOCK_N>(acc, C, ldc, M, N, m0 + 64 * wg, n0, alpha, beta);
}

template <typename T>
void hgemm_v11_wide_tile_launch(const GemmArgs& a) {
  constexpr const char* name = "hgemm_v11_wide_tile";
  hopper::launch<BLOCK_M, BLOCK_N, T>(a, name, tile_grid(a, BLOCK_M, BLOCK_N, name), THREADS, SMEM,
                                      [](auto ak, auto bk) {
                                        return hgemm_v11_wide_tile_kernel<T, decltype(ak)::value,
                                                                          decltype(bk)::value>;
                                      });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v11_wide_tile, SMEM)
