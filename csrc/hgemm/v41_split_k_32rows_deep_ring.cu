// hgemm_v41_split_k_32rows_deep_ring — v26 with a 6-stage ring, for outputs of 17 to 32 rows
// over at most one block per SM. A branch of v26 (same template, tile and cluster split).
//
// What changed since v26: the ring holds 6 stages of 32 x 128 (A) and 128 x 64 (B) instead of 4:
// 144 KiB of shared memory, five k-tiles in flight per block instead of three.
// Why it pays: as v40 for v22: where the grid has at most one block per SM the bytes in flight
// per SM set the bandwidth of the single pass over B, and v26's three k-tiles fall short. Eight
// stages (192 KiB) measured slower than six on the H100.
// What limits it: one block per SM, so past SMs tiles of 32 x 64 (where v26 runs two blocks per
// SM) it loses; rows past M are padding.
// Shapes: any M, N, K >= 1 (auto sends it outputs of 17-32 rows, or columns transposed, over
// at most SMs tiles of 32x64); sm_80+ where a block may take 144 KiB of shared memory (sm_80,
// sm_90), 16-byte aligned operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v41_split_k_32rows_deep_ring, fastgemm::hgemm::V41)

FASTGEMM_REGISTER_HGEMM(hgemm_v41_split_k_32rows_deep_ring, {41, 80, 0, 16, "mma_sync",
    "cp_async", "split_k", "hgemm_v26_split_k_32rows", true,
    "v26 with a 6-stage ring (144 KiB): more bytes in flight per SM where its grid has at most "
    "one block per SM"})
