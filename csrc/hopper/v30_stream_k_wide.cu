// hgemm_v30_stream_k_wide — v29's stream-K schedule on v27's 128x256 tile: a branch of v27.
//
// What changed since v27: the schedule, as v29 changes v28's (stream_k.cuh): groups of a block
// per row of tiles, each group an equal run of the k-tiles across column boundaries, instead of
// S blocks per tile. 96 tiles of 128x256 (512 x 6144) fill 96 of 132 SMs under v20's persistent schedule and
// cannot be split under v27's (S = 2 would need 192 blocks); here all 132 work.
// Why it pays: as v29, and the wide tile does twice the math per byte brought into shared memory,
// so where both tiles give each block runs of tens of k-tiles this one runs closer to the tensor
// cores' rate.
// What limits it: a cut tile's partial is 128 KiB, twice v29's, so a cut costs twice as much;
// the ring is 4 stages deep, not 6.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B; C row-major.
// sm_90a.
#include "hopper/rungs.h"
#include "hopper/stream_k.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_SCRATCH_KERNEL(hgemm_v30_stream_k_wide, V30, stream_k_gemm)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v30_stream_k_wide, V30)

FASTGEMM_REGISTER_HGEMM(hgemm_v30_stream_k_wide, {30, 90, 90, 16, "wgmma", "tma",
    "split_k_global", "hgemm_v27_split_k_global", true,
    "v29's stream-K schedule on v27's 128x256 tile"})
