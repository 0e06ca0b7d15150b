// hgemm_v08_tuned — tuned tiles, ldmatrix.x4 for both operands, XOR pointer stepping.
//
// What changed since v07: a 128x256 block tile with BK = 64 over 8 warps (2x4, each still 64x64)
// in 3 stages (144 KiB of shared memory) — 85 instead of 64 FLOP per byte brought from L2, and
// half the barriers per FLOP; B fragments for two n8 tiles in one ldmatrix.x4; and each lane's
// fragment addresses computed once and stepped along K by an XOR (K-major tiles: the k-step flips
// bits of the swizzled chunk index) or an add (MN-major tiles: 16 rows down keeps the swizzle
// pattern) instead of re-deriving row, chunk and swizzle for every ldmatrix.
// Why faster: with 128x128 tiles the L2 -> shared traffic at this ladder's rate approaches the
// L2's bandwidth; the larger tile cuts it by a quarter, and the inner loop is now only ldmatrix and
// mma (32 ldmatrix per 128 mma per warp and tile in SASS).
// What limits it: mma.sync itself — ncu shows the tensor pipe short of full with "wait" (the
// fixed issue interval between HMMAs) the top stall (figures: benchmarks/NOTES.md); with 8 warps
// per SM (230 registers each) there are only two warps per scheduler to cover barriers and
// ldmatrix latency. The pre-Hopper
// tensor-core path peaks near 2/3 of the wgmma rate on Hopper.
// Shapes: as v02; sm_80+ (144 KiB of shared memory per block: sm_80/86/89/90 all have it... see
// the launcher's shared-memory opt-in).
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v08_tuned, fastgemm::hgemm::V08)

FASTGEMM_REGISTER_HGEMM(hgemm_v08_tuned, {8, 80, 0, 16, "mma_sync", "cp_async", "registers",
    "hgemm_v07_multistage", false,
    "128x256 block tile, ldmatrix.x4 for A and B, XOR pointer stepping"})
