// sgemm_v24_wgmma_tf32x3_split_k — hgemm v24's split-K on v14's 3xTF32 planes: precision="tf32x3"
// for outputs with few tiles and a long K.
//
// What changed since v14: the schedule and the epilogue, as sgemm v23 changed v22's. A block per
// 128x128 tile and share of K (up to 8 shares, a cluster per tile) streams its share of the
// packed planes through v24's ring; the products of each group of three k-tiles (a chunk's three
// planes, where the share starts on a chunk) are added into the accumulators in round-to-nearest
// fp32 (PROMOTE) as in v14, and the cluster sums the fp32 partial tiles in rank order through
// distributed shared memory (common/split_k.cuh).
// Why it pays: S times the busy SMs on few tiles; and the shares make K's sum a blocked one (S
// partial sums added at the end), as cuBLAS SGEMM's split sums are on such outputs, where v14's
// one pass over K accumulates more rounding error.
// What limits it: the packing pass (both operands into three planes, as v14); each block pays
// the ring's fill and the reduction once; a cluster's blocks must be resident together.
// Shapes: any M, N, K >= 1; fp32 operands 16-byte aligned. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "hopper/tf32.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(sgemm_v24_wgmma_tf32x3_split_k, S24) {
  static_assert(std::is_same_v<T, float> && A_KMAJOR && B_KMAJOR, "packed planes: K-major");
  split_k_gemm<T, S24, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_TF32_ENTRY_POINTS(sgemm_v24_wgmma_tf32x3_split_k, S24)

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v24_wgmma_tf32x3_split_k, {24, 90, 90, 16, "wgmma", "tma",
    "split_k", "sgemm_v14_wgmma_tf32x3", true,
    "v14's 3xTF32 planes with v24's split: K shared by a cluster of up to 8 blocks per 128x128 "
    "tile, partial tiles summed in distributed shared memory", "tf32x3"})
