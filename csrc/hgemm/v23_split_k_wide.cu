// hgemm_v23_split_k_wide — v22 on 64x64 tiles, for outputs of 33 to 64 rows.
// A branch of v07 like v22 (same template, same split-K cluster epilogue); its config is v22's
// with a taller tile.
//
// What changed since v22: the block tile is 64 x 64 (2 x 2 warps of 32 x 32); ring, K depth and
// the split across a cluster are v22's.
// Why it pays: with 16-row tiles a 64-row output reads each column panel of B four times (once
// per row tile, from L2 at best); a 64-row tile reads it once, so L2 traffic stays at the level of
// the HBM stream, and each warp reuses a B fragment twice.
// What limits it: 128 KiB of shared memory per block: one block per SM, so outputs with many
// tiles (wide N) are better served by the wgmma rungs; rows past M are padding.
// Shapes: any M, N, K >= 1 (auto runs v42, this tile with six stages, where it ran v23: 33-64
// rows or columns with few tiles); sm_80+, 16-byte aligned operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v23_split_k_wide, fastgemm::hgemm::V23)

FASTGEMM_REGISTER_HGEMM(hgemm_v23_split_k_wide, {23, 80, 0, 16, "mma_sync", "cp_async", "split_k",
    "hgemm_v07_multistage", true,
    "v22 on 64x64 tiles: one read of B for outputs of up to 64 rows"})
