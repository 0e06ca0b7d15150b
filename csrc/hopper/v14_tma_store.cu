// hgemm_v14_tma_store — epilogue through shared memory (stmatrix) and a TMA store.
//
// What changed since v13: each consumer warpgroup converts its 64x256 accumulators to fp16/bf16
// (alpha and beta applied in fp32; C is read only when beta != 0) and writes them with stmatrix
// into a 32 KiB shared-memory buffer laid out as four 64x64 boxes with the 128-byte swizzle
// (conflict-free), then one thread hands the buffer to the TMA unit (cp.async.bulk.tensor store,
// clipped at the matrix edges) and the warpgroup goes straight on to its next tile; the store
// drains in the background and is only awaited (bulk wait_group.read) before the buffer is
// reused one tile later. The ring drops to 3 stages to make room for the two C buffers.
// (Parts: epilogue.cuh's TmaStore and store_tile, persistent.cuh's persistent_tma_store_gemm.)
// Why faster: 16 stmatrix and 4 bulk stores per warpgroup and tile instead of 128 scattered
// 4-byte global stores, and the tensor cores restart on the next tile while C is written.
// What limits it: each block loads its own A and B tiles from L2 (no multicast between
// neighbouring blocks), and the two consumer warpgroups work on the same tile in lockstep, so
// their epilogues still do not overlap their own math.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v14_tma_store, V14) {
  persistent_tma_store_gemm<T, V14, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v14_tma_store, V14)

FASTGEMM_REGISTER_HGEMM(hgemm_v14_tma_store, {14, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v13_persistent", false,
    "epilogue through shared memory (stmatrix) and TMA stores; C read only when beta != 0"})
