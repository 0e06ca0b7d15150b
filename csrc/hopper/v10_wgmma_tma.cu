// hgemm_v10_wgmma_tma — the first Hopper rung: wgmma with operands in shared memory, loaded by TMA.
//
// What changed since the mma.sync ladder (v01-v09): the copy engine and the tensor cores do the
// work the threads did. One thread issues TMA box copies (cp.async.bulk.tensor) of a 128x64 tile
// of A and a 64x128 tile of B straight from global into shared memory, with the hardware's
// 128-byte swizzle; they complete on an mbarrier (transaction bytes) that the warpgroup waits on.
// The warpgroup (128 threads) then issues wgmma.mma_async m64n128k16 — each one a 64x128x16
// product on operands read from shared memory through descriptors, no ldmatrix, no fragments in
// registers — 8 per k-tile (two 64-row halves x four 16-deep steps).
// Why faster: no per-thread address arithmetic or copy instructions; wgmma is the only path to
// Hopper's full tensor-core rate (mma.sync tops out near 2/3 of it); tails are free (TMA fills
// out-of-bounds elements with zeros).
// What limits it: nothing overlaps — the warpgroup waits for each tile's copy, then the copy
// waits for the math (one stage), and one warpgroup per 128x128 tile leaves the SM mostly idle
// (a few warps, little latency hiding).
// Shapes: any M, N, K >= 1; 16-byte aligned operands (TMA needs 16-byte aligned addresses and
// row pitches); both layouts of A and B (MN-major operands use wgmma's transposed mode). sm_90a.
#include "hopper/one_stage.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v10_wgmma_tma, V10) {
  one_stage_gemm<T, V10, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v10_wgmma_tma, V10)

FASTGEMM_REGISTER_HGEMM(hgemm_v10_wgmma_tma, {10, 90, 90, 16, "wgmma", "tma", "registers",
    "hgemm_v09_raster", false,
    "wgmma m64n128k16 from shared memory, TMA loads (128-byte swizzle) on an mbarrier; "
    "one stage, one warpgroup per 128x128 tile"})
