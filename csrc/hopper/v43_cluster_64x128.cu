// hgemm_v43_cluster_64x128 — v21 on 64x128 tiles in 2-CTA clusters that share B by multicast.
//
// What changed since v21: a block computes a 64x128 tile with one consumer warpgroup
// (m64n128k16) beside its producer warpgroup, and two blocks stacked along M form a cluster
// whose 128x128 tile is v21's. As in v15, each producer loads its own 64x64 A tile and one half
// of the 128x64 B tile, multicast into both blocks, and a stage is refilled only once both
// blocks' consumers have released it. Eight 24 KiB stages; C leaves through one TMA-store buffer
// of two 64x64 slots. Everything else (persistent grouped schedule over the cluster tiles,
// balanced grid, programmatic dependent launch, beta == 0 tested once per tile) is v21's.
// Why it pays: an output of at most SMs/2 tiles of 128x128 keeps at least half of the SMs idle
// on v21's tiles; on smaller tiles it is bound by the L2 -> SM traffic, every block streaming
// its A and B tiles over the whole of K. Here twice as many blocks as v21's tiles work, and a
// block brings in 16 KiB per k-tile instead of the 24 KiB of an unshared 64x128 tile.
// What limits it: past SMs/2 cluster tiles the clusters take a second round, where v20's and
// v21's larger tiles (more math per byte, one round) are faster; on few tiles with a long K the
// split rungs keep more SMs busy; one consumer warpgroup a block, so its epilogue is not hidden
// behind another warpgroup's mainloop; the two blocks of a cluster advance in lockstep; a
// cluster tile of 128 rows wastes work on a bottom edge that is not a multiple of 128.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v43_cluster_64x128, V43, __cluster_dims__(V43::CLUSTER, 1, 1)) {
  persistent_tma_store_gemm<T, V43, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v43_cluster_64x128, V43)

FASTGEMM_REGISTER_HGEMM(hgemm_v43_cluster_64x128, {43, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v21_narrow_tile", true,
    "v21 on 64x128 tiles in 2-CTA clusters sharing B by multicast: twice the blocks, a third "
    "less L2 traffic per block, for mid-size problems"})
