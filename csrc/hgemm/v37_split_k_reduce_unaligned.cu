// hgemm_v37_split_k_reduce_unaligned — v35 reading operands aligned to their 2-byte elements
// only: a deep K on a few 16-row tiles with odd sizes, without the padded path's copies.
//
// What changed since v35: how tiles reach shared memory (Copy::elem_prefetch, hgemm.cuh). cp.async
// moves 16-byte chunks from 16-byte aligned addresses; here every chunk of 8 elements is 8 element
// loads assembled in registers, all of a k-tile's issued at once, one k-tile ahead of the mma (two
// shared buffers, as v05's register prefetch). The split over the SMs and the second kernel's sum,
// which stores C element by element, are v35's.
// Why it pays: an odd K or N (or a view one element in) makes rows under-aligned, and auto then
// copies A and B into aligned temporaries and runs C through a work buffer: three or four more
// launches around a GEMM of a few microseconds (2 x 14 x 12430: 34 us against torch's 15). Read in
// place, the call is the split kernel and the sum.
// What limits it: element loads issue eight times the load instructions of 16-byte ones and one
// k-tile of prefetch hides less latency than v35's four-stage ring, so it streams a large operand
// slower; it pays where the copies would cost more than that: small outputs, few tiles.
// Shapes: any M, N, K >= 1 (auto sends it under-aligned outputs of at most 16 rows over few tiles
// with a deep K); sm_80+ (the dependent launch from sm_90); 2-byte aligned operands; C row-major
// (or column-major: a flipped plan's C^T), any ldc.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_REDUCE_RUNG(hgemm_v37_split_k_reduce_unaligned, fastgemm::hgemm::V37)

FASTGEMM_REGISTER_HGEMM(hgemm_v37_split_k_reduce_unaligned, {37, 80, 0, 2, "mma_sync", "ldg",
    "split_k_global", "hgemm_v35_split_k_reduce", true,
    "v35 reading 2-byte aligned operands in place: element loads one k-tile ahead in registers, "
    "no padded copies"})
