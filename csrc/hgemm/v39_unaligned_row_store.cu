// hgemm_v39_unaligned_row_store — v05's 128x128 tiles reading operands aligned to their 2-byte
// elements only, and storing C row by row: large outputs with odd sizes and a short K, in place.
//
// What changed since v05: tiles reach shared memory by element loads (Copy::elem_prefetch, as
// v37), one k-tile ahead in registers with two shared buffers; 4x2 warps of 32x64 instead of 2x2
// of 64x64; tiles visited in groups of 8 tile rows (v09's raster); and C leaves through shared
// memory (ROW_STORE, hgemm.cuh): each warp stages 16 rows of its tile and stores them with
// consecutive lanes on consecutive columns, element by element.
// Why it pays: an odd K or N (or a view one element in) makes rows under-aligned. auto then copies
// A and B into aligned temporaries and, where C's rows are under-aligned too, runs the GEMM into
// an aligned work buffer that a last kernel copies into C. With a short K the output dominates the
// traffic: C written, read and written again, plus three or four launches (7812 x 8278 x 46 moved
// three times its 129 MB C). Here A and B are read in place and C is written once, in whole
// sectors: a fragment's pair stores would touch 8 rows per warp store.
// What limits it: element loads issue eight times the load instructions of 16-byte copies and one
// k-tile of prefetch hides little latency, so the mainloop is slower than the cp.async rungs';
// mma.sync, not wgmma. It pays where the output's stores outweigh the loop: a K of a few hundred
// at most (auto's rule is fitted to a sweep).
// Shapes: any M, N, K >= 1; sm_80+; 2-byte aligned operands, any layout of A and B; C row-major
// (auto runs a column-major C as its transpose), any ldc.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v39_unaligned_row_store, fastgemm::hgemm::V39)

FASTGEMM_REGISTER_HGEMM(hgemm_v39_unaligned_row_store, {39, 80, 0, 2, "mma_sync", "ldg",
    "row_stores", "hgemm_v05_reg_prefetch", true,
    "v05 on 2-byte aligned operands read in place, C stored row by row through shared memory"})
