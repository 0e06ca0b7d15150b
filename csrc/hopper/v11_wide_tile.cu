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
#include "hopper/one_stage.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v11_wide_tile, V11) {
  one_stage_gemm<T, V11, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v11_wide_tile, V11)

FASTGEMM_REGISTER_HGEMM(hgemm_v11_wide_tile, {11, 90, 90, 16, "wgmma", "tma", "registers",
    "hgemm_v10_wgmma_tma", true,
    "128x256 tiles, two consumer warpgroups issuing m64n256k16"})
