// hgemm_v36_split_k_reduce_wide — v35 on v23's 64x64 tiles: K split over the SMs for outputs of
// 17 to 64 rows over a few tiles.
//
// What changed since v35: the block tile is v23's 64 x 64 (2 x 2 warps of 32 x 32, 128 KiB of
// ring: one block per SM); the split with no owner and the second kernel's sum are v35's.
// Why it pays: v23 and v26 split a tile's K across a cluster of at most 8 blocks, so an output of
// one or two 64-row tiles with a deep K (51 x 192 x 21440: three tiles) runs on at most 24 SMs;
// here on all of them, each with its share of K, and one 64-row tile reads B once where 16-row
// tiles would read it four times.
// What limits it: the partial tiles (16 KiB each) go through L2 and back, and the second launch
// costs a few microseconds: it pays only where the tiles are few and K deep; rows past M are
// padding.
// Shapes: any M, N, K >= 1 (auto sends it outputs of 17-64 rows or columns over few tiles with a
// deep K); sm_80+ (the dependent launch from sm_90); 16-byte aligned A and B; C row-major (or
// column-major: a flipped plan's C^T), any ldc and alignment.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_REDUCE_RUNG(hgemm_v36_split_k_reduce_wide, fastgemm::hgemm::V36)

FASTGEMM_REGISTER_HGEMM(hgemm_v36_split_k_reduce_wide, {36, 80, 0, 16, "mma_sync", "cp_async",
    "split_k_global", "hgemm_v35_split_k_reduce", true,
    "v35 on 64x64 tiles: K split over the SMs for outputs of up to 64 rows over few tiles"})
