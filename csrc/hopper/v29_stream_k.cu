// hgemm_v29_stream_k — v28's 128x128 tile and hand-off through global memory under a stream-K
// schedule: a branch of v28 for outputs of too few tiles to fill the SMs evenly.
//
// What changed since v28: the schedule (scheduler.cuh: StreamK, stream_k.cuh). v28 gives each
// tile S equal shares of K, one block each, so the blocks number tiles x S: 48 tiles on 132 SMs
// split 2 ways leave 36 SMs idle, and a third share would need 144. Here the grid is one block per
// SM and the problem's k-tiles, tile after tile, are cut into as many equal runs: each block
// computes the same number of k-tiles, the runs cross tile boundaries where they fall, and a tile
// cut between blocks is summed by the block that computes its last k-tile (in block order, so the
// bits repeat from call to call).
// Why it pays: every SM does the same work whatever the tile count, so a problem of 48 or 96
// tiles runs at the rate of 132 SMs instead of 96; a block's first segment is the only one it
// can wait for, and it computes the segment others wait for before anything else.
// What limits it: a tile cut between blocks costs a partial tile (64 KiB) written and read
// through L2 per cut and a wait for the earlier block's segment; runs of a few k-tiles (many
// tiles and short K) pay that against little work, where a persistent or split schedule wins.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B; C row-major.
// sm_90a.
#include "hopper/rungs.h"
#include "hopper/stream_k.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_SCRATCH_KERNEL(hgemm_v29_stream_k, V29, stream_k_gemm)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v29_stream_k, V29)

FASTGEMM_REGISTER_HGEMM(hgemm_v29_stream_k, {29, 90, 90, 16, "wgmma", "tma", "split_k_global",
    "hgemm_v28_split_k_global_narrow", true,
    "v28's 128x128 tile under stream-K: a block per SM, each an equal run of the problem's "
    "k-tiles across tile boundaries, cut tiles summed in block order through global memory"})
