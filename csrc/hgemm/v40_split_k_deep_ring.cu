// hgemm_v40_split_k_deep_ring — v22 with a 6-stage ring, for decode grids of at most one block
// per SM. A branch of v22 (same template, tile, K depth and split-K cluster epilogue).
//
// What changed since v22: the cp.async ring holds 6 stages of 16 x 128 (A) and 128 x 64 (B)
// instead of 4: 120 KiB of shared memory, five k-tiles in flight per block instead of three.
// Why it pays: a decode GEMM reads B once, so its speed is the bytes each SM keeps in flight
// against HBM latency (Little's law). Where the grid has at most one block per SM (up to SMs
// output tiles of 16 x 64, split along K to about one block per SM) v22's three 16 KiB k-tiles of
// B per SM are too few to cover the latency at full bandwidth, the more so on the H200's faster
// HBM; five are enough, and more (8 stages) measured no better.
// What limits it: 120 KiB a block is one block per SM, so where v22's tiles outnumber the SMs
// (its grid then runs two 80 KiB blocks per SM) v40 has fewer bytes in flight than v22 and
// loses; rows past M are padding, as in v22.
// Shapes: any M, N, K >= 1 (auto sends it outputs of at most 16 rows, or columns transposed,
// over at most SMs tiles of 16x64); sm_80+ where a block may take 120 KiB of shared memory
// (sm_80, sm_90), 16-byte aligned operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v40_split_k_deep_ring, fastgemm::hgemm::V40)

FASTGEMM_REGISTER_HGEMM(hgemm_v40_split_k_deep_ring, {40, 80, 0, 16, "mma_sync", "cp_async",
    "split_k", "hgemm_v22_split_k", true,
    "v22 with a 6-stage ring (120 KiB): more bytes in flight per SM where its grid has at most "
    "one block per SM"})
