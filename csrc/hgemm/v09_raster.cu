// hgemm_v09_raster — threadblock swizzle (L2-friendly rasterisation of the output tiles).
//
// What changed since v08: the grid is 1-D and block b computes the output tile found by walking
// groups of 8 tile rows column by column (hgemm.cuh, block_tile), instead of row by row.
// Why faster: the blocks resident at one time share 8 row-panels of A and a narrow band of B
// column-panels, so most tile loads hit in L2 instead of DRAM; it matters once A and B together
// outgrow the L2 (4096^3 fp16 and up).
// What limits it: mma.sync's ceiling on Hopper (about 2/3 of wgmma's), and C is written straight
// from registers (4-byte stores, rows 16 apart per warp) rather than staged for 16-byte stores.
// Shapes: as v02; sm_80+.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v09_raster, fastgemm::hgemm::V09)

FASTGEMM_REGISTER_HGEMM(hgemm_v09_raster, {9, 80, 0, 16, "mma_sync", "cp_async", "registers",
    "hgemm_v08_tuned", false,
    "threadblock swizzle: L2-friendly order of the output tiles"})
