// hgemm_v06_cp_async — cp.async global -> shared copies (sm_80+).
//
// What changed since v05: the copies are cp.async.cg (LDGSTS): 16 bytes go from global to shared
// memory without a register round trip, zero-filling what lies past the operand's edge. Still two
// buffers: tile t+1 is issued before tile t is multiplied and awaited (cp.async.wait_group 0)
// before the barrier that ends the step.
// Why faster: no registers held across the math (more room for accumulators), no STS issue slots,
// and the copy runs in the background of the mma.
// What limits it: a single tile in flight: if one tile of math is shorter than the global latency
// the warps still wait at the end of every step.
// Shapes: as v02; sm_80+.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v06_cp_async, fastgemm::hgemm::V06)

FASTGEMM_REGISTER_HGEMM(hgemm_v06_cp_async, {6, 80, 0, 16, "mma_sync", "cp_async", "registers",
    "hgemm_v05_reg_prefetch", false,
    "cp.async global->shared copies, double buffer"})
