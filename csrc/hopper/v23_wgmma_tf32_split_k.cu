// sgemm_v23_wgmma_tf32_split_k — hgemm v24's split-K on v22's tf32 operands: precision="tf32"
// for outputs with few tiles and a long K.
//
// What changed since v22: the schedule and the epilogue, as v24 changed v21's. v22 gives each SM
// whole 128x256 tiles, so an output of fewer tiles than SMs (1024 x 1024: 32) leaves most SMs
// idle however long K is. v23 has a block per 128x128 tile and share of K (up to 8 shares, a
// cluster per tile): each block streams its share through v24's ring (32-deep fp32 k-tiles), the
// MN-major operand read through registers as in v22, and the cluster sums its fp32 partial
// tiles in rank order through distributed shared memory (common/split_k.cuh), which also stores
// a transposed problem's C column-major. One launch, no workspace, the same bits on every call.
// Why it pays: S times the busy SMs on few tiles, each share at v22's arithmetic intensity.
// What limits it: a cluster's blocks must be resident in one GPC together (S <= 8 and fewer on
// many tiles); each block pays the ring's fill and the reduction once, which short shares do not
// amortise.
// Accuracy: as v22's (TF32); the split's partial tiles are summed in fp32 round-to-nearest.
// Shapes: any M, N, K >= 1; fp32 operands 16-byte aligned. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "hopper/tf32.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(sgemm_v23_wgmma_tf32_split_k, S23) {
  static_assert(std::is_same_v<T, float> && B_KMAJOR, "tf32: B K-major, A either (registers)");
  split_k_gemm<T, S23, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_TF32_ENTRY_POINTS(sgemm_v23_wgmma_tf32_split_k, S23)

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v23_wgmma_tf32_split_k, {23, 90, 90, 16, "wgmma", "tma",
    "split_k", "sgemm_v22_wgmma_tf32_regs", true,
    "v22's tf32 operands with v24's split: K shared by a cluster of up to 8 blocks per 128x128 "
    "tile, partial tiles summed in distributed shared memory", "tf32"})
