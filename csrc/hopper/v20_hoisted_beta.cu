// hgemm_v20_hoisted_beta — v19 whose epilogue tests beta == 0 once per launch instead of once per
// pair of outputs.
//
// What changed since v19: store_tile reads C only when beta != 0, and v14-v19 test that inside
// the unrolled store loop, 64 times per warpgroup and tile. ptxas keeps each test as a branch
// around the C read (address arithmetic, bounds tests, two 16-bit loads), so the epilogue is a
// chain of short basic blocks: every cvt, stmatrix and multiply waits behind a branch and nothing
// is scheduled across them. Here the kernel tests beta once and runs one of two instantiations of
// the epilogue: with beta == 0 the loop is straight-line code (FMUL, F2FP, STSM, no branch, no C
// address); beta != 0 runs v19's loop unchanged.
// Why faster: the epilogue is the part of every tile during which the tensor cores idle (both
// consumer warpgroups finish a tile together), so its length is lost throughput, most at small K
// per tile. H200, fp16, against v19 in the same process, median of seven experiment runs (this
// kernel, and a variant that also skips the multiply when alpha == 1, level with it): +1.9% at
// 2048^3, +2.9% at 4096^3 (range -0.8% to +5%), +1.0% at 8192^3, +2.0% at 4096x14336x4096. Final
// run (all rungs): +1.9% / +1.2% / +0.9% at 2048^3 / 4096^3 / 8192^3 and -4.6% at
// 4096x14336x4096 (v19 measured high there in both full runs); 103.0% / 101.0% / 101.6% / 99.7%
// of cuBLAS.
// What limits it: the epilogue itself (convert, stmatrix, one TMA store per piece) still runs
// while the tensor cores idle. Deferring the stmatrix under the next tile's first k-tile (packed
// outputs held in 64 registers; it fits in 215 registers without spills) measured 1-2% slower:
// see benchmarks/NOTES.md. beta != 0 runs at v19's speed.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 256, STAGES = 4, GROUP_M = 16, THREADS = 384;
constexpr int C_PIECE = 2, C_SLOTS = 2;
using Shape =
    TmaStoreShape<BLOCK_M, BLOCK_N, STAGES, GROUP_M, 1, C_PIECE, C_SLOTS, true, true, true>;
constexpr int SMEM = Shape::SMEM;

FASTGEMM_HOPPER_KERNEL(hgemm_v20_hoisted_beta, __launch_bounds__(THREADS, 1)) {
  tma_store_gemm<T, Shape, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc, alpha,
                                               beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v20_hoisted_beta, persistent_grid(a, BLOCK_M, BLOCK_N, name),
                             1, true, true)
