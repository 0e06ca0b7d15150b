// hgemm_v35_split_k_reduce — v22's 16x64 tiles with K split over the SMs, not a cluster: every
// block stores its partial tile and a second kernel sums them. A branch of v22 for deep K on
// outputs of a few 16-row tiles.
//
// What changed since v22: the reduction (SPLIT_REDUCE, hgemm.cuh). The S blocks of a tile no
// longer form a cluster; each writes its fp32 16x64 partial tile (4 KiB) into a slot of the
// stream's scratch and leaves, and sum_partial_tiles_kernel (common/split_k.cuh), a dependent
// launch on the same stream, adds each output's S values in z order (eight ranges of shares on
// eight warps, then the eight sums in order: the same bits on every call) and stores
// alpha * sum + beta * C element by element. S is the most shares of at least two 128-deep K
// tiles, up to 256, with every block resident at once (two per SM).
// Why it pays: a cluster holds at most 8 blocks, so an output of one or two 16x64 tiles with a
// deep K (10 x 13 x 30036, a decode GEMM against a short weight) kept at most 8-16 SMs busy, each
// on an eighth of K; here every SM takes a share (S = 117 there), and the partial tiles are small.
// C is written by element stores, so an under-aligned C needs no work buffer.
// What limits it: the second launch and the partial tiles' round trip through L2 (tiles x S x
// 4 KiB) cost a few microseconds, so it pays only where the tiles are few and K deep; a 16-row
// tile re-reads A per tile as v22 does.
// Shapes: any M, N, K >= 1 (auto sends it outputs of at most 16 rows or columns over few tiles
// with a deep K); sm_80+ (the dependent launch from sm_90); 16-byte aligned A and B; C row-major
// (or column-major: a flipped plan's C^T), any ldc and alignment.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_REDUCE_RUNG(hgemm_v35_split_k_reduce, fastgemm::hgemm::V35)

FASTGEMM_REGISTER_HGEMM(hgemm_v35_split_k_reduce, {35, 80, 0, 16, "mma_sync", "cp_async",
    "split_k_global", "hgemm_v22_split_k", true,
    "v22's 16x64 tiles with K split over the SMs: every block stores its partial tile and a "
    "second kernel sums them in a fixed order, for few tiles with a deep K"})
