// hgemm_v22_split_k — skinny problems: 16x64 output tiles, K split across a thread-block cluster.
// A branch of v07 (same template and cp.async ring), a shape specialist for decode GEMMs.
//
// What changed since v07: the block tile is 16 x 64 (four warps side by side, each one 16x16
// mma column pair) with a 4-stage ring of 128-deep K tiles, and the grid gains a z dimension: the
// z blocks of one output tile form a cluster, each runs the ring over an even share of the K
// tiles, and their fp32 partial tiles are summed through distributed shared memory in rank order
// before C is written (hgemm.cuh, split_epilogue). The split count is chosen at launch: as many
// blocks as keep the grid within one per SM, at most 8, at least two K tiles per block, and all
// clusters resident at once; and where that leaves one share per tile over more than SMs/2 tiles,
// two shares at two blocks per SM, so that no SM idles (common/split_k.cuh, split_fill).
// Why it pays: a problem with few output rows (M <= 16: decode, small batches) has few output
// tiles of any usual size, so a grid of them leaves most SMs idle and reads the large operand at a
// fraction of HBM bandwidth. Splitting K multiplies the blocks without more traffic to global
// memory (the partial sums never leave the cluster) and keeps the result deterministic.
// What limits it: mma rows past M are padding (free: the problem is bound by reading B); each
// output tile re-reads its 16 rows of A per block (from L2); the split needs clusters (sm_90+;
// older GPUs run one block per tile); a 16-row tile wastes reuse once M grows past ~32.
// Shapes: any M, N, K >= 1 (auto sends it small M over more than SMs tiles; v40 takes fewer);
// sm_80+, 16-byte aligned operands.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v22_split_k, fastgemm::hgemm::V22)

FASTGEMM_REGISTER_HGEMM(hgemm_v22_split_k, {22, 80, 0, 16, "mma_sync", "cp_async", "split_k",
    "hgemm_v07_multistage", true,
    "16x64 tiles, K split across a cluster, partial tiles summed in rank order through "
    "distributed shared memory"})
