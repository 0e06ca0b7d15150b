// hgemm_v48_split_k_32rows_stream — v47's stream-K schedule on v26's 32x64 tiles, for outputs of
// 17-32 rows. A branch of v26 (same template, tile and ring); its config is v26's with v47's
// schedule switched on.
//
// What changed since v26: the schedule (STREAM_K, hgemm.cuh: run_stream_k), as v47 changed v22's:
// as many blocks as are resident at once (two 96 KiB blocks per SM), each an equal run of the
// k-tiles of all tiles, tile after tile; a tile cut between two blocks is summed through an 8 KiB
// fp32 partial tile in global memory, in a fixed order.
// Why it pays: for the reason v47 does. v26 runs a block per 32x64 tile, two per SM, so an
// output of slightly more tiles than that runs a second round of a few blocks alone, reading B at
// a fraction of HBM bandwidth.
// What limits it: v47's limits (a segment drains and refills the ring; an owner may wait for the
// block before it; whole rounds of tiles gain nothing), and v26's padding rows past M.
// Shapes: any M, N, K >= 1 (auto sends it outputs of 17-32 rows over slightly more tiles than
// resident blocks); sm_80+ (the dependent launch from sm_90), 16-byte aligned operands, C
// row-major (or column-major: a flipped plan's C^T).
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_STREAM_RUNG(hgemm_v48_split_k_32rows_stream, fastgemm::hgemm::V48)

FASTGEMM_REGISTER_HGEMM(hgemm_v48_split_k_32rows_stream, {48, 80, 0, 16, "mma_sync", "cp_async",
    "split_k_global", "hgemm_v26_split_k_32rows", true,
    "v26's 32x64 tiles under v47's stream-K schedule: equal runs of the k-tiles of all tiles, a "
    "tile cut between two blocks summed in a fixed order"})
