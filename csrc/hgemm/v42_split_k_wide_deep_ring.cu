// hgemm_v42_split_k_wide_deep_ring — v23 with a 6-stage ring, for outputs of 33 to 64 rows.
// A branch of v23 (same template, tile and cluster split).
//
// What changed since v23: the ring holds 6 stages of 64 x 128 (A) and 128 x 64 (B) instead of 4:
// 192 KiB of shared memory, five k-tiles in flight per block instead of three.
// Why it pays: v23's 128 KiB already held one block per SM, so the deeper ring adds bytes in
// flight per SM without losing a resident block: the single pass over B runs closer to HBM
// bandwidth, measurably on the H200's faster HBM (on the H100 with a row-major B it is level).
// What limits it: v23's limits (one block per SM; many tiles are better served by the wgmma
// rungs); A's 64-row stages take half the ring, so a stage carries 16 KiB of B for 32 KiB of
// shared memory.
// Shapes: any M, N, K >= 1 (auto sends it where it sent v23: 33-64 rows or columns with few
// tiles); sm_80+ where a block may take 192 KiB of shared memory (sm_90), 16-byte aligned
// operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v42_split_k_wide_deep_ring, fastgemm::hgemm::V42)

FASTGEMM_REGISTER_HGEMM(hgemm_v42_split_k_wide_deep_ring, {42, 80, 0, 16, "mma_sync",
    "cp_async", "split_k", "hgemm_v23_split_k_wide", true,
    "v23 with a 6-stage ring (192 KiB): more bytes in flight per SM wherever v23 runs"})
