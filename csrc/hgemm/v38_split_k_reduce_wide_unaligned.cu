// hgemm_v38_split_k_reduce_wide_unaligned — v37's element loads on v36's 64x64 tiles: a deep K on
// a few tiles of up to 64 rows with operands aligned to their elements only.
//
// What changed since v37: the block tile is v36's 64 x 64 (2 x 2 warps of 32 x 32); the element
// loads one k-tile ahead and the split with no owner are v37's.
// Why it pays: as v37's, for 17-64 rows (or more over few tiles), where 16-row tiles would read B
// once per 16 rows: an under-aligned A or B is read in place instead of copied, and C is stored
// element by element by the second kernel instead of through a work buffer.
// What limits it: 16 element chunks a thread per k-tile held in registers (64 of them) beside
// the 32x32 warp tile's accumulators; one k-tile of prefetch; element loads.
// Shapes: any M, N, K >= 1 (auto sends it under-aligned outputs of few 64x64 tiles with a deep
// K); sm_80+ (the dependent launch from sm_90); 2-byte aligned operands; C row-major (or
// column-major: a flipped plan's C^T), any ldc.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_REDUCE_RUNG(hgemm_v38_split_k_reduce_wide_unaligned, fastgemm::hgemm::V38)

FASTGEMM_REGISTER_HGEMM(hgemm_v38_split_k_reduce_wide_unaligned, {38, 80, 0, 2, "mma_sync", "ldg",
    "split_k_global", "hgemm_v37_split_k_reduce_unaligned", true,
    "v37 on 64x64 tiles: 2-byte aligned operands read in place, K split over the SMs"})
