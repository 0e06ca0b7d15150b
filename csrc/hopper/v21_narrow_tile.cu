// hgemm_v21_narrow_tile — v20 on 128x128 tiles: twice as many output tiles for the same problem.
//
// What changed since v20: the block tile narrows from 128x256 to 128x128 (each consumer
// warpgroup issues m64n128k16 wgmmas on its 64 rows), the ring deepens from 4 to 6 stages of
// 32 KiB, and the epilogue stores a warpgroup's 64x128 slab in two 64x64 pieces (warpgroup 2
// still through its borrowed stage). Everything else — persistent grouped schedule, balanced
// grid, programmatic dependent launch, beta == 0 tested once per tile — is v20's.
// Why faster, where it is: a problem with fewer 128x256 tiles than the GPU has SMs leaves SMs
// idle for the whole kernel (1024^3: 32 tiles for 132 SMs). Halving the tile doubles the tiles,
// so twice as many SMs work on such problems, and the deeper ring keeps each of them fed from
// L2 over a K loop that is as long as before.
// What limits it: each byte brought into shared memory feeds half the math of v20's tile (64
// instead of 85 FLOP per byte from L2), and the epilogue is a larger share of each tile, so on
// problems that fill the GPU with 128x256 tiles v20 stays ahead; still too few tiles at the
// smallest shapes, which want split-K or stream-K.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v21_narrow_tile, V21) {
  persistent_tma_store_gemm<T, V21, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v21_narrow_tile, V21)

FASTGEMM_REGISTER_HGEMM(hgemm_v21_narrow_tile, {21, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v20_hoisted_beta", false,
    "v20 on 128x128 tiles with a 6-stage ring: twice the tiles, for problems that leave SMs "
    "idle with 128x256 tiles"})
