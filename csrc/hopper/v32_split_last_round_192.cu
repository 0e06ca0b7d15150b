// hgemm_v32_split_last_round_192 — v31 on 128x192 tiles: a branch of v31 for outputs whose
// 128x192 tiles fill the SMs' rounds better than 128x256 ones.
//
// What changed since v31: the tile narrows from 128x256 to 128x192 (each consumer warpgroup
// issues m64n192k16 wgmmas), a stage from 48 to 40 KiB, so the ring holds five, and the epilogue
// stores a warpgroup's 64x192 slab as three 64x64 boxes through three slots. The schedule is
// v31's: whole rounds of tiles, then the last partial round split along K.
// Why it pays: the tile count, not the work, decides how many SMs a round keeps busy. 512 x 6144
// is 96 tiles of 128x256 (96 of 132 SMs for the whole K loop) but 128 tiles of 128x192; 768 x
// 4096 is 96 or 132. Where the narrower tile's count comes closer to a multiple of the SMs, the
// same work spreads over more of them.
// What limits it: each byte brought into shared memory feeds 77 FLOP instead of 85, and the
// epilogue is a larger share of each tile, so where both tile counts fill their rounds equally
// v31 (or v20) stays ahead; widths that are not a multiple of 192 leave the last column of tiles
// partly empty (4096 = 21 x 192 + 64).
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/hybrid.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_HYBRID_KERNEL(hgemm_v32_split_last_round_192, V32)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v32_split_last_round_192, V32)

FASTGEMM_REGISTER_HGEMM(hgemm_v32_split_last_round_192, {32, 90, 90, 16, "wgmma", "tma",
    "tma_store", "hgemm_v31_split_last_round", true,
    "v31 on 128x192 tiles: for outputs whose narrower tiles fill the SMs' rounds better"})
