// hgemm_v46_cluster_128x256 — v20's 128x256 tiles in 2-CTA clusters that share B by multicast.
//
// What changed since v20: blocks run in clusters of two that compute vertically adjacent
// 128x256 tiles (a 256x256 cluster tile) and so read the same 256x64 B tile at every k-step;
// each producer loads its own A tile and one half of the B tile, multicast into both blocks (v15
// did the same for v14). Everything else is v20's.
// Why it pays: where B's rows are 16- but not 128-byte aligned, each 128-byte box row of B
// straddles two L2 lines and costs about twice the requests; sharing B halves them (v45 does the
// same for v21's tiles on outputs of one round).
// What limits it: the pair advances in lockstep; a cluster tile of 256 rows pads a bottom edge
// that is not a multiple of 256; SMs of a GPC whose free count is odd stay idle.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v46_cluster_128x256, V46, __cluster_dims__(V46::CLUSTER, 1, 1)) {
  persistent_tma_store_gemm<T, V46, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v46_cluster_128x256, V46)

FASTGEMM_REGISTER_HGEMM(hgemm_v46_cluster_128x256, {46, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v20_hoisted_beta", true,
    "v20's 128x256 tiles in 2-CTA clusters sharing B by multicast, for a B whose rows are off "
    "128 bytes"})
