// hgemm_v47_split_k_stream — v22's 16x64 tiles under a stream-K schedule: the resident blocks
// take equal runs of the k-tiles of all output tiles. A branch of v22 for decode GEMMs whose
// tiles outnumber the blocks the SMs hold at once by a little.
//
// What changed since v22: the schedule (STREAM_K, hgemm.cuh: run_stream_k; common/split_k.cuh:
// StreamK). v22's grid is one block per tile (or S per tile in a cluster); v47's is as many
// blocks as are resident at once (two per SM), and block g takes work units [W g / G,
// W (g + 1) / G) of the W = tiles x k-tiles units, tile after tile. A tile cut between two
// blocks is summed through global memory: the block that computes its earlier k-tiles publishes
// a 4 KiB fp32 partial tile (first, before its other segments) and the block that ends the tile
// adds it (last, after its other segments) before the one store of C. The order of the sums is
// fixed by the grid: the same bits on every call.
// Why it pays: a decode GEMM is bound by reading B once, at a rate set by the blocks in flight.
// With one block per tile, a grid of slightly more tiles than resident blocks (272 tiles of 16x64
// for 264 blocks: N = 17408) runs a second round of a few blocks alone, nearly doubling the time;
// splitting every tile S ways in a cluster shortens that tail but adds S - 1 partial tiles per
// tile. Here every block reads the same number of k-tiles, and at most one partial tile per block
// crosses L2.
// What limits it: a segment drains and refills the ring (a block runs one or two tiles' worth,
// so one to three segments); an owner may wait for the block before it; with whole rounds of
// tiles (tiles a multiple of the resident blocks) v22 does the same work without the hand-off.
// Shapes: any M, N, K >= 1 (auto sends it outputs of at most 16 rows over slightly more tiles
// than resident blocks); sm_80+ (the dependent launch from sm_90), 16-byte aligned operands,
// C row-major (or column-major: a flipped plan's C^T).
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_STREAM_RUNG(hgemm_v47_split_k_stream, fastgemm::hgemm::V47)

FASTGEMM_REGISTER_HGEMM(hgemm_v47_split_k_stream, {47, 80, 0, 16, "mma_sync", "cp_async",
    "split_k_global", "hgemm_v22_split_k", true,
    "v22's 16x64 tiles under a stream-K schedule: the resident blocks take equal runs of the "
    "k-tiles of all tiles, a tile cut between two blocks summed in a fixed order"})
