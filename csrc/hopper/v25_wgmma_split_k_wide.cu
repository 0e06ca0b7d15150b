// hgemm_v25_wgmma_split_k_wide — v20's 128x256 tile with v24's split of K across a cluster: the
// split-K specialist for deep K on outputs that still have a few dozen wide tiles. A branch of
// v20, as v24 is of v21.
//
// What changed since v20: v24's schedule and epilogue on v20's tile (m64n256k16 per consumer
// warpgroup, a 4-stage ring of 48 KiB): a block per tile and share of K, the shares of a tile
// one cluster, and the partial tile (128 x 256 fp32 at a pitch of 264 floats, 132 KiB, in the
// drained ring) summed through distributed shared memory.
// Why it pays: a 128x256 tile does twice the math of v24's per byte of A brought into shared
// memory, as v20 does against v21, so on a long K share each SM runs closer to the tensor
// cores' rate; where a problem has enough 128x256 tiles to fill the GPU with a split of 2-4,
// that is worth more than v24's finer grain.
// What limits it: half as many tiles as v24 for a problem, so a small output needs twice the
// split (capped at 8) to fill the GPU, and each block reduces twice the partial tile.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v25_wgmma_split_k_wide, V25) {
  split_k_gemm<T, V25, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v25_wgmma_split_k_wide, V25)

FASTGEMM_REGISTER_HGEMM(hgemm_v25_wgmma_split_k_wide, {25, 90, 90, 16, "wgmma", "tma", "split_k",
    "hgemm_v20_hoisted_beta", true,
    "v24's split of K on v20's 128x256 tile: twice v24's math per byte on a long K share"})
