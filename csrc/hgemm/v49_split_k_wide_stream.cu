// hgemm_v49_split_k_wide_stream — v23's 64x64 tiles under v47's stream-K schedule, on 64-deep
// k-tiles so that three blocks share an SM. A branch of v23 for flipped narrow outputs of 33-64
// columns whose B^T rows are not whole 128-byte lines.
//
// What changed since v23: the schedule (STREAM_K, hgemm.cuh: run_stream_k), as v47 changed
// v22's, and the ring: four stages of 64-deep k-tiles (64 KiB) instead of four of 128 (128 KiB).
// The resident blocks (three per SM) each take an equal run of the k-tiles of all tiles; a tile
// cut between two blocks is summed through a 16 KiB fp32 partial tile in global memory, in a
// fixed order.
// Why it pays: v23 and v42 hold one block (four warps) per SM, each warp a 32x32 tile of
// mma.sync work per k-step with nothing beside it to hide its latency; on a flipped output of
// 40 or 48 columns (B^T's rows 80 or 96 bytes apart) they ran 1.5-2x slower than on 64 columns
// (some of it from a branch per chunk in the copies of a tile crossing MN since f5dda8b: 1.4x at
// 8192x48x4096, benchmarks/NOTES.md), and over 67-132 tiles they cannot split K. Three blocks
// per SM hide the latency, and the stream-K runs keep every SM busy whatever the tile count.
// What limits it: the 64-row tile is padding past the output's rows (a quarter of the work at
// 48 columns); a segment drains and refills the ring; with rows on whole 128-byte lines (64
// columns) v42's deeper ring and v21's wgmma tiles were as fast or faster.
// Shapes: any M, N, K >= 1; sm_80+ (the dependent launch from sm_90), 16-byte aligned operands,
// C row-major (or column-major: a flipped plan's C^T).
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_STREAM_RUNG(hgemm_v49_split_k_wide_stream, fastgemm::hgemm::V49)

FASTGEMM_REGISTER_HGEMM(hgemm_v49_split_k_wide_stream, {49, 80, 0, 16, "mma_sync", "cp_async",
    "split_k_global", "hgemm_v23_split_k_wide", true,
    "v23's 64x64 tiles under v47's stream-K schedule on 64-deep k-tiles, three blocks per SM: "
    "equal runs of the k-tiles of all tiles, a tile cut between two blocks summed in a fixed "
    "order"})
