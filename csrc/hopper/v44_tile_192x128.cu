// hgemm_v44_tile_192x128 — v21 on 192x128 tiles: three consumer warpgroups per block.
//
// What changed since v21: a block computes a 192x128 tile with three consumer warpgroups
// (m64n128k16 each, rows 64(w-1)..64w-1) beside its producer warpgroup, so 512 threads whose
// registers setmaxnreg splits 32 (producer) / 152 (consumers: 64 accumulators each). A stage
// holds a 192x64 A tile and a 128x64 B tile, 40 KiB; four stages, and each consumer warpgroup
// stores C through its own 16 KiB buffer of two 64x64 slots (no borrowed stage). Everything else
// (persistent grouped schedule, balanced grid, programmatic dependent launch, beta == 0 tested
// once per tile) is v21's.
// Why it pays: SMs take whole rounds of tiles, and a mid-size output whose 128x128 tiles number
// a little more than the SMs (133-200 on 132 SMs) runs two rounds on v21, while its 192x128
// tiles (two thirds as many) fit one: 1.5 tiles of work per SM instead of 2. The taller tile
// also brings in 192 + 128 operand rows per k for 192 x 128 products, against 128 + 128 for
// v21's 128 x 128: 1.2x the math per byte.
// What limits it: a tile of 192 rows is mostly padding on outputs of few rows, and its count
// leaves a partial last round on many shapes where v20's or v21's fit better (the choice is
// auto's wave model); four stages (40 KiB each) are a shallower ring than v21's six; the
// producer warpgroup's 32 registers (ptxas keeps a word of its tile loop in local memory).
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v44_tile_192x128, V44) {
  persistent_tma_store_gemm<T, V44, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v44_tile_192x128, V44)

FASTGEMM_REGISTER_HGEMM(hgemm_v44_tile_192x128, {44, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v21_narrow_tile", true,
    "v21 on 192x128 tiles, three consumer warpgroups: two thirds of v21's tiles, one round "
    "where v21's take two on some mid-size outputs"})
