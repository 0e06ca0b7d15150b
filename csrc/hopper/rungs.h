// hopper/rungs.h — the configuration of every wgmma rung, each derived from the rung it changes,
// so that the ladder's steps read as a diff. Kernel and launcher read the same struct (tile,
// threads, ring depth, scheduler, cluster size, epilogue, PDL); the shared memory follows from
// it (launch.cuh: smem_bytes). Each rung's .cu says why its change pays and what limits it.
//
// Main line: V10 -> V12 -> V13 -> V14 -> V16 -> V18 -> V19 -> V20 -> V21. Branches, selectable but not
// improvements on their parent: V11 (V10's wide tile alone; V12 takes it with the ring that
// makes it pay), V15 (V14 + 2-CTA clusters); V24 (V21 with K split across a cluster) and V25
// (the same on V20's wider tile) are specialists for few tiles and long K, and V27 (V25 with the
// partial tiles summed in global memory) frees V25's split from cluster residency, as V28 does
// V24's; V29 and V30 (V28 and V27 with a stream-K schedule) share all the k-tiles of the problem
// evenly among the SMs; V31 (V20 with the last partial round of tiles split along K) evens out
// the rounds of V20's tiles, and V32 runs it on 128x192 tiles, whose count fits the SMs better on
// some widths; V33 runs V24's split on 128x64 tiles, twice as many blocks for the same output;
// V34 runs V24 on operands whose rows are not 16-byte aligned, without copying the large one;
// V43 runs V21 on 64x128 tiles in clusters of two that share B, twice V21's blocks for the
// same output, each reading a third less from L2; V44 runs V21 on 192x128 tiles, whose count
// fits the SMs in one round on some mid-size outputs that V21's take in two; V45 runs V21's
// 128x128 tiles in clusters of two that share B, halving the L2 requests of a B whose rows are
// off 128 bytes, and V46 does the same for V20's 128x256 tiles.
// The registry's `parent` and `branch` say the same.
#pragma once
#include "hopper/launch.cuh"

namespace fastgemm::hopper {

struct V10 {  // wgmma + TMA, one stage, one warpgroup per 128x128 tile, registers -> global
  static constexpr int BM = 128, BN = 128, THREADS = 128, MIN_BLOCKS = 0;  // launch bounds
  static constexpr Mainloop MAINLOOP = Mainloop::one_stage;
  static constexpr int STAGES = 1;
  static constexpr Schedule SCHEDULE = Schedule::one_shot;
  static constexpr int GROUP_M = 0, CLUSTER = 1;
  static constexpr bool BALANCE = false;
  static constexpr Store STORE = Store::registers;
  static constexpr int C_PIECE = 0, C_SLOTS = 0;  // TmaStore: 64x64 boxes per store, pieces
  static constexpr bool BORROW = false, HOIST_BETA = false;
  static constexpr bool PDL = false;
  static constexpr int STAGING = 0;  // shared memory beyond the tiles for a staging producer
  static constexpr int PROMOTE = 0;  // k-tiles per partial tile added in fp32 (mainloop.cuh)
};
struct V11 : V10 {  // 128x256 tiles, two warpgroups of m64n256k16
  static constexpr int BN = 256, THREADS = 256;
};
struct V12 : V10 {  // v11's tile, two consumer warpgroups + a producer warpgroup, 4-stage ring
  static constexpr int BN = 256, THREADS = 384, MIN_BLOCKS = 1;
  static constexpr Mainloop MAINLOOP = Mainloop::ring;
  static constexpr int STAGES = 4;
};
struct V13 : V12 {  // persistent blocks, grouped tile order
  static constexpr Schedule SCHEDULE = Schedule::persistent;
  static constexpr int GROUP_M = 16;
};
struct V14 : V13 {  // stmatrix + TMA-store epilogue (32 KiB per warpgroup), 3 stages
  static constexpr int STAGES = 3;
  static constexpr Store STORE = Store::tma;
  static constexpr int C_PIECE = 4, C_SLOTS = 1;
};
struct V15 : V14 {  // 2-CTA clusters sharing B by multicast (groups of 8 cluster tiles: 2048 rows)
  static constexpr int CLUSTER = 2, GROUP_M = 8;
};
struct V16 : V14 {  // C stored in 8 KiB pieces, bought back as a fourth stage; balanced grid
  static constexpr int STAGES = 4;
  static constexpr int C_PIECE = 1, C_SLOTS = 2;
  static constexpr bool BALANCE = true;
};
struct V18 : V16 {  // warpgroup 2 stores through its last stage; slabs in two pieces of two boxes
  static constexpr int C_PIECE = 2;
  static constexpr bool BORROW = true;
};
struct V19 : V18 {  // programmatic dependent launch
  static constexpr bool PDL = true;
};
struct V20 : V19 {  // beta == 0 tested once per tile, outside the store loop
  static constexpr bool HOIST_BETA = true;
};
struct V21 : V20 {  // 128x128 tiles (twice the tiles per problem), a 6-stage ring
  static constexpr int BN = 128, STAGES = 6;
  static constexpr int C_PIECE = 1;
};
// Branch of V21: a block per tile and share of K, the shares of a tile one cluster, their fp32
// partial tiles (rows at a pitch of RED_LD floats, in the drained ring) summed through DSMEM.
struct V24 : V21 {
  static constexpr Schedule SCHEDULE = Schedule::split_k;
  static constexpr int GROUP_M = 0;
  static constexpr bool BALANCE = false, BORROW = false;
  static constexpr Store STORE = Store::split_k;
  static constexpr int C_PIECE = 0, C_SLOTS = 0;
  static constexpr int RED_LD = BN + 8, SPLIT_MIN_KTILES = 4;
};
// V21 on 64x128 tiles in 2-CTA clusters: the pair stacks along M (a 128x128 cluster tile) and
// shares its B tile by multicast, as V15 does; one consumer warpgroup per CTA, a 24 KiB stage,
// eight of them (a branch of V21).
struct V43 : V21 {
  static constexpr int BM = 64, THREADS = 256, STAGES = 8, CLUSTER = 2;
  static constexpr bool BORROW = false;
};
// V21 in 2-CTA clusters: the pair stacks along M (a 256x128 cluster tile) and shares its B tile
// by multicast, as V15 does for V14; groups of 8 cluster tiles keep V21's 2048-row bands (a
// branch of V21).
struct V45 : V21 {
  static constexpr int CLUSTER = 2, GROUP_M = 8;
};
// V20 in 2-CTA clusters: the pair stacks along M (a 256x256 cluster tile) and shares its B
// tile by multicast, as V15 does for V14 (a branch of V20).
struct V46 : V20 {
  static constexpr int CLUSTER = 2, GROUP_M = 8;
};
// V21 on 192x128 tiles: three consumer warpgroups (m64n128k16 each) beside the producer, a
// 40 KiB stage, four of them, and a 16 KiB C buffer per consumer warpgroup (a branch of V21).
struct V44 : V21 {
  static constexpr int BM = 192, THREADS = 512, STAGES = 4;
  static constexpr bool BORROW = false;
};
// V24 for a B whose rows are not 16-byte aligned: a row-major B staged by ResidueMaps and
// shifted into the ring by the producer warpgroup (staged.cuh), two staged k-tiles beside a
// 4-stage ring; element stores of C.
struct V34 : V24 {
  static constexpr int STAGES = 4;
  static constexpr int STAGING = 2 * 64 * (BN + 8) * 2;
};
// V24 on 128x64 tiles (m64n64k16): a 24 KiB stage, eight of them; the partial tile half V24's.
struct V33 : V24 {
  static constexpr int BN = 64, STAGES = 8;
  static constexpr int RED_LD = BN + 8;
};
struct V25 : V24 {  // V24's split on V20's 128x256 tile and 4-stage ring (a branch of V20)
  static constexpr int BN = 256, STAGES = 4;
  static constexpr int RED_LD = BN + 8;
};

// V25 with the partial tiles summed through global memory (split_global.cuh) rather than in a
// cluster: S is then bounded by the SMs, not by the clusters of S a GPC holds; C is stored from
// registers by the tile's helpers, a band each.
struct V27 : V25 {
  static constexpr Schedule SCHEDULE = Schedule::split_global;
  static constexpr Store STORE = Store::registers;
  static constexpr int MAX_SPLIT = 16;
};
struct V28 : V24 {  // V24's 128x128 tile with V27's split through global memory (a branch of V24)
  static constexpr Schedule SCHEDULE = Schedule::split_global;
  static constexpr Store STORE = Store::registers;
  static constexpr int MAX_SPLIT = 16;
};
// Stream-K (stream_k.cuh): groups of a block per row of tiles, one block per SM, each group an
// equal run of the k-tiles of the columns of tiles; the tiles that runs share are summed through
// global memory as in V27 / V28.
struct V29 : V28 {  // on V28's 128x128 tile and 6-stage ring
  static constexpr Schedule SCHEDULE = Schedule::stream_k;
};
struct V30 : V27 {  // on V27's 128x256 tile and 4-stage ring
  static constexpr Schedule SCHEDULE = Schedule::stream_k;
};
// V20 under the Hybrid schedule (hybrid.cuh): whole tiles in V20's rounds, then the tiles of the
// last partial round split along K, the shares summed through global memory and stored by V20's
// TMA-store epilogue (a branch of V20).
struct V31 : V20 {
  static constexpr Schedule SCHEDULE = Schedule::hybrid;
  static constexpr bool BALANCE = false;
};
// V31 on 128x192 tiles (m64n192k16): a 40 KiB stage, five of them, C stored in three 64x64 boxes
// through three slots (a branch of V31).
struct V32 : V31 {
  static constexpr int BN = 192, STAGES = 5;
  static constexpr int C_PIECE = 1, C_SLOTS = 3;
};

// The fp32 rungs on the tensor cores (sgemm_v13, v14, v22: V13's persistent 128x256 tile and
// register epilogue; sgemm_v23, v24: V24's split) over operands packed into tf32 planes where the
// tensor cores cannot read them in place (tf32.cuh). A k-tile is 32 fp32 deep, so a stage holds
// the same bytes and the same four wgmma k-steps as the 16-bit rungs'.
struct S13 : V13 {  // fp32 operands truncated to tf32: one plane, one product
  static constexpr int PLANES = 1;
  static constexpr int PROMOTE = 0;  // k-tiles per partial tile added in fp32 (0: none)
  static constexpr bool A_REGS = false;  // an MN-major A read through registers (else packed)
};
// S13 with an MN-major A read through registers (mainloop.cuh: consume_tf32_regs), so that no
// layout but a column-major A with a row-major B needs a packing pass (tf32.cuh: launch_tf32).
struct S22 : S13 {
  static constexpr bool A_REGS = true;
};
// V24's split (a cluster per tile, K shared among its blocks, partial tiles summed through
// DSMEM) over S22's operands: tf32 for few tiles and a long K.
struct S23 : V24 {
  static constexpr int PLANES = 1, PROMOTE = 0;
  static constexpr bool A_REGS = true;
};
// V24's split over S14's three planes and promotion: 3xTF32 for few tiles and a long K, whose
// shares are also blocked sums of K (S14 sums K in one pass).
struct S24 : V24 {
  static constexpr int PLANES = 3, PROMOTE = 3;
  static constexpr bool A_REGS = false;
};
// 3xTF32: three planes per operand, three products per k; the products of each 32-deep chunk (its
// three k-tiles) added into the accumulators in round-to-nearest fp32 (PROMOTE), which needs a
// second 64xBN register tile per consumer: 128x128 tiles (V21's tile and 6-stage ring), not
// 128x256.
struct S14 : S13 {
  static constexpr int PLANES = 3;
  static constexpr int PROMOTE = 3;
  static constexpr int BN = 128, STAGES = 6;
};

}  // namespace fastgemm::hopper
