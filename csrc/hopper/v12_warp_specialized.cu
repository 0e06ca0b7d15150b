// hgemm_v12_warp_specialized — producer/consumer warp specialisation over a 4-stage mbarrier ring.
//
// What changed since v11: a third warpgroup becomes the producer. One of its threads streams tiles
// into a ring of 4 shared-memory stages with TMA, each stage guarded by two mbarriers: `full`
// (the copies have landed: TMA transaction bytes) and `empty` (both consumer warpgroups have
// finished reading it). The two consumer warpgroups only wait on `full`, issue their wgmmas and
// release the stage — with one k-tile of wgmmas kept in flight (wgmma.wait_group 1), so the
// tensor cores never drain between tiles. setmaxnreg moves registers from the producer (40 per
// thread: it only issues copies) to the consumers (232: 128 accumulators plus descriptors).
// Why faster: copies run up to 3 tiles ahead of the math instead of alternating with it, and no
// __syncthreads: producer and consumers only meet on the stage barriers.
// What limits it: one 128x256 tile per block and a grid of as many blocks as tiles — blocks
// start and drain in waves, each paying its prologue and epilogue; the tile order is row-major
// (no L2-aware order yet); the epilogue writes C from registers with 4-byte stores.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/common.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 256, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr int A_BYTES = tile_bytes<BLOCK_M>(), B_BYTES = tile_bytes<BLOCK_N>();
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
static_assert(STAGE_BYTES % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(THREADS, 1)
    hgemm_v12_warp_specialized_kernel(const __grid_constant__ CUtensorMap tma_a,
                                      const __grid_constant__ CUtensorMap tma_b,
                                      const __grid_constant__ CUtensorMap /*tma_c*/, T* C, int64_t M,
                                      int64_t N, int64_t K, int64_t ldc, float alpha, float beta) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* stages = aligned_smem(smem_raw);
  __shared__ uint64_t full[STAGES], empty[STAGES];

  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int wg = threadIdx.x / 128;
  const int tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        // Stage s last held tile t - STAGES: wait until both consumers released it (phase
        // t/STAGES - 1 of its `empty` barrier). The first round finds every stage free.
        if (t >= STAGES) ptx::mbarrier_wait(&empty[s], (t / STAGES - 1) & 1);
        unsigned char* As = stages + s * STAGE_BYTES;
        ptx::mbarrier_arrive_expect_tx(&full[s], STAGE_BYTES);
        load_tile<BLOCK_M, A_KMAJOR>(As, &tma_a, &full[s], t * BLOCK_K, m0);
        load_tile<BLOCK_N, B_KMAJOR>(As + A_BYTES, &tma_b, &full[s], t * BLOCK_K, n0);
      }
    }
  } else {  // consumers: warpgroup 1 takes rows 0-63 of the tile, warpgroup 2 rows 64-127
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    float acc[BLOCK_N / 2];
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) acc[i] = 0.0f;
    for (int t = 0; t < tiles; ++t) {
      const int s = t % STAGES;
      ptx::mbarrier_wait(&full[s], (t / STAGES) & 1);
      const uint32_t a_s = ptx::smem_addr(stages + s * STAGE_BYTES), b_s = a_s + A_BYTES;
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
        ptx::wgmma_m64k16<BLOCK_N, T>(acc, slice_desc<A_KMAJOR>(a_s, half * BOX_BYTES, kk),
                                      slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR);
      }
      ptx::wgmma_commit();
      // Keep this tile's wgmmas in flight; the previous tile's are done: release its stage.
      ptx::wgmma_wait<1>();
      if (t > 0 && threadIdx.x % 128 == 0) ptx::mbarrier_arrive(&empty[(t - 1) % STAGES]);
    }
    ptx::wgmma_wait<0>();
    ptx::fence_registers(acc);
    store_acc<BLOCK_N>(acc, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta);
  }
}

template <typename T>
void hgemm_v12_warp_specialized_launch(const GemmArgs& a) {
  constexpr const char* name = "hgemm_v12_warp_specialized";
  hopper::launch<BLOCK_M, BLOCK_N, T>(
      a, name, tile_grid(a, BLOCK_M, BLOCK_N, name), THREADS, SMEM, [](auto ak, auto bk) {
        return hgemm_v12_warp_specialized_kernel<T, decltype(ak)::value, decltype(bk)::value>;
      });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v12_warp_specialized, SMEM)
