// hgemm_v27_split_k_global — v25's split of K on v20's 128x256 tile, with the partial tiles
// summed through global memory instead of a cluster's shared memory: a branch of v25 for deep K
// on outputs of a few dozen wide tiles.
//
// What changed since v25: the reduction (split_global.cuh). The S blocks of a tile are no longer
// a cluster; each writes its fp32 partial tile to a scratch buffer of the stream and raises a
// flag, and the tile's last ceil(S / 2) blocks (its helpers) each sum a band of the tile over
// all S partial tiles in a fixed order and store it from registers; the others leave.
// Why it pays: a cluster's blocks must be resident together in one GPC, so v25 can run only as
// many clusters of S as the GPCs hold at once (on an H100, fewer than 32 clusters of 4: a 32-tile
// output such as 1024 x 1024 gets S = 3, 96 busy SMs). Through global memory S is bounded only
// by the SMs: 32 tiles x 4 = 128 blocks, each streaming its share at v20's per-SM rate, every
// share of every tile at the same K offsets (the A and B panels in flight are shared in L2 as
// in v25).
// What limits it: the partial tiles (128 KiB each) go through L2 and back, a few µs that only a
// long K share amortises (one block summing the whole tile, as this rung did first, read S - 1
// of them at one SM's L2 bandwidth; the helpers read two each); the scratch (S partial tiles per
// output tile) stays allocated per stream; C is stored from registers, two columns per store.
// The grid is kept within one block per SM so that every block is resident at once, and the next
// launch starts once all its blocks have exited, as v28's does (split_global.cuh).
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B; C row-major.
// sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_global.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_SPLIT_GLOBAL_KERNEL(hgemm_v27_split_k_global, V27)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v27_split_k_global, V27)

FASTGEMM_REGISTER_HGEMM(hgemm_v27_split_k_global, {27, 90, 90, 16, "wgmma", "tma", "split_k_global",
    "hgemm_v25_wgmma_split_k_wide", true,
    "v25's split of K with the partial tiles summed through global memory, not a cluster: S "
    "bounded by the SMs rather than by resident clusters, for deep K on a few dozen wide tiles"})
