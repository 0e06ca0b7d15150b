// hgemm_v03_padded — padded shared memory.
//
// What changed since v02: every stored row gets 16 bytes of padding (80-byte rows for BK = 32), so
// consecutive rows start 5 bank-group slots apart: the 8 rows an ldmatrix reads land in 8
// different slots.
// Why faster: ldmatrix runs without replays (its 4-way conflicts are gone). The 16-byte stores of a
// quarter-warp (two 64-byte rows) still meet 2-way where row r+1 wraps onto row r's first slot.
// What limits it: 25% more shared memory per tile (fewer stages or blocks fit later), padding
// breaks the power-of-two row pitch that cheap address arithmetic likes, and copy and math still
// alternate behind two barriers per K-step.
// Shapes: as v02.
#include "hgemm/rungs.h"
#include "registry.h"

FASTGEMM_HGEMM_RUNG(hgemm_v03_padded, fastgemm::hgemm::V03)

FASTGEMM_REGISTER_HGEMM(hgemm_v03_padded, {3, 75, 0, 16, "mma_sync", "ldg", "registers",
    "hgemm_v02_vectorized", false,
    "shared-memory rows padded by 16 bytes: conflict-free ldmatrix"})
