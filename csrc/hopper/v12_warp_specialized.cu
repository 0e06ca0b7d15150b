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
#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v12_warp_specialized, V12) {
  using RingT = Ring<V12::BM, V12::BN, V12::STAGES, 2>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();
  int m0, n0;
  OneShot<V12::BM, V12::BN>::tile(m0, n0);
  const int wg = threadIdx.x / 128;
  const int k_tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  int it = 0;
  if (wg == 0) {  // producer: registers go to the consumers, one thread issues the copies
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) produce<A_KMAJOR, B_KMAJOR>(ring, &tma_a, &tma_b, m0, n0, k_tiles, it);
  } else {  // consumers: warpgroup 1 takes rows 0-63 of the tile, warpgroup 2 rows 64-127
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    float acc[V12::BN / 2];
    consume<T, A_KMAJOR, B_KMAJOR>(ring, acc, wg - 1, k_tiles, it);
    store_acc<V12::BN>(acc, C, ldc, M, N, m0 + 64 * (wg - 1), n0, alpha, beta);
  }
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v12_warp_specialized, V12)

FASTGEMM_REGISTER_HGEMM(hgemm_v12_warp_specialized, {12, 90, 90, 16, "wgmma", "tma", "registers",
    "hgemm_v10_wgmma_tma", false,
    "producer warpgroup + 4-stage mbarrier ring, setmaxnreg, wgmma kept in flight across "
    "k-tiles"})
