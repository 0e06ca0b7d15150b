// hgemm_v15_cluster_multicast — 2-CTA thread-block clusters sharing B through TMA multicast.
//
// What changed since v14: blocks run in clusters of two (__cluster_dims__(2, 1, 1)) that compute
// vertically adjacent 128x256 tiles — one 256x256 tile per cluster — and so read the same
// 256x64 B tile at every k-step. Each block's producer loads its own A tile and one half of the
// B tile with a multicast TMA copy (cp.async.bulk.tensor ... multicast::cluster) that lands in
// both blocks' shared memory and signals both blocks' `full` barriers. A stage may be refilled
// only when both blocks have read it, so each consumer warpgroup releases it in both blocks
// (mbarrier.arrive on the peer's barrier through its cluster address), and `empty` counts four
// arrivals. Cluster barriers order the barrier initialisation before any remote signal and keep
// a block from exiting while its peer may still signal it. The persistent grid is capped at the
// clusters the GPU can hold at once (cudaOccupancyMaxActiveClusters).
// Why faster: per k-step a cluster pulls 2 x 16 KiB of A + 32 KiB of B from L2 instead of
// 2 x 48 KiB: a third less L2 -> SM traffic, so the loads of a stage land sooner when every SM
// streams at once, and the L2 serves fewer duplicate requests.
// What limits it: the two blocks now advance in lockstep (the slower one sets the pace of
// both); the cluster tile (256 rows) wastes more work on the bottom edge when M is not a
// multiple of 256; SMs left over when a GPC's free SMs are odd stay idle.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v15_cluster_multicast, V15, __cluster_dims__(V15::CLUSTER, 1, 1)) {
  persistent_tma_store_gemm<T, V15, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v15_cluster_multicast, V15)

FASTGEMM_REGISTER_HGEMM(hgemm_v15_cluster_multicast, {15, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v14_tma_store", true,
    "2-CTA clusters: the B tile split between the pair and multicast by TMA into both"})
