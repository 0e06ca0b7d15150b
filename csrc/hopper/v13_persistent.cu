// hgemm_v13_persistent — persistent blocks walking the output tiles in an L2-aware order.
//
// What changed since v12: the grid is one block per SM, and each block loops over output tiles
// (tile = block, block + #SMs, ...). The producer keeps streaming into the same 4-stage ring
// across tile boundaries, so the next tile's first k-tiles are already in shared memory while
// the consumers run the previous tile's epilogue; the ring's stage and phase follow one running
// k-tile counter shared by producer and consumers. Tiles are visited in groups of 16 tile rows,
// column by column (a 2048-row band of A stays in L2 while B streams past it once per band).
// Why faster: no block launch and prologue per tile, epilogue overlapped with the next tile's
// copies, and fewer L2 misses than the row-major order of v12's grid.
// What limits it: each block still loads its own A and B tiles (neighbours on the same cluster
// re-fetch the same data from L2), and the epilogue writes C straight from registers.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/common.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 256, STAGES = 4, GROUP_M = 16;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr int A_BYTES = tile_bytes<BLOCK_M>(), B_BYTES = tile_bytes<BLOCK_N>();
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

// Output tile `index` in the grouped order: GROUP_M tile rows at a time, column by column.
__device__ __forceinline__ void tile_origin(int index, int tiles_m, int tiles_n, int& m0, int& n0) {
  const int per_group = GROUP_M * tiles_n, group = index / per_group;
  const int first_m = group * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = index % per_group;
  m0 = (first_m + in_group % rows) * BLOCK_M;
  n0 = (in_group / rows) * BLOCK_N;
}

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(THREADS, 1)
    hgemm_v13_persistent_kernel(const __grid_constant__ CUtensorMap tma_a,
                                const __grid_constant__ CUtensorMap tma_b,
                                const __grid_constant__ CUtensorMap /*tma_c*/, T* C, int64_t M,
                                int64_t N, int64_t K, int64_t ldc, float alpha, float beta) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* stages = aligned_smem(smem_raw);
  __shared__ uint64_t full[STAGES], empty[STAGES];

  const int wg = threadIdx.x / 128;
  const int k_tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  const int tiles_m = static_cast<int>((M + BLOCK_M - 1) / BLOCK_M);
  const int tiles_n = static_cast<int>((N + BLOCK_N - 1) / BLOCK_N);
  const int tiles = tiles_m * tiles_n;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {  // producer: one thread streams every k-tile of every tile of this block
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;  // running k-tile counter: stage it % STAGES, round it / STAGES
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, tiles_n, m0, n0);
        for (int t = 0; t < k_tiles; ++t, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) ptx::mbarrier_wait(&empty[s], (it / STAGES - 1) & 1);
          unsigned char* As = stages + s * STAGE_BYTES;
          ptx::mbarrier_arrive_expect_tx(&full[s], STAGE_BYTES);
          load_tile<BLOCK_M, A_KMAJOR>(As, &tma_a, &full[s], t * BLOCK_K, m0);
          load_tile<BLOCK_N, B_KMAJOR>(As + A_BYTES, &tma_b, &full[s], t * BLOCK_K, n0);
        }
      }
    }
  } else {  // consumers: rows 0-63 (warpgroup 1) and 64-127 (warpgroup 2) of every tile
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    const bool leader = threadIdx.x % 128 == 0;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int m0, n0;
      tile_origin(tile, tiles_m, tiles_n, m0, n0);
      float acc[BLOCK_N / 2];
#pragma unroll
      for (int i = 0; i < BLOCK_N / 2; ++i) acc[i] = 0.0f;
      for (int t = 0; t < k_tiles; ++t, ++it) {
        const int s = it % STAGES;
        ptx::mbarrier_wait(&full[s], (it / STAGES) & 1);
        const uint32_t a_s = ptx::smem_addr(stages + s * STAGE_BYTES), b_s = a_s + A_BYTES;
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
          ptx::wgmma_m64k16<BLOCK_N, T>(acc, slice_desc<A_KMAJOR>(a_s, half * BOX_BYTES, kk),
                                        slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR);
        }
        ptx::wgmma_commit();
        ptx::wgmma_wait<1>();  // the previous k-tile's wgmmas are done: release its stage
        if (t > 0 && leader) ptx::mbarrier_arrive(&empty[(it - 1) % STAGES]);
      }
      ptx::wgmma_wait<0>();
      if (leader) ptx::mbarrier_arrive(&empty[(it - 1) % STAGES]);
      ptx::fence_registers(acc);
      store_acc<BLOCK_N>(acc, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta);
    }
  }
}

template <typename T>
void hgemm_v13_persistent_launch(const GemmArgs& a) {
  constexpr const char* name = "hgemm_v13_persistent";
  int device = 0, sms = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  FASTGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t tiles = ceil_div(a.M, BLOCK_M) * ceil_div(a.N, BLOCK_N);
  if (tiles > 2147483647) throw std::runtime_error(std::string(name) + ": too many output tiles");
  const dim3 grid(static_cast<unsigned>(tiles < sms ? tiles : sms));
  hopper::launch<BLOCK_M, BLOCK_N, T>(a, name, grid, THREADS, SMEM, [](auto ak, auto bk) {
    return hgemm_v13_persistent_kernel<T, decltype(ak)::value, decltype(bk)::value>;
  });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v13_persistent, SMEM)
