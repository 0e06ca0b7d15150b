// hgemm_v28_split_k_global_narrow — v24's 128x128 tile with v27's split of K through global
// memory: a branch of v24 for deep K on outputs of a few 128x128 tiles.
//
// What changed since v24: the reduction, as v27 changes v25's (split_global.cuh): the S blocks of
// a tile are not a cluster; they hand their fp32 partial tiles (64 KiB) through a scratch buffer
// of the stream to the tile's last ceil(S / 2) blocks, which sum a band of the tile each in a
// fixed order and store C from registers.
// Why it pays: v24's split is bounded by the clusters of S the GPCs hold at once, so an output
// of 16 tiles cannot be split 8 ways on an H100 (16 clusters of 8 do not fit): 512 x 512 x 32768
// runs on 64 SMs. Through global memory S = 8 puts 128 blocks on the SMs, each with an eighth
// of K, and v24's partial tile is half of v27's, so the helpers' sums cost half as much per share.
// What limits it: the partial tiles' round trip through L2 at the end of every share, and a 128x128
// tile does half of v27's math per byte brought into shared memory; with 32 or more tiles v27's
// wider tile runs closer to the tensor cores' rate. The grid is kept within one block per SM,
// and the next launch starts once all its blocks have exited (no early launch_dependents): back
// to back, the next grid's blocks placed early on the SMs of the contributors ran slower.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B; C row-major.
// sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_global.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_SPLIT_GLOBAL_KERNEL(hgemm_v28_split_k_global_narrow, V28)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v28_split_k_global_narrow, V28)

FASTGEMM_REGISTER_HGEMM(hgemm_v28_split_k_global_narrow, {28, 90, 90, 16, "wgmma", "tma",
    "split_k_global", "hgemm_v24_wgmma_split_k", true,
    "v24's 128x128 tile with v27's split of K through global memory: S bounded by the SMs, "
    "for deep K on a few 128x128 tiles"})
