// hgemm_v26_split_k_32rows — v22 on 32x64 tiles, for outputs of 17 to 32 rows.
// A branch of v22 (same template, ring and split-K cluster epilogue); its config is v22's with a
// tile twice as tall.
//
// What changed since v22: the block tile is 32 x 64 (four warps side by side, each two 16-row mma
// rows by a 16-column pair); ring, K depth and the split across a cluster are v22's.
// Why it pays: with 16-row tiles an output of 17-32 rows is two row tiles, so each column panel
// of B is read twice (the second time from L2 at best) and the blocks double; v23's 64-row tile
// reads it once but does four times v22's mma work per byte of B, which with one block of four
// warps per SM no longer hides under the HBM stream on the faster-memory parts. 32 rows read B
// once with twice v22's work per byte.
// What limits it: rows past M are padding (up to half the mma work at 17 rows); its four stages
// (96 KiB) keep few bytes in flight where the grid has one block per SM (v41 there).
// Shapes: any M, N, K >= 1 (auto sends it 17-32 rows, or 17-32 columns transposed, over more
// than SMs tiles; v41 takes fewer); sm_80+, 16-byte aligned operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v26_split_k_32rows, fastgemm::hgemm::V26)

FASTGEMM_REGISTER_HGEMM(hgemm_v26_split_k_32rows, {26, 80, 0, 16, "mma_sync", "cp_async",
    "split_k", "hgemm_v22_split_k", true,
    "v22 on 32x64 tiles: one read of B with half v23's mma work, for outputs of up to 32 rows"})
