// hgemm_v24_wgmma_split_k — v21's 128x128 wgmma tile with K split across a thread-block cluster:
// a branch of v21 for outputs with few tiles and a long K.
//
// What changed since v21: the schedule and the epilogue. Instead of persistent blocks that walk
// whole tiles, the grid has a block per tile and share of K (grid z = S, up to 8); the S blocks of
// a tile form a cluster. Each block's producer streams only its share of the k-tiles into v21's
// ring and exits after the two cluster barriers; each consumer warpgroup multiplies its 64 rows
// as in v21, then writes its fp32 accumulators into the drained ring (the partial tile), and the
// cluster sums the S partial tiles in rank order through distributed shared memory, each block
// storing its part of the tile once (common/split_k.cuh) — no workspace, no second kernel, the
// same bits on every call.
// Why it pays: v21 gives each SM one or more whole tiles, so a problem with fewer tiles than SMs
// (512 x 512 x 32768: 16 tiles; 128 x 4096 x 14336: 32) leaves most SMs idle however long K is.
// Splitting K multiplies the busy SMs by S while each block still streams its share through the
// same ring at the same arithmetic intensity.
// What limits it: one tile per block, so each block pays the ring's fill and the reduction (a
// round trip of the fp32 tile through shared memory and DSMEM, 64 KiB per block) once: short K
// shares do not amortise it, and problems with enough tiles are better served by v21/v20. The
// clusters of one tile must fit in a GPC at once (split_count checks), which caps S by the GPU.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v24_wgmma_split_k, V24) {
  split_k_gemm<T, V24, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v24_wgmma_split_k, V24)

FASTGEMM_REGISTER_HGEMM(hgemm_v24_wgmma_split_k, {24, 90, 90, 16, "wgmma", "tma", "split_k",
    "hgemm_v21_narrow_tile", true,
    "v21's tile with K split across a cluster of up to 8 blocks, partial tiles summed in "
    "distributed shared memory: for few output tiles and long K"})
