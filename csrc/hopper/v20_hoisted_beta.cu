// hgemm_v20_hoisted_beta — v19 whose epilogue tests beta == 0 once per tile instead of once per
// pair of outputs.
//
// What changed since v19: store_tile reads C only when beta != 0, and v19 tests that inside the
// unrolled store loop, 64 times per warpgroup and tile. ptxas keeps each test as a branch
// around the C read (address arithmetic, bounds tests, two 16-bit loads), so the epilogue is a
// chain of short basic blocks: every cvt, stmatrix and multiply waits behind a branch and nothing
// is scheduled across them. Here the epilogue tests beta once per tile, outside the loop, and
// runs one of two instantiations of it: with beta == 0 the loop is straight-line code (FMUL,
// F2FP, STSM, no branch, no C address); beta != 0 runs v19's loop unchanged.
// Why faster: the epilogue is the part of every tile during which the tensor cores idle (both
// consumer warpgroups finish a tile together), so its length is lost throughput, most at small K
// per tile. (Config: V20 in rungs.h, HOIST_BETA, read by epilogue.cuh's TmaStore.)
// What limits it: the epilogue itself (convert, stmatrix, one TMA store per piece) still runs
// while the tensor cores idle. Deferring the stmatrix under the next tile's first k-tile (packed
// outputs held in 64 registers; it fits in 215 registers without spills) measured slower:
// see benchmarks/NOTES.md. beta != 0 runs at v19's speed.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v20_hoisted_beta, V20) {
  persistent_tma_store_gemm<T, V20, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v20_hoisted_beta, V20)

FASTGEMM_REGISTER_HGEMM(hgemm_v20_hoisted_beta, {20, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v19_dependent_launch", false,
    "v19 with beta == 0 tested once per tile: a straight-line epilogue loop without a "
    "branch or C read per output pair"})
