// hgemm_v05_reg_prefetch — register-prefetched double buffer (the Turing path, no cp.async).
//
// What changed since v04: two shared-memory buffers. At the top of a K-step the 16-byte loads of
// the NEXT tile are issued into registers; the warps then multiply the current tile, and only
// afterwards store the registers into the other buffer. One barrier per K-step instead of two.
// Why faster: global-memory latency is covered by a whole tile of mma instead of stalling every
// warp; half the barriers.
// What limits it: the prefetched chunks occupy registers for the whole K-step (8 per operand per
// thread) and the copy still passes through the register file (LDG + STS); only one tile is in
// flight. This is the best that sm_75 can do (no cp.async); the registry runs it from sm_75.
// Shapes: as v02.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v05_reg_prefetch, fastgemm::hgemm::V05)

FASTGEMM_REGISTER_HGEMM(hgemm_v05_reg_prefetch, {5, 75, 0, 16, "mma_sync", "ldg", "registers",
    "hgemm_v04_swizzle", false,
    "register-prefetched double buffer (Turing path, no cp.async)"})
