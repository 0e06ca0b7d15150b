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
// (Parts: ring.cuh, scheduler.cuh's Persistent, persistent.cuh's persistent_gemm.)
// What limits it: each block still loads its own A and B tiles (neighbours on the same cluster
// re-fetch the same data from L2), and the epilogue writes C straight from registers.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v13_persistent, V13) {
  using RingT = RingOf<V13>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();
  persistent_gemm<T, V13::PDL, A_KMAJOR, B_KMAJOR, PersistentOf<V13>>(
      ring, &tma_a, &tma_b, M, N, K, OwnBuffers<RingT>{},
      [&](float(&acc)[V13::BN / 2], int64_t row0, int64_t col0, int, unsigned char*) {
        store_acc<V13::BN>(acc, C, ldc, M, N, row0, col0, alpha, beta);
      });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v13_persistent, V13)

FASTGEMM_REGISTER_HGEMM(hgemm_v13_persistent, {13, 90, 90, 16, "wgmma", "tma", "registers",
    "hgemm_v12_warp_specialized", false,
    "persistent blocks (one per SM), grouped L2-aware tile order, epilogue overlapped "
    "with the next tile's copies"})
