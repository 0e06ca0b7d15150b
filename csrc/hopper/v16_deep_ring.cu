// hgemm_v16_deep_ring — a 4-stage ring, bought by storing C in 8 KiB pieces; a balanced grid.
//
// What changed since v14: the epilogue's shared-memory buffer shrinks from 32 KiB to 16 KiB per
// consumer warpgroup — two 64x64 slots that the four boxes of a 64x256 output slab take in turn
// (stmatrix one box, TMA-store it as its own bulk group, and before reusing a slot wait until at
// most one younger store still reads shared memory) — and the 32 KiB saved make room for a
// fourth ring stage (4 x 48 + 2 x 16 KiB = 224 KiB). The persistent grid is balanced: as few
// blocks as keep the number of tile rounds (512 tiles at 4096^3: 128 blocks x 4 rounds instead
// of 132 blocks of which 16 do one tile less). Blocks are single CTAs, as in v14: with the deeper
// ring, v15's 2-CTA clusters (a branch of v14) measured slower than independent blocks — the
// pair advances in lockstep, and the L2 traffic that multicast saves is not what limits this
// kernel (benchmarks/NOTES.md).
// Why faster: the producer runs up to four k-tiles ahead instead of three, which covers the
// latency of L2 and DRAM when every SM streams at once and refills the ring during the epilogue;
// most at sizes of about one tile per block, where the ring's fill is not amortised.
// What limits it: the two consumer warpgroups finish a tile together, so the tensor cores idle
// during the epilogue (conversion, stmatrix, store issue); under this load the GPU's power limit,
// not the datasheet clock, sets the ceiling (benchmarks/NOTES.md, run-to-run spread), and cuBLAS
// meets it too.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v16_deep_ring, V16) {
  persistent_tma_store_gemm<T, V16, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v16_deep_ring, V16)

FASTGEMM_REGISTER_HGEMM(hgemm_v16_deep_ring, {16, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v14_tma_store", false,
    "4-stage ring (C stored in 8 KiB pieces), balanced persistent grid, single-CTA blocks"})
