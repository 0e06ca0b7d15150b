// hgemm_v45_cluster_128x128 — v21's 128x128 tiles in 2-CTA clusters that share B by multicast.
//
// What changed since v21: blocks run in clusters of two that compute vertically adjacent 128x128
// tiles (a 256x128 cluster tile) and so read the same 128x64 B tile at every k-step. As in v15,
// each producer loads its own A tile and one half of the B tile, multicast into both blocks, and
// a stage is refilled only once the consumers of both blocks have released it (warpgroup 2's
// borrowed stage included, so the peer's multicast waits for its stores to have read it). The
// persistent grid is capped at the clusters the GPU holds at once; groups of 8 cluster tiles.
// Everything else (6-stage ring, TMA-store epilogue, balanced grid, programmatic dependent
// launch, beta == 0 tested once per tile) is v21's.
// Why it pays: where B's rows are 16- but not 128-byte aligned (N, or K for a column-major B,
// not a multiple of 64), each 128-byte box row of B straddles two L2 lines and costs about
// twice the requests of an aligned one; sharing B halves those requests (and brings in 24 KiB
// per block and k-tile instead of 32). With B's rows on 128 bytes the saved traffic alone is
// not worth the pairing: there it is no faster than v21.
// What limits it: the two blocks advance in lockstep (the slower sets the pace of both); a
// cluster tile of 256 rows wastes more work on a bottom edge that is not a multiple of 256, and
// its tile count (half of v21's cluster tiles) leaves a different last round; SMs of a GPC whose
// free count is odd stay idle.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v45_cluster_128x128, V45, __cluster_dims__(V45::CLUSTER, 1, 1)) {
  persistent_tma_store_gemm<T, V45, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v45_cluster_128x128, V45)

FASTGEMM_REGISTER_HGEMM(hgemm_v45_cluster_128x128, {45, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v21_narrow_tile", true,
    "v21's 128x128 tiles in 2-CTA clusters sharing B by multicast: a quarter less L2 traffic "
    "per block, for outputs of about one round of tiles"})
