// hgemm_v02_vectorized — 16-byte, unrolled global -> shared copies.
//
// What changed since v01: each thread moves whole 16-byte chunks (8 elements: one LDG.128 and one
// STS.128) instead of single elements, in a fully unrolled loop of 4 chunks per operand per tile.
// Why faster: 8x fewer load/store instructions for the same bytes and fully used 32-byte sectors;
// the copy no longer dominates the issue slots between the mma bursts.
// What limits it: shared-memory bank conflicts — rows of 64 bytes put the 8 rows of every
// ldmatrix into 2 bank groups (4-way conflicts), and copy and math still alternate behind two
// barriers per K-step.
// Shapes: any M, N, K >= 1 (element-exact zero fill at the edges); 16-byte aligned operands
// (addresses and leading dimensions multiples of 8 elements).
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v02_vectorized, fastgemm::hgemm::V02)

FASTGEMM_REGISTER_HGEMM(hgemm_v02_vectorized, {2, 75, 0, 16, "mma_sync", "ldg", "registers",
    "hgemm_v01_mma", false,
    "16-byte unrolled global->shared copies"})
