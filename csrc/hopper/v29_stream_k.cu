// hgemm_v29_stream_k — v28's 128x128 tile and hand-off through global memory under a stream-K
// schedule: a branch of v28 for outputs of too few tiles to fill the SMs evenly.
//
// What changed since v28: the schedule (scheduler.cuh: StreamK, stream_k.cuh). v28 gives each
// tile S equal shares of K, one block each, so the blocks number tiles x S: 48 tiles on 132 SMs
// split 2 ways leave 36 SMs idle, and a third share would need 144. Here the grid is as many
// groups of one block per row of tiles as fit one block per SM, and the k-tiles of the columns
// of tiles, column after column, are cut into one equal run per group: every block computes the
// same number of k-tiles, runs cross column boundaries where they fall, and a tile cut between
// groups is summed by the block that computes its last k-tile (in group order, so the bits
// repeat from call to call). The blocks of a group cut their column at the same k-tiles at the
// same time, so each k-tile of B is read once.
// Why it pays: every SM does the same work whatever the tile count, so a problem of 48 or 96
// tiles runs at the rate of 132 SMs instead of 96; a block's first segment is the only one it
// can wait for, and it computes the segment others wait for before anything else.
// What limits it: a tile cut between groups costs a partial tile (64 KiB) written and read
// through L2 per cut and a wait for the earlier group's segment; runs of a few k-tiles (many
// tiles and short K) pay that against little work, where a persistent or split schedule wins;
// the groups cover whole rows of tiles, so 132 SMs hold 132 / tiles_m groups (a remainder idles).
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
    "v28's 128x128 tile under stream-K: groups of a block per row of tiles, each group an "
    "equal run of the k-tiles across column boundaries, cut tiles summed in group order through "
    "global memory"})
