// hgemm_v07_multistage — a 4-stage cp.async pipeline, one barrier per K-step.
//
// What changed since v06: a ring of 4 shared-memory buffers. Three tiles are always in flight;
// each step waits only for the oldest (cp.async.wait_group STAGES-2), passes one barrier, refills
// the buffer the previous step finished with, and multiplies.
// Why faster: three tiles of math cover the global latency instead of one, and each step has one
// barrier; the tensor cores see a steady stream of ready tiles.
// What limits it: a 128x128 tile per 4 warps reuses each loaded byte only 128 times and issues
// ldmatrix.x2 for B (half-width); fragment addresses are recomputed (row, chunk, swizzle) for every
// load; 64 KiB of shared memory per block.
// Shapes: as v02; sm_80+.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v07_multistage, fastgemm::hgemm::V07)

FASTGEMM_REGISTER_HGEMM(hgemm_v07_multistage, {7, 80, 0, 16, "mma_sync", "cp_async", "registers",
    "hgemm_v06_cp_async", false,
    "4-stage cp.async pipeline, one barrier per K-step"})
