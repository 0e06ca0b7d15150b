// hgemm_v01_mma — hierarchical tiling on tensor cores: block / warp / mma.
//
// What: a 128x128 block tile (BK = 32) split over 2x2 warps; each warp owns a 64x64 tile of C made
// of 4x8 mma.sync.m16n8k16 tiles with fp32 accumulators (128 floats per lane). Per 16-wide k-step a
// warp loads its A fragments with ldmatrix.x4 (one 16x16 tile each) and its B fragments with
// ldmatrix.x2 (16x8), then issues 32 mma. Tiles reach shared memory element by element (2-byte
// loads and stores), with plain (unpadded, unswizzled) rows.
// Why: the tensor cores do 16x8x16 multiply-adds per instruction — 4096 FLOPs where an FFMA does 2
// — and the warp tile reuses each A fragment 8 times and each B fragment 4 times from registers.
// What limits it: the copies. 2-byte loads need 8x the instructions of 16-byte ones, and each
// stored row is 64 bytes, so the 8 rows an ldmatrix reads fall into 2 bank groups: 4-way shared
// memory conflicts. One buffer: copy and math never overlap.
// Shapes: any M, N, K >= 1, any alignment (element-wise copies and stores); fp16 from sm_75
// (two m16n8k8 per mma there), bf16 from sm_80.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v01_mma, fastgemm::hgemm::V01)

FASTGEMM_REGISTER_HGEMM(hgemm_v01_mma, {1, 75, 0, 2, "mma_sync", "ldg", "registers",
    "", false,
    "block/warp/mma tiling, ldmatrix + mma.sync m16n8k16, element-wise copies"})
