// hgemm_v04_swizzle — XOR-swizzled shared memory (no padding, no bank conflicts).
//
// What changed since v03: rows are dense again and the 16-byte chunk index is XOR-ed with bits of
// the row index (common/swizzle.cuh — the same function for the copies that write and the
// ldmatrix that reads): each 8-row group's chunks are spread over all 8 bank-group slots.
// Why faster: conflict-free like v03 with no wasted shared memory and power-of-two row pitches;
// the swizzle is a single XOR on the chunk index.
// What limits it: latency — each K-step waits for its own global loads (copy, barrier, math,
// barrier); nothing overlaps the memory system with the tensor cores.
// Shapes: as v02.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v04_swizzle, fastgemm::hgemm::V04)

FASTGEMM_REGISTER_HGEMM(hgemm_v04_swizzle, {4, 75, 0, 16, "mma_sync", "ldg", "registers",
    "hgemm_v03_padded", false,
    "XOR-swizzled shared memory, no padding, no bank conflicts"})
